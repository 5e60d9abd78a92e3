"""Shared pieces of the page views: the view-model base, the connection views read from, runs and
the sidebar scope, the judge choice, item keys, an episode's header and one step's full text.

Every view function takes an open connection from the store (`Connection`, read-only for reads)
as its first argument and returns a view model; the app opens and caches (pages/_reads.py), a
test or a script opens with `memuse_core.store.connect(path, read_only=True)`. How values read on
a page (number formats, missing values, outcome words) is `display`; the pages still import its
names from here (`__all__`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, field_validator

from ..metrics.render import judge_label
from ..store import StoreError, StoreLocked, connect
from ..store import db_path as resolve_db_path
from ..store.app import Connection
from ..store.app import episodes as store_episodes
from ..store.app import runs as store_runs
from ..store.app._sql import quiet
from ..vocab import JUDGE_KINDS, EpisodeOutcome, JudgeKind
from ..wording import plural
from .display import display_name, display_table, formatted, judge_title, memory_note, outcome_text

Scope = list[str] | None
"""Run ids a page is limited to (None: every run)."""

__all__ = [
    "Connection",
    "Scope",
    "StoreError",
    "StoreLocked",
    "resolve_db_path",
    # how values read (`display`), imported from here by the pages
    "display_name",
    "display_table",
    "formatted",
    "judge_title",
    "memory_note",
    "outcome_text",
]


def open_read(db: str | os.PathLike[str], timeout: float) -> Connection:
    """A read-only connection for views (raises StoreLocked after `timeout` s, StoreError)."""
    con = connect(db, read_only=True, timeout=timeout)
    quiet(con)
    return con


def open_write(db: str | os.PathLike[str], timeout: float) -> Connection:
    """A short read-write connection for the app's writes (annotations, case studies)."""
    return connect(db, timeout=timeout)


def build_demo_database(
    path: Path, episodes: int | None = None, progress: Callable[[float, str], None] | None = None
) -> None:
    """First run of the app: generate the deterministic demo corpus into `path`, build its
    evaluation context and judge it with the offline rules judge. `progress(fraction, text)`."""
    from ..build import build_store
    from ..demo import DemoPlan, build_demo
    from ..judge.result import JudgeSettings
    from ..judge.runner import run_batch

    say = progress or (lambda f, t: None)
    plan = DemoPlan(episodes=episodes) if episodes else DemoPlan()
    total = max(plan.tasks_per_run * len(plan.configs) * plan.runs, 1)
    done = [0]

    def gen(stage: str, n: int) -> None:
        if stage == "generate":
            done[0] += n
            say(min(0.4, 0.4 * done[0] / total), "Generating demo episodes…")

    say(0.0, f"First run: generating the demo corpus into {path}…")
    build_demo(path, plan, progress=gen)
    say(0.45, "Building the evaluation context (spans, credit windows)…")
    build_store(
        path, progress=lambda d, t: say(0.45 + 0.25 * d / max(t, 1), "Building the evaluation context…")
    )
    say(0.7, "Judging spans with the offline rules judge…")
    run_batch(
        path,
        JudgeSettings(judge="rules"),
        progress=lambda s: say(
            min(1.0, 0.7 + 0.3 * s.judged / max(s.planned, 1)),
            f"Judging spans with the rules judge… {s.judged}/{s.planned}",
        ),
    )


class ViewModel(BaseModel):
    """Base of every view model: field docstrings kept, tables and figures allowed as fields."""

    model_config = ConfigDict(arbitrary_types_allowed=True, use_attribute_docstrings=True)


class JudgeChoice(ViewModel):
    """Which judge's verdicts the pages read: one at a time, never mixed (MemUse 3.5)."""

    default: JudgeKind
    """The judge used when the user picks none: the LLM judge where it has accepted verdicts,
    else the rules judge (`store.judging.resolve_judge`)."""
    spans: dict[str, int] = {}
    """Judge kind -> spans with an accepted verdict of that judge."""

    def label(self, judge: str | None) -> str:
        """How a choice reads in the picker: "default: LLM judge (120 spans)", "rules judge (…)"."""
        j = judge or self.default
        text = f"{judge_label(j)} ({plural(self.spans.get(j, 0), 'span')})"
        return f"default: {text}" if judge is None else text

    def effective(self, judge: str | None) -> JudgeKind:
        """The judge a page reads for a choice (None: the default)."""
        return judge if judge in JUDGE_KINDS else self.default  # type: ignore[return-value]


