"""Distinct run and episode ids for every import (docs/decisions.md#re-imports-rename-instead-of-refusing).

A file whose content was imported before is skipped (`ingest_path`). Any other file gets ids that
do not collide with what the store holds, instead of a refusal:

* **Trajectory formats** (mini-swe-agent, SWE-agent, OpenHands, Letta, Reflexion) derive their ids
  from the file (`<run>:<instance>/ep`), so a second, different file of the same task would repeat
  them. A run or episode id that another file already stored is renamed `<id>~2` (`~3`, ...: the
  first free one).
* **Native event logs** name their ids themselves; an id stored by another file is still refused
  (`import each recording once`), so a re-exported log is never counted twice. Inside one file, a
  recorder restarted on the same output file writes its `run` event again and may start episodes
  under ids it used before: a repeated `run` event identical to the earlier one is dropped, a
  changed one starts a renamed run, and a repeated `episode_start` starts a renamed episode. Later
  events follow the newest definition of an id.

Renaming rewrites every id derived from a renamed one: call, delivery and search ids that begin
with a renamed episode id (or, failing that, a renamed run id) get the new prefix, so a call
`e1-c3` of episode `e1` renamed `e1~2` becomes `e1~2-c3`. A batch folder (`ingest.batch`) renames
the same way, with ids it chose for the whole folder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import cast

from ..events import (
    EpisodeEnd,
    EpisodeStart,
    Event,
    HistoryRewrite,
    MemoryChange,
    MemoryDelivery,
    MemorySearch,
    ModelCall,
    Retraction,
    RunEvent,
    ToolResultEvent,
    dump_event,
)
from ..events.fast import MODEL_OF

SUFFIX = "~"
"""Separator of a renamed id and its number (`<id>~2`)."""


def free_id(want: str, taken: Callable[[str], bool]) -> str:
    """`want` when it is free, else the first free `want~k` (k = 2, 3, ...)."""
    if not taken(want):
        return want
    k = 2
    while taken(f"{want}{SUFFIX}{k}"):
        k += 1
    return f"{want}{SUFFIX}{k}"


@dataclass
class IdRewriter:
    """Renames run and episode ids of one event stream and every id derived from them.

    `runs` and `episodes` map an id as the source writes it to the id stored; they change as the
    stream goes on (a redefinition points later events at the new id)."""

    runs: dict[str, str] = field(default_factory=dict)
    episodes: dict[str, str] = field(default_factory=dict)
    _ep_prefixes: list[tuple[str, str]] = field(default_factory=list)
    _run_prefixes: list[tuple[str, str]] = field(default_factory=list)

    def rename_run(self, old: str, new: str) -> None:
        self.runs[old] = new
        self._run_prefixes = _prefixes(self.runs)

    def rename_episode(self, old: str, new: str) -> None:
        self.episodes[old] = new
        self._ep_prefixes = _prefixes(self.episodes)

    @property
    def active(self) -> bool:
        return bool(self._ep_prefixes or self._run_prefixes)

    def run(self, rid: str | None) -> str | None:
        return self.runs.get(rid, rid) if rid is not None else None

    def episode(self, eid: str | None) -> str | None:
        return self.episodes.get(eid, eid) if eid is not None else None

    def derived(self, s: str | None) -> str | None:
        """A call, delivery or search id with a renamed episode (else run) prefix replaced."""
        if s is None:
            return None
        for prefixes in (self._ep_prefixes, self._run_prefixes):
            for old, new in prefixes:
                if s.startswith(old):
                    return new + s[len(old) :]
        return s

    def by_run(self, s: str) -> str:
        """`s` with a renamed run prefix replaced (episode prefixes not considered)."""
        for old, new in self._run_prefixes:
            if s.startswith(old):
                return new + s[len(old) :]
        return s

    def apply(self, ev: Event) -> Event:
        """The event with its ids rewritten (in place: importers hand out fresh events)."""
        if not self.active:
            return ev
        t: type = type(ev)
        t = MODEL_OF.get(t, t)  # `events.fast` structs read like their models
        if t is ModelCall:
            ev = cast(ModelCall, ev)
            ev.episode_id = self.episodes.get(ev.episode_id, ev.episode_id)
            ev.call_id = self.derived(ev.call_id) or ev.call_id
            if ev.request.base_call_id is not None:
                ev.request.base_call_id = self.derived(ev.request.base_call_id)
        elif t is ToolResultEvent:
            ev = cast(ToolResultEvent, ev)
            ev.episode_id = self.episodes.get(ev.episode_id, ev.episode_id)
            ev.call_id = self.derived(ev.call_id) or ev.call_id
        elif t is MemoryDelivery:
            ev = cast(MemoryDelivery, ev)
            ev.episode_id = self.episodes.get(ev.episode_id, ev.episode_id)
            ev.delivery_id = self.derived(ev.delivery_id) or ev.delivery_id
            ev.consuming_call_id = self.derived(ev.consuming_call_id)
            ev.search_id = self.derived(ev.search_id)
        elif t is RunEvent:
            assert isinstance(ev, RunEvent)
            ev.run_id = self.runs.get(ev.run_id, ev.run_id)
        elif t is EpisodeStart:
            assert isinstance(ev, EpisodeStart)
            ev.episode_id = self.episodes.get(ev.episode_id, ev.episode_id)
            ev.run_id = self.runs.get(ev.run_id, ev.run_id)
        elif t is EpisodeEnd:
            assert isinstance(ev, EpisodeEnd)
            ev.episode_id = self.episodes.get(ev.episode_id, ev.episode_id)
        elif t in (Retraction, HistoryRewrite):
            assert isinstance(ev, (Retraction, HistoryRewrite))
            ev.episode_id = self.episodes.get(ev.episode_id, ev.episode_id)
            ev.before_call_id = self.derived(ev.before_call_id) or ev.before_call_id
        elif t is MemorySearch:
            assert isinstance(ev, MemorySearch)
            ev.episode_id = self.episode(ev.episode_id)
            ev.run_id = self.run(ev.run_id)
            ev.search_id = self.derived(ev.search_id) or ev.search_id
        elif t is MemoryChange:
            assert isinstance(ev, MemoryChange)
            ev.episode_id = self.episode(ev.episode_id)
            ev.run_id = self.run(ev.run_id)
        return ev


def _prefixes(renamed: dict[str, str]) -> list[tuple[str, str]]:
    """(old, new) of the ids that changed, longest old id first (the most specific prefix wins)."""
    return sorted(((a, b) for a, b in renamed.items() if a != b), key=lambda kv: -len(kv[0]))


def distinct_ids(
    pairs: Iterable[tuple[int | None, Event]],
    stored_episode: Callable[[str], bool],
    stored_run: Callable[[str], bool],
    *,
    derived_ids: bool,
    file_episodes: set[str] | None = None,
    file_runs: dict[str, str] | None = None,
) -> Iterator[tuple[int | None, Event]]:
    """The events of one file with ids that collide with another file's renamed (see module
    docstring). `stored_episode` / `stored_run` say whether an id is in the store or was already
    written by this file (the writer's view); `derived_ids` is true for trajectory formats;
    `file_episodes` / `file_runs` (run id -> its run event, serialised) count as written earlier in
    this file (the earlier part of a grown recording, `ingest.grown`)."""
    rw = IdRewriter()
    file_eps: set[str] = set(file_episodes or ())
    runs_seen: dict[str, str] = dict(file_runs or {})  # run id as written -> its run event, serialised

    def taken_ep(x: str) -> bool:
        return x in file_eps or stored_episode(x)

    def taken_run(x: str) -> bool:
        return x in runs_seen or stored_run(x)

    for line, ev in pairs:
        t = type(ev)
        if t is RunEvent:
            assert isinstance(ev, RunEvent)
            rid = ev.run_id
            if rid in runs_seen:
                if dump_event(ev) == runs_seen[rid]:
                    rw.rename_run(rid, rid)  # the recorder restarted: same run, later events join it
                    continue
                rw.rename_run(rid, free_id(rid, taken_run))
            elif derived_ids and stored_run(rid):
                rw.rename_run(rid, free_id(rid, taken_run))
                runs_seen[rid] = dump_event(ev)
            else:
                runs_seen[rid] = dump_event(ev)
            rw.apply(ev)
            runs_seen.setdefault(ev.run_id, "")
        elif t is EpisodeStart:
            assert isinstance(ev, EpisodeStart)
            eid = ev.episode_id
            # an episode id built on a renamed run id follows it (`r:x/ep` of run `r:x~2` -> `r:x~2/ep`)
            want = rw.by_run(eid) if derived_ids else eid
            if want != eid or eid in file_eps or eid in rw.episodes or (derived_ids and stored_episode(eid)):
                rw.rename_episode(eid, free_id(want, taken_ep))
            rw.apply(ev)
            file_eps.add(ev.episode_id)
        elif rw._ep_prefixes or rw._run_prefixes:  # nothing renamed (the common case): no work
            ev = rw.apply(ev)
        yield line, ev
