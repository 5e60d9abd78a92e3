"""Compare view (MemUse 4.3): two configurations or runs side by side - profiles, outcome classes,
yields and efficiency, cost and delivery forms, and paired per-task outcomes: the tasks B gained
or lost against A and whether any entry was acted on, beneficial or harmful in them."""

from __future__ import annotations

from typing import Literal

import pandas as pd

from .. import charts as figures
from ..store.app import compare as store_compare
from ..store.judging import resolve_judge
from .common import Connection, Runs, ViewModel, runs
from .display import NumberFormat, format_number
from .overview import CLASS_COLUMNS, RATE_FORMATS, Level, overview
from .report import Report, report

Change = Literal["gained", "lost", "same", "unknown"]
"""How a task's resolve rate moved from A to B (`unknown`: a side has no outcome for it)."""
PairFilter = Literal["changed", "all"]
PAIR_FILTERS: tuple[PairFilter, ...] = ("changed", "all")
"""Which paired tasks the table lists: those whose outcome changed, or all."""


def options(all_runs: Runs, level: Level) -> list[str]:
    """What can be compared at a level: configurations, or runs."""
    return all_runs.configs if level == "config" else all_runs.run_ids


def default_pair(con: Connection, level: Level, choices: list[str]) -> tuple[str, str]:
    """The pair a bare Compare page opens on: the two groups (of `choices`, at least two) that
    share the most tasks, ties in `choices` order, so that the paired tasks are not empty when
    some pair has tasks in common; the first two when none does."""
    tasks = store_compare.group_tasks(con, level)
    best, shared = (choices[0], choices[1]), 0
    for i, x in enumerate(choices):
        for y in choices[i + 1 :]:
            n = len(tasks.get(x, set()) & tasks.get(y, set()))
            if n > shared:
                best, shared = (x, y), n
    return best


def change(resolved_a: float | None, resolved_b: float | None) -> Change:
    """`gained` when B resolves the task more often than A, `lost` when less often (MemUse 4.3);
    `unknown` when either side has no outcome for the task (never counted as a loss or a gain)."""
    if resolved_a is None or resolved_b is None or pd.isna(resolved_a) or pd.isna(resolved_b):
        return "unknown"
    return "gained" if resolved_b > resolved_a else "lost" if resolved_b < resolved_a else "same"


class Comparison(ViewModel):
    """Two groups (A and B) compared."""

    level: Level
    """Configurations or runs."""
    a: str
    """Group A."""
    b: str
    """Group B."""
    judge: str = "rules"
    """The one judge whose verdicts both sides read (titles name it)."""
    profiles: dict[str, dict[str, float | None]]
    """Entry-share profiles of the groups that have profiled spans (Figure 3)."""
    metrics: pd.DataFrame
    """Spans, outcome classes, triage rates, yields and efficiency: metric, A, B, B − A."""
    report: Report
    """Cost, outcomes and delivery forms of A and B."""
    pairs: pd.DataFrame
    """Tasks attempted by both: task_id, resolved_a, resolved_b, acted_a, acted_b, beneficial_b,
    harmful_b, episode_a, episode_b, change."""
    why_unprofiled: list[str] = []
    """Why A or B has no profile (no spans, or none judged yet)."""

    @property
    def built(self) -> bool:
        """Profiles exist (the context is built and judged)."""
        return bool(self.profiles)

    def radar(self) -> str:
        """The two profiles on Figure 3's log radial scale (escaped HTML)."""
        return figures.profile_radar(self.profiles)

    def heatmap(self) -> str:
        """The two profiles as a table shaded on the same scale (escaped HTML)."""
        return figures.profile_heatmap(self.profiles)

    def listed(self, which: PairFilter) -> pd.DataFrame:
        """The paired tasks to list: all, or those whose outcome changed."""
        return self.pairs if which == "all" else self.pairs[self.pairs["change"].isin(["gained", "lost"])]

    def listed_display(self, which: PairFilter) -> pd.DataFrame:
        """`listed` for display: each side's resolve rate as a percentage, "—" when that side has
        no outcome for the task (unknown, never 0%)."""
        out = self.listed(which).copy()
        for c in ("resolved_a", "resolved_b"):
            if c in out.columns:
                out[c] = [format_number(v, "percent") for v in out[c].astype(object)]
        return out

    def changed(self, kind: Change) -> pd.DataFrame:
        """Paired tasks whose outcome changed this way."""
        return self.pairs[self.pairs["change"] == kind] if len(self.pairs) else self.pairs

    def count(self, kind: Change, column: str | None = None) -> int:
        """Tasks that changed this way (and, with `column`, where that flag is true)."""
        rows = self.changed(kind)
        return int(rows[column].fillna(False).astype(bool).sum()) if column else len(rows)

    @property
    def unprofiled(self) -> list[str]:
        """Why A or B has no profile on the radar (one sentence each)."""
        return [w for w in self.why_unprofiled if w]

    def metrics_display(self) -> pd.DataFrame:
        """`metrics` for display: every value formatted as its metric is (counts, rates,
        yields, tokens), missing values as "—"."""
        counts: dict[str, NumberFormat] = {str(c): "count" for c in CLASS_COLUMNS if c != "group"}
        fmts = counts | RATE_FORMATS
        out = self.metrics.copy().astype(object)
        for col in (self.a, self.b, "B − A"):
            out[col] = [
                format_number(v, fmts.get(str(m), "decimal"), signed=col == "B − A")
                for m, v in zip(self.metrics["metric"], self.metrics[col])
            ]
        return out

    def form_pivot_formats(self, pivot: pd.DataFrame) -> dict[str, NumberFormat]:
        """Every share column of `form_pivot` as a percentage."""
        return {str(c): "percent" for c in pivot.columns if str(c).endswith((" · " + self.a, " · " + self.b))}

    def form_pivot(self) -> pd.DataFrame:
        """Token and beneficial shares per form and route, one column per group."""
        forms = self.report.form_table()
        if not len(forms):
            return forms
        fd = forms.pivot_table(
            index=["form", "route"],
            columns="group",
            values=["token_share", "beneficial_share"],
            aggfunc="sum",
        )
        fd.columns = [f"{m} · {g}" for m, g in fd.columns]
        return fd.reset_index()

    def episodes_of(self, task_id: str) -> tuple[str, str] | None:
        """One episode of A and one of B for a paired task."""
        row = self.pairs[self.pairs["task_id"] == task_id]
        if not len(row):
            return None
        return str(row.iloc[0]["episode_a"]), str(row.iloc[0]["episode_b"])