def build_complete(con: Connection) -> bool:
    """The evaluation context of every stored episode is built (`store.build_state`): a page that
    misses a span or a context then blames the request (a wrong id), not the build."""
    from ..store.build_state import build_state

    return build_state(con).complete


def judge_choice(con: Connection) -> JudgeChoice:
    """The default judge and every judge's verdict count (the sidebar's "Verdicts of" picker)."""
    from ..store.judging import judges_with_verdicts, resolve_judge

    return JudgeChoice(default=resolve_judge(con), spans=judges_with_verdicts(con))


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of a frame as dicts, with missing values (NaN, NaT, NA) as None."""
    if not len(df):
        return []
    return df.astype(object).where(df.notna(), None).to_dict("records")  # type: ignore[return-value]


# ---- Item keys (the `item` deep-link parameter) ---------------------------------------------

ITEM_SEP = "::"
"""Separator of namespace and item id in an item key (`<namespace>::<item_id>`)."""


def item_key(namespace: Any, item_id: Any) -> str:
    """The key of a memory item: `<namespace>::<item_id>`."""
    return f"{namespace}{ITEM_SEP}{item_id}"


def split_item(key: str) -> tuple[str, str]:
    """(namespace, item_id) of an item key; a bare id is in the `default` namespace."""
    ns, _, iid = (key or "").partition(ITEM_SEP)
    return (ns, iid) if iid else ("default", ns)


# ---- Runs and the sidebar scope -------------------------------------------------------------


class RunRow(ViewModel):
    """One recorded run."""

    run_id: str
    """Run id."""
    config: str
    """Memory configuration of the run (`(none)` when not recorded)."""
    label: str | None = None
    """Free label of the run."""
    agent: str | None = None
    """Agent that produced the run."""
    model: str | None = None
    """Agent model."""
    episodes: int = 0
    """Episodes recorded in the run."""
    resolve_rate: float | None = None
    """Share of episodes with a harness result that resolved their task."""


class Runs(ViewModel):
    """Every run of the store, ordered by configuration and run id."""

    rows: list[RunRow]
    """The runs."""

    @property
    def configs(self) -> list[str]:
        """Configurations, sorted."""
        return sorted({r.config for r in self.rows})

    @property
    def run_ids(self) -> list[str]:
        """Run ids in order."""
        return [r.run_id for r in self.rows]

    def runs_of(self, config: str) -> list[str]:
        """Run ids of one configuration."""
        return [r.run_id for r in self.rows if r.config == config]

    def config_of(self, run_id: str) -> str | None:
        """Configuration of a run (None when unknown)."""
        return next((r.config for r in self.rows if r.run_id == run_id), None)


def runs(con: Connection) -> Runs:
    """Every run with its configuration and counts."""
    return Runs(rows=[RunRow.model_validate(r) for r in records(store_runs.list_runs(con))])


class ScopeChoice(ViewModel):
    """What the sidebar offers and what every page is then limited to."""

    run_options: list[str]
    """Runs offered in the run picker: those of the picked configurations (all when none)."""
    runs: list[str]
    """Picked runs that are still offered."""
    effective: Scope
    """Runs every page is limited to (None: every run)."""


def scope_choice(all_runs: Runs, configs: Sequence[str], picked: Sequence[str]) -> ScopeChoice:
    """The sidebar scope: picked runs win; picked configurations alone mean all their runs."""
    options = [r.run_id for r in all_runs.rows if not configs or r.config in configs]
    kept = [r for r in picked if r in options]
    if kept:
        effective: Scope = kept
    elif configs:
        effective = options
    else:
        effective = None
    return ScopeChoice(run_options=options, runs=kept, effective=effective)


# ---- One episode ----------------------------------------------------------------------------


class EpisodeHeader(ViewModel):
    """What identifies an episode: run, configuration, task, outcome and size."""

    episode_id: str
    """Episode id."""
    run_id: str
    """Run of the episode."""
    config: str | None = None
    """Memory configuration of its run."""
    task_id: str | None = None
    """Task id."""
    repo: str | None = None
    """Repository of the task."""
    outcome: EpisodeOutcome
    """Harness result of the episode."""
    exit_status: str | None = None
    """Agent's exit status."""
    n_steps: int = 0
    """Completed agent steps."""
    position: int | None = None
    """Position of the episode in its run."""
    task: str = ""
    """Task text (recorded, untrusted)."""
    reference: str | None = None
    """Reference solution text, when recorded."""

    @property
    def repository(self) -> str:
        """The repository for a header: its name, or "unknown repository" when none was recorded
        (real runs often carry no repository)."""
        return f"repo {self.repo}" if self.repo else "unknown repository"


