"""Referential checks of one imported file (DESIGN.md "Bad input").

What a file's events name must exist, once, with one meaning; otherwise the file is refused with
the line and field of the event that breaks it, before anything of it is committed:

* an episode's `run_id` is a `run` event of this file or of the store (an episode of an unknown run
  would be missing from every per-run figure);
* a `call_id` belongs to one episode; a `search_id` and a `delivery_id` occur once in a file (ids
  already stored by other files are found by the database and reported by `store.writer`);
* a delivery's `consuming_call_id` is a model call of the same episode (A.1.1: the call whose
  input carried it), and its `search_id` is a search of this file or of the store;
* a version of a memory item (run, namespace, item, version) has one value: a change that records
  another value for a version already seen in this file or stored is refused;
* an agent trajectory (`MESSAGE_FIELDS`: formats that record the agent's model calls) has at
  least one model call per episode; an empty one has nothing to evaluate.

`FileChecks.see` is called for every event before the writer gets it and `finish` after the last
one; the store side (`resolve`) needs the database, so a parse worker ships the `Pending` part to
the process that writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..events import EpisodeStart, Event, MemoryChange, MemoryDelivery, MemorySearch, ModelCall, RunEvent
from ..events.fast import FAST_CALL, FAST_DELIVERY
from ..store.blobs import blob_hash
from ..store.refs import VersionKey, missing_ids, stored_versions
from .errors import IngestError

if TYPE_CHECKING:
    from ..store import Connection

Line = int | None

MESSAGE_FIELDS: dict[str, str] = {
    "mini-swe-agent": "messages",
    "swe-agent": "trajectory",
    "openhands": "history",
}
"""Trajectory formats whose episodes are their model calls, and the field that holds them. Letta
agent files and Reflexion logs record memory, with or without calls, so they are not listed."""


@dataclass
class Pending:
    """What only the store can answer about one file (picklable: a parse worker ships it)."""

    runs: dict[str, tuple[Line, str]] = field(default_factory=dict)
    """run id -> (line, episode id) of the first episode naming a run this file does not define."""
    searches: dict[str, tuple[Line, str]] = field(default_factory=dict)
    """search id -> (line, delivery id) of the first delivery naming a search not in this file."""
    versions: dict[VersionKey, tuple[Line, int | None]] = field(default_factory=dict)
    """item version -> (line, value hash) of its first change in this file."""


class FileChecks:
    """The in-file half of the checks; see the module docstring."""

    def __init__(self, path: Path, *, format: str) -> None:
        self.path = path
        self.messages_field = MESSAGE_FIELDS.get(format)
        self.runs: set[str] = set()
        self.episodes: dict[str, tuple[Line, str]] = {}  # episode -> (line, run id)
        self.n_calls: dict[str, int] = {}
        self.calls: dict[str, tuple[str, Line]] = {}  # call id -> (episode, line)
        self.searches: dict[str, Line] = {}
        self.deliveries: dict[str, Line] = {}
        self.consumers: list[tuple[str, str, str | None, str | None, Line]] = []
        self.versions: dict[VersionKey, tuple[Line, int | None]] = {}

    def fail(self, line: Line, field: str | None, reason: str) -> IngestError:
        return IngestError(self.path, line, field, reason)

    def see(self, ev: Event, line: Line) -> None:
        """Check one event against the earlier ones of the file (raises IngestError)."""
        t = type(ev)
        if t is MemoryDelivery or t is FAST_DELIVERY:  # `events.fast` structs read like the models
            ev = cast(MemoryDelivery, ev)
            self._once(self.deliveries, ev.delivery_id, line, "delivery_id")
            self.consumers.append((ev.delivery_id, ev.episode_id, ev.consuming_call_id, ev.search_id, line))
        elif t is ModelCall or t is FAST_CALL:
            ev = cast(ModelCall, ev)
            seen = self.calls.get(ev.call_id)
            if seen is not None and seen[0] != ev.episode_id:
                raise self.fail(
                    line,
                    "call_id",
                    f"call_id {ev.call_id!r} is already a call of episode {seen[0]!r}{_at(seen[1])}; "
                    "a call belongs to one episode",
                )
            if seen is None:
                self.calls[ev.call_id] = (ev.episode_id, line)
            self.n_calls[ev.episode_id] = self.n_calls.get(ev.episode_id, 0) + 1
        elif t is EpisodeStart:
            assert isinstance(ev, EpisodeStart)
            self.episodes.setdefault(ev.episode_id, (line, ev.run_id))
        elif t is RunEvent:
            assert isinstance(ev, RunEvent)
            self.runs.add(ev.run_id)
        elif t is MemorySearch:
            assert isinstance(ev, MemorySearch)
            self._once(self.searches, ev.search_id, line, "search_id")
        elif t is MemoryChange:
            assert isinstance(ev, MemoryChange)
            if ev.version is None or ev.value is None:
                return  # a delete names the version it removes and carries no value
            key = (ev.run_id, ev.namespace, ev.item_id, ev.version)
            h = blob_hash(ev.value)
            first = self.versions.get(key)
            if first is None:
                self.versions[key] = (line, h)
            elif first[1] != h:
                raise self.fail(line, "value", _conflict(key, f"a different value{_at(first[0])}"))

    def _once(self, seen: dict[str, Line], value: str, line: Line, field: str) -> None:
        if value in seen:
            raise self.fail(line, field, f"{field} {value!r} appears twice in the file{_at(seen[value])}")
        seen[value] = line

    def finish(self) -> Pending:
        """Check what the whole file must satisfy; returns what the store must answer."""
        pending = Pending(versions=dict(self.versions))
        for did, ep, call, search, line in self.consumers:
            if call is not None:
                owner = self.calls.get(call)
                if owner is None:
                    raise self.fail(
                        line, "consuming_call_id", f"{call!r} is not a model_call of episode {ep!r}"
                    )
                if owner[0] != ep:
                    raise self.fail(
                        line,
                        "consuming_call_id",
                        f"{call!r} is a call of episode {owner[0]!r}, not of this delivery's episode {ep!r}",
                    )
            if search is not None and search not in self.searches:
                pending.searches.setdefault(search, (line, did))
        for ep, (line, run) in self.episodes.items():
            if run not in self.runs:
                pending.runs.setdefault(run, (line, ep))
            if self.messages_field and not self.n_calls.get(ep):
                raise self.fail(
                    line,
                    self.messages_field,
                    f"no model calls: episode {ep!r} has no messages to record (an empty trajectory)",
                )
        return pending


def resolve(con: Connection, path: Path, pending: Pending, file_id: int | None) -> None:
    """Check a file's store references (raises IngestError); `file_id` is the file being written."""
    for rid in sorted(missing_ids(con, "runs", list(pending.runs)), key=lambda r: pending.runs[r][0] or 0):
        line, ep = pending.runs[rid]
        raise IngestError(
            path,
            line,
            "run_id",
            f"episode {ep!r} names run {rid!r}, which no `run` event defines (in this file or the store)",
        )
    missing = missing_ids(con, "searches", list(pending.searches))
    for sid in sorted(missing, key=lambda s: pending.searches[s][0] or 0):
        line, _ = pending.searches[sid]
        raise IngestError(
            path, line, "search_id", f"{sid!r} is not a memory_search of this file or the store"
        )
    stored = stored_versions(con, list(pending.versions), other_than_file=file_id)
    for key, (h, spath, sline) in sorted(stored.items(), key=lambda kv: pending.versions[kv[0]][0] or 0):
        line, ours = pending.versions[key]
        if ours != h:
            where = f" ({spath}:{sline})" if spath else ""
            raise IngestError(path, line, "value", _conflict(key, f"a different stored value{where}"))


def _at(line: Line) -> str:
    return f" (line {line})" if line is not None else ""


def _conflict(key: VersionKey, other: str) -> str:
    run, ns, item, version = key
    scope = f" in run {run!r}" if run is not None else ""
    return (
        f"version {version!r} of item {ns}/{item}{scope} already has {other}; "
        "a version names one value (record a new version instead)"
    )
