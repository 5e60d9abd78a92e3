"""Files that belong to a batch folder (`ingest.batch`): the ids the folder chose for them.

An importer converts a trajectory file as if it were alone (a run per file, `<run>:<id>/ep`).
When the file is a member of a batch, its events are rewritten on the way to the store: the
file's own `run` event is dropped (the batch wrote its run once), each episode gets the run, id
and position the batch planned for its task, and the exit status or submission a trajectory lacks
comes from the harness's side files. The plan is process-wide state (like `--config`), shipped to
import worker processes with the observer state (`ingest.parallel`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..events import EpisodeEnd, EpisodeStart, Event, RunEvent
from ..store.writer import EventWriter
from .base import Importer
from .grown import prefix_of
from .ids import IdRewriter, distinct_ids


@dataclass(frozen=True)
class BatchMember:
    """What the batch decided for one of its files."""

    run_id: str
    episodes: dict[str, list[str]]
    """Task id -> episode ids for that task's episodes in this file, in file order."""
    positions: dict[str, int]
    exit_statuses: dict[str, str] = field(default_factory=dict)
    submissions: dict[str, str] = field(default_factory=dict)


_MEMBERS: dict[str, BatchMember] = {}
"""Resolved file path -> its batch plan, while a batch is being imported."""


def _key(path: Path) -> str:
    return str(Path(path).resolve())


def member_of(path: Path) -> BatchMember | None:
    return _MEMBERS.get(_key(path)) if _MEMBERS else None


@contextmanager
def using_members(members: dict[Path, BatchMember]) -> Iterator[None]:
    """Within the block, these files import as members of their batch."""
    old = dict(_MEMBERS)
    _MEMBERS.clear()
    _MEMBERS.update({_key(p): m for p, m in members.items()})
    try:
        yield
    finally:
        _MEMBERS.clear()
        _MEMBERS.update(old)


def member_state() -> dict[str, BatchMember]:
    """The current plan (for worker processes)."""
    return dict(_MEMBERS)


def set_member_state(state: dict[str, BatchMember]) -> None:
    _MEMBERS.clear()
    _MEMBERS.update(state)


def as_member(
    m: BatchMember, pairs: Iterable[tuple[int | None, Event]]
) -> Iterator[tuple[int | None, Event]]:
    """A file's events with the batch's run, episode ids and positions (see module docstring)."""
    rw = IdRewriter()
    used: dict[str, int] = {}
    tasks: dict[str, str] = {}  # new episode id -> task id
    for line, ev in pairs:
        t = type(ev)
        if t is RunEvent:
            continue
        if t is EpisodeStart:
            assert isinstance(ev, EpisodeStart)
            planned = m.episodes.get(ev.task_id) or []
            k = used.get(ev.task_id, 0)
            used[ev.task_id] = k + 1
            new = planned[k] if k < len(planned) else f"{m.run_id}/{ev.task_id}~x{k + 1}"
            rw.rename_episode(ev.episode_id, new)
            rw.rename_run(ev.run_id, m.run_id)
            ev.position = m.positions.get(ev.task_id, ev.position)
            tasks[new] = ev.task_id
        ev = rw.apply(ev)
        if t is EpisodeEnd:
            assert isinstance(ev, EpisodeEnd)
            task = tasks.get(ev.episode_id)
            if task is not None:
                if ev.exit_status is None:
                    ev.exit_status = m.exit_statuses.get(task)
                if ev.submission is None:
                    ev.submission = m.submissions.get(task)
        yield line, ev


def prepared_events(imp: Importer, path: Path, writer: EventWriter) -> Iterator[tuple[int | None, Event]]:
    """An importer's events for one file as they go to the store: batch ids applied (when the file
    is a batch member), then ids that collide with another file's renamed (`ids.distinct_ids`).
    `writer` is the file's `EventWriter` (it knows the stored ids and this file's so far)."""
    # `store_events` (the native log): the hot event types as `events.fast` structs
    pairs: Iterable[tuple[int | None, Event]] = getattr(imp, "store_events", imp.events)(path)
    m = member_of(path)
    if m is not None:
        pairs = as_member(m, pairs)
    grown = prefix_of(path)
    if grown is not None:  # `ingest.grown`: the lines after the earlier import only
        pairs = ((n, ev) for n, ev in pairs if n is None or n > grown.lines)
    return distinct_ids(
        pairs,
        writer.has_episode,
        writer.has_run,
        derived_ids=bool(getattr(imp, "derived_ids", False)),
        file_episodes=set(grown.episodes) if grown else None,
        file_runs=dict(grown.runs) if grown else None,
    )