def episode_header(con: Connection, episode_id: str) -> EpisodeHeader | None:
    """An episode's header (None when the episode is not in the store)."""
    row = store_episodes.episode_header(con, episode_id)
    if row is None:
        return None
    row["n_steps"] = row.get("n_steps") or 0
    return EpisodeHeader.model_validate(row)


def episode_choices(con: Connection, runs: Scope = None, with_deliveries: bool = False) -> list[str]:
    """Episode ids in scope in run order, for a picker (optionally only those with deliveries)."""
    return store_episodes.episode_ids(con, runs, with_deliveries)


class ToolCall(ViewModel):
    """A tool call the model made in its response."""

    name: str
    """Tool name."""
    arguments: str
    """Arguments as recorded (text)."""


class ToolResult(ViewModel):
    """What a tool returned (or one observation when no tool results were recorded). A recording
    may leave out the tool's name, arguments or output (SWE-agent and some mini-swe-agent results
    carry no name): those read as empty, and pages show an empty name as "—"."""

    name: str = ""
    """Tool name (`observation` for a plain observation; empty when not recorded)."""
    arguments: str = ""
    """Arguments the tool ran with."""
    output: str = ""
    """Output text (recorded, untrusted)."""
    exit_code: int | None = None
    """Exit code, when recorded."""

    @field_validator("name", "arguments", "output", mode="before")
    @classmethod
    def _unrecorded_is_empty(cls, v: Any) -> Any:
        return "" if v is None else v


class StepText(ViewModel):
    """The full text of one agent step, loaded on demand."""

    episode_id: str
    """Episode of the step."""
    step: int
    """Step number (1-based)."""
    action: str | None = None
    """Short action summary."""
    tools: str | None = None
    """Tools the step used."""
    exit_code: int | None = None
    """Exit code of the step's command."""
    response: str = ""
    """The model's response text."""
    reasoning: str | None = None
    """Reasoning text the provider returned beside the response (DeepSeek `reasoning_content`,
    Responses-API reasoning summaries, Anthropic thinking blocks); None when there is none.
    Recorded and untrusted, like the response: escape it."""
    tool_calls: list[ToolCall] = []
    """Tool calls in the response."""
    results: list[ToolResult] = []
    """Tool results (or observations)."""

    def as_text(self) -> str:
        """Response, tool calls and results as one plain text (for an excerpt)."""
        parts = [self.response]
        parts += [f"$ {c.name}: {c.arguments}" for c in self.tool_calls]
        parts += [f"[{r.name or 'result'} exit {r.exit_code}]\n{r.output}" for r in self.results]
        return "\n\n".join(parts)


def step_text(con: Connection, episode_id: str, step: int) -> StepText | None:
    """One step's response, tool calls and results (None when the step does not exist)."""
    raw = store_episodes.step_text(con, episode_id, step)
    if raw is None:
        return None
    return StepText(
        episode_id=episode_id,
        step=step,
        action=raw["action"],
        tools=raw["tools"],
        exit_code=raw["exit_code"],
        response=raw["response"] or "",
        reasoning=raw.get("reasoning"),
        tool_calls=[ToolCall(name=str(n or ""), arguments=str(a or "")) for n, a in raw["tool_calls"]],
        results=[ToolResult.model_validate(r) for r in raw["results"]],
    )