def compare(con: Connection, level: Level, a: str, b: str, judge: str | None = None) -> Comparison:
    """Compare group A with group B (configurations or runs), both from one judge's verdicts
    (`judge`, default `store.judging.resolve_judge`)."""
    judge = resolve_judge(con, judge)
    all_runs = runs(con)

    def runs_of(x: str) -> list[str]:
        return all_runs.runs_of(x) if level == "config" else [x]

    ra, rb = runs_of(a), runs_of(b)
    ov = overview(con, ra + rb, level, judge=judge)  # type: ignore[arg-type]
    label = {g.label: (g.config if level == "config" else str(g.run_id)) for g in ov.groups}
    profiles = {label[k]: v for k, v in ov.profiles.items() if label[k] in (a, b)}
    table = ov.triage_table()
    if len(table):
        table["group"] = [label[g] for g in table["group"]]
        table = table.set_index("group")
    cols = [c for c in table.columns] if len(table) else []

    def value(g: str, c: str) -> object:
        return table.loc[g, c] if g in table.index else None

    metrics = pd.DataFrame({"metric": cols, a: [value(a, c) for c in cols], b: [value(b, c) for c in cols]})
    metrics["B − A"] = [
        None if x is None or y is None or pd.isna(x) or pd.isna(y) else y - x  # type: ignore[operator]
        for x, y in zip(metrics[a], metrics[b])
    ]
    rep = report(con, ra + rb, runs_as_groups=[a, b] if level == "run" else (), judge=judge)
    if level == "config":
        keep = {a, b}
        rep = Report(
            judge=rep.judge,
            outcomes=[o for o in rep.outcomes if o.group in keep],
            forms=[f for f in rep.forms if f.group in keep],
            costs=[c for c in rep.costs if c.group in keep],
        )
    pairs = store_compare.paired_outcomes(con, ra, rb, judge=judge)
    if len(pairs):
        pairs["change"] = [change(x, y) for x, y in zip(pairs["resolved_a"], pairs["resolved_b"])]
    else:
        pairs["change"] = pd.Series(dtype=str)
    why = [
        w
        for w in ov.unprofiled()
        if w.split(":", 1)[0] in {g.label for g in ov.groups if label[g.label] in (a, b)}
    ]
    return Comparison(
        level=level,
        a=a,
        b=b,
        judge=judge,
        profiles=profiles,
        metrics=metrics,
        report=rep,
        pairs=pairs,
        why_unprofiled=why,
    )
