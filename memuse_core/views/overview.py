"""Overview view (MemUse 3.5-3.6, Figures 3 and 5, A.4-A.6): six-axis entry-share profiles, span
outcome classes with triage rates, yields and token efficiency, episode coverage and recurring
items per configuration or run; the spans behind any of those numbers; task outcomes, delivery
forms and cost."""

from __future__ import annotations

from typing import Any, Literal, get_args

import pandas as pd

from .. import charts as figures
from .. import metrics
from ..metrics import GroupStats
from ..metrics.render import judge_label
from ..store.app import outcomes as store_outcomes
from ..store.app import runs as store_runs
from ..store.app._sql import missing_tables
from ..store.judging import judges_with_verdicts, resolve_judge
from ..vocab import AXES, OUTCOME_CLASSES, TRIAGE_PRECEDENCE, Axis, JudgeKind, OutcomeClass
from ..wording import plural
from .common import Connection, Scope, ViewModel, runs
from .display import NumberFormat

Level = Literal["config", "run"]
"""Grouping of the Overview and Compare pages: per configuration or per run."""
LEVELS: tuple[Level, ...] = get_args(Level)
AXIS_TITLES: dict[str, str] = figures.AXIS_TITLES
"""Display title of each profile axis."""
DRILL_LIMIT = 500
"""Spans listed behind a number at most."""
COVERAGE = ("profiled", "relevant", "beneficial", "harmful")
"""Episode-coverage shares of the overview (A.4.2)."""
CLASS_COLUMNS = ("group", "spans", "profiled spans", *OUTCOME_CLASSES, "N triage")
"""Columns of the outcome-class counts table."""
RATE_FORMATS: dict[str, NumberFormat] = {
    **{f"{t} rate": "percent" for t in TRIAGE_PRECEDENCE},
    "benefit /100 spans": "decimal",
    "harm /100 spans": "decimal",
    "token efficiency (ben./M tok)": "decimal",
    "est. delivered tokens": "tokens",
}
"""Columns of the rates, yields and efficiency table and how each number is shown."""
COVERAGE_FORMATS: dict[str, NumberFormat] = {
    "episodes": "count",
    **{f"{c} episodes": "percent" for c in COVERAGE},
    "recurring items": "count",
    "relevant entries from recurring items": "percent",
    "relevance coverage without recurring": "percent",
}
"""How the coverage table's numbers are shown."""
BUILD_HOWTO = "`memuse build` (evaluation context), then `memuse judge` (verdicts)"
"""How to build a store whose context is missing, as the Overview says it."""


class Group(ViewModel):
    """One configuration (or run) of the overview."""

    label: str
    """Display name: the configuration, or `<config> · <run>`."""
    config: str
    """Configuration."""
    run_id: str | None = None
    """Run (None for a configuration pooled over its runs)."""
    stats: GroupStats
    """Profiles, outcome classes, triage rates, yields, efficiency, coverage and recurring items."""
    with_memory: int = 0
    """Episodes of the group that received memory (at least one recorded delivery)."""
    not_built: int = 0
    """Of those, episodes whose evaluation context is not built yet (`memuse build` not run)."""


