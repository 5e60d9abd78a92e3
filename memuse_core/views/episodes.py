"""Episodes view: the episode table of a scope, filtered by text search, outcome, the outcome
classes of its spans, repository and task id."""

from __future__ import annotations

import pandas as pd

from ..store.app import episodes as store_episodes
from ..vocab import EPISODE_OUTCOMES, OUTCOME_CLASSES, EpisodeOutcome, OutcomeClass
from . import links
from .common import Connection, Scope, ViewModel
from .display import MEMORY_TEXT, MISSING, OUTCOME_CHOICE_TEXT, display_table, outcome_text

ROW_LIMIT = 20000
"""Episodes listed at most."""
OUTCOME_CHOICES: tuple[EpisodeOutcome, ...] = EPISODE_OUTCOMES
"""Episode outcomes a user can filter by."""
OUTCOME_CHOICE_LABELS: dict[str, str] = OUTCOME_CHOICE_TEXT
"""How each outcome choice reads in the filter."""
DISPLAY_COLUMNS: dict[str, str] = {
    "harness_status": "harness",
    "exit_status": "exit status",
    "memory_state": "memory",
}
"""Columns renamed for display."""
SPAN_CLASS_CHOICES: tuple[OutcomeClass, ...] = OUTCOME_CLASSES
"""Span outcome classes a user can require an episode to have."""


class EpisodeFilters(ViewModel):
    """What the Episodes page filters by (every filter narrows; empty means no filter)."""

    search: str = ""
    """Case-insensitive text searched in the task and the trajectory (actions, responses,
    observations)."""
    outcomes: list[EpisodeOutcome] = []
    """Keep episodes with one of these outcomes."""
    span_classes: list[OutcomeClass] = []
    """Keep episodes with at least one span of each of these outcome classes (A.4.1)."""
    repos: list[str] = []
    """Keep episodes of these repositories."""
    task: str = ""
    """Keep episodes whose task id contains this text (case-insensitive)."""


class EpisodeList(ViewModel):
    """The filtered episode table."""

    rows: pd.DataFrame
    """One row per episode: episode_id, config, run_id, repo, task_id, outcome, harness_status
    (None: no harness report set the outcome), exit_status (None: not recorded), steps,
    deliveries, memory_state, spans, span_classes (outcome classes of its spans),
    delivered_tokens (estimated), cost_usd, input_tokens, output_tokens."""

    def display(self) -> pd.DataFrame:
        """The rows as the Episodes table shows them: an unknown outcome, harness status or exit
        status is "—" (never "failed" or "None"), the memory state in words ("No memory was
        delivered"), columns named for reading."""
        out = self.rows.copy()
        if len(out):
            out["outcome"] = [outcome_text(v) for v in out["outcome"]]
            for c in ("harness_status", "exit_status"):
                out[c] = [MISSING if v is None or v != v else str(v) for v in out[c].astype(object)]
            out["memory_state"] = [MEMORY_TEXT.get(str(v), MISSING) for v in out["memory_state"]]
        return out.rename(columns=DISPLAY_COLUMNS)

    @property
    def truncated(self) -> bool:
        """More episodes match than are listed."""
        return len(self.rows) >= ROW_LIMIT


def episode_list(
    con: Connection, runs: Scope = None, filters: EpisodeFilters | None = None, judge: str | None = None
) -> EpisodeList:
    """Episodes of the scope that pass every filter, in run order; span outcome classes as one
    judge's verdicts see them (`judge`, default `store.judging.resolve_judge`)."""
    f = filters or EpisodeFilters()
    rows = store_episodes.episode_table(
        con,
        runs,
        search=f.search or None,
        outcomes=f.outcomes,
        span_classes=f.span_classes,
        repos=f.repos,
        task_contains=f.task or None,
        limit=ROW_LIMIT,
        judge=judge,
    )
    return EpisodeList(rows=rows)


class EpisodeTable(ViewModel):
    """The Episodes page's table as it is drawn: computed once per (scope, filters, judge) and
    cached as a whole, so a rerun of the page (a visit, a sort, a selection) does no per-row work
    on thousands of episodes."""

    table: pd.DataFrame
    """`EpisodeList.display()` with a first column `timeline` (the in-app link to each episode's
    timeline) and recorded text neutralised (`display_table`)."""
    episode_ids: list[str]
    """Episode id of each row, in table order (a selected row's episode)."""
    truncated: bool
    """More episodes match than are listed (ROW_LIMIT)."""


def episode_table(
    con: Connection, runs: Scope = None, filters: EpisodeFilters | None = None, judge: str | None = None
) -> EpisodeTable:
    """`episode_list` made ready for the page: display columns, the timeline link of each row and
    neutralised text."""
    episodes = episode_list(con, runs, filters, judge)
    view = episodes.display()
    view.insert(0, "timeline", [links.url("timeline", episode=e) for e in view["episode_id"]])
    return EpisodeTable(
        table=display_table(view),
        episode_ids=[str(e) for e in view["episode_id"]],
        truncated=episodes.truncated,
    )


def repositories(con: Connection, runs: Scope = None) -> list[str]:
    """Repositories of the episodes in scope (the repository filter's choices)."""
    return store_episodes.episode_repos(con, runs)