class Overview(ViewModel):
    """The overview of a scope at one level, from one judge's verdicts."""

    level: Level
    """Grouping of `groups`."""
    judge: JudgeKind = "rules"
    """The one judge whose verdicts every number reads (default: the LLM judge where it has
    accepted verdicts, else the rules judge); every table and chart title names it."""
    judges: dict[str, int] = {}
    """Judge kind -> spans with its verdicts in the store (what the page's judge selector offers)."""
    groups: list[Group]
    """Groups in order."""

    @property
    def spans(self) -> int:
        """Spans in scope."""
        return sum(g.stats.spans for g in self.groups)

    @property
    def configs(self) -> list[str]:
        """Configurations in scope, sorted."""
        return sorted({g.config for g in self.groups})

    @property
    def profiles(self) -> dict[str, dict[str, float | None]]:
        """Mean entry shares per axis of every group with profiled spans (Figure 3)."""
        return {
            g.label: {a: getattr(g.stats.profile, a) for a in AXES}
            for g in self.groups
            if g.stats.profiled_spans > 0
        }

    def title(self, what: str) -> str:
        """A table or chart title that names the judge: "Entry-share profiles (rules judge)"."""
        return f"{what} ({judge_label(self.judge)})"

    def radar(self) -> str:
        """Figure 3: the profiles on a log radial scale (escaped HTML; the page's
        heading names the judge)."""
        return figures.profile_radar(self.profiles)

    def heatmap(self) -> str:
        """The profiles as a table shaded on the same scale (escaped HTML)."""
        return figures.profile_heatmap(self.profiles)

    def triage_table(self) -> pd.DataFrame:
        """Per group: spans, profiled spans, span counts per outcome class, N_triage, triage rates, benefit and harm
        yields per 100 spans, token efficiency and estimated delivered tokens (A.4.1, A.4.4)."""
        rows = []
        for g in self.groups:
            s = g.stats
            row: dict[str, Any] = {"group": g.label, "spans": s.spans, "profiled spans": s.profiled_spans}
            row |= {c: getattr(s.triage, c) for c in OUTCOME_CLASSES}
            row["N triage"] = s.n_triage
            row |= {f"{t} rate": getattr(s.triage_rates, t) for t in TRIAGE_PRECEDENCE}
            row |= {
                "benefit /100 spans": s.yields.benefit,
                "harm /100 spans": s.yields.harm,
                "token efficiency (ben./M tok)": s.token_efficiency,
                "est. delivered tokens": s.est_tokens,
            }
            rows.append(row)
        return pd.DataFrame(rows)

    def class_table(self) -> pd.DataFrame:
        """Per group: spans, profiled spans, span counts per outcome class and N_triage (A.4.1)."""
        t = self.triage_table()
        return t[list(CLASS_COLUMNS)] if len(t) else t

    def rates_table(self) -> pd.DataFrame:
        """Per group: triage rates, yields per 100 spans, token efficiency, delivered tokens."""
        t = self.triage_table()
        return t[["group", *RATE_FORMATS]] if len(t) else t

    @property
    def not_built(self) -> int:
        """Episodes in scope that received memory but whose context is not built yet."""
        return sum(g.not_built for g in self.groups)

    def empty_note(self) -> str:
        """Why the scope has no spans: its context is not built yet (and how to build it), or no
        memory reached the agent in any of its episodes (nothing to build)."""
        if self.not_built:
            return (
                f"No spans yet: {plural(self.not_built, 'episode')} in this scope received memory but their evaluation "
                f"context is not built. Run {BUILD_HOWTO}."
            )
        if not any(g.with_memory for g in self.groups):
            return "No spans in this scope: no memory was delivered in its episodes, so there is nothing to evaluate."
        return f"No spans in this scope: the evaluation context is not computed yet. Run {BUILD_HOWTO}."

    def unprofiled(self) -> list[str]:
        """Why a group has no profile on the radar, one sentence per such group (Figure 3
        profiles only spans with an accepted verdict): its context is not built yet, no memory
        was delivered in its episodes, or none of its spans has an accepted verdict yet."""
        out = []
        for g in self.groups:
            s = g.stats
            if g.not_built and s.spans == 0:
                out.append(
                    f"{g.label}: not built yet — {g.not_built:,} of its episodes received memory but the "
                    "evaluation context is not built (run memuse build, then memuse judge)."
                )
                continue
            if s.profiled_spans > 0:
                continue
            if s.spans == 0:
                out.append(f"{g.label}: no profile — no memory was delivered in its episodes (no spans).")
            else:
                out.append(
                    f"{g.label}: no profile yet — none of its {plural(s.spans, 'span')} has an accepted verdict "
                    "(run `memuse judge`)."
                )
        return out

    def coverage_table(self) -> pd.DataFrame:
        """Per group: episodes, episode-coverage shares and the recurring-item diagnostic (A.4.2)."""
        rows = []
        for g in self.groups:
            s = g.stats
            row: dict[str, Any] = {"group": g.label, "episodes": s.coverage.episodes}
            row |= {f"{c} episodes": getattr(s.coverage, c) for c in COVERAGE}
            row |= {
                "recurring items": s.recurring.recurring_items,
                "relevant entries from recurring items": s.recurring.share_from_recurring,
                "relevance coverage without recurring": s.recurring.relevance_coverage_without,
            }
            rows.append(row)
        return pd.DataFrame(rows)


def overview(
    con: Connection, runs: Scope = None, level: Level = "config", judge: JudgeKind | None = None
) -> Overview:
    """Profiles, outcome classes, yields and coverage per configuration or run, from one judge's
    verdicts (`judge`, default: the LLM judge where it has accepted verdicts, else rules)."""
    if missing_tables(con, "spans", "verdicts", "assessments"):
        return Overview(level=level, groups=[])
    chosen = resolve_judge(con, judge)
    stats = metrics.group_stats(con, runs, level, details=False, judge=chosen)
    memory: dict[tuple[str, str | None], tuple[int, int]] = {}
    for r in store_runs.memory_states(con, runs).itertuples():
        key = (str(r.config), str(r.run_id) if level == "run" else None)
        have = memory.get(key, (0, 0))
        memory[key] = (have[0] + int(r.delivered), have[1] + int(r.not_built))
    groups = [
        Group(
            label=cfg if run is None or level == "config" else f"{cfg} · {run}",
            config=cfg,
            run_id=run if level == "run" else None,
            stats=g,
            with_memory=memory.get((cfg, run if level == "run" else None), (0, 0))[0],
            not_built=memory.get((cfg, run if level == "run" else None), (0, 0))[1],
        )
        for (cfg, run), g in stats.items()
    ]
    return Overview(level=level, groups=groups, judge=chosen, judges=judges_with_verdicts(con))


# ---- Spans behind a number --------------------------------------------------------------------


class DrillDown(ViewModel):
    """The spans behind one overview number."""

    rows: pd.DataFrame
    """Spans (at most DRILL_LIMIT): span_id, episode_id, config, run_id, status, form,
    first_step, n_entries, est_tokens, outcome (class) and the six profile shares."""

    @property
    def truncated(self) -> bool:
        """More spans match than are listed."""
        return len(self.rows) >= DRILL_LIMIT


def drill_down(
    con: Connection,
    runs: Scope = None,
    *,
    config: str | None = None,
    run: str | None = None,
    outcome: OutcomeClass | None = None,
    axis: Axis | None = None,
    form: str | None = None,
    judge: JudgeKind | None = None,
) -> DrillDown:
    """Spans of the scope (narrowed to one configuration or run) with this outcome class, a
    nonzero share on this profile axis, or this delivery form, as the Overview's judge sees them
    (pass the same `judge` as the overview, so the list and the number agree)."""
    scope = runs
    if config:
        in_cfg = runs_of_config(con, config)
        scope = [r for r in (runs or in_cfg) if r in in_cfg]
    if run:
        scope = [run]
    return DrillDown(
        rows=store_outcomes.outcome_spans(con, scope, outcome, axis, form, DRILL_LIMIT, judge=judge)
    )


def runs_of_config(con: Connection, config: str) -> list[str]:
    """Run ids of one configuration."""
    return runs(con).runs_of(config)
