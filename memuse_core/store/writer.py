"""Writing events into the store: content-addressed text (`store.blobs`), delta-encoded inputs,
steps (`store.steps`).

`EventWriter` buffers rows per table and appends them through Arrow (`store.tables`); the caller
owns the transaction (one per imported file, so a bad file leaves the store unchanged).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

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
)
from ..events.fast import FAST_CALL, FAST_DELIVERY, FAST_TOOL_RESULT
from .arrow_rows import TABLE_COLUMNS
from .blobs import blob_hash
from .call_rows import add_call, add_delivery
from .duplicates import DuplicateError, duplicate_error
from .entry_lists import EntryLists
from .steps import EpisodeState, step_rows

if TYPE_CHECKING:
    import duckdb

__all__ = ["DuplicateError", "EventWriter", "append_group", "duplicate_error"]


class EventWriter:
    """Buffers events of one file and appends them to the store (caller holds the transaction)."""

    FLUSH_ROWS = 50_000

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection | None,
        file_id: int,
        *,
        known_blobs: set[int] | None = None,
        existing: tuple[set[str], set[str]] | None = None,
    ):
        """`con` None: rows are not written here (a subclass's `flush` ships them elsewhere) and
        `existing` gives the (episode ids, run ids) already stored."""
        self.con = con
        self.file_id = file_id
        self.rows: dict[str, list[tuple[Any, ...]]] = {t: [] for t in TABLE_COLUMNS}
        self.blob_rows: list[tuple[int, str]] = []
        self.known = known_blobs if known_blobs is not None else set()
        self.open: dict[str, EpisodeState] = {}
        self.ended: dict[str, tuple[Any, ...]] = {}
        self.n_rows = 0
        self.n_events = 0
        if existing is None:
            assert con is not None
            from .tables import existing_ids  # duckdb: never needed by a parse worker (con None)

            existing = existing_ids(con)
        self._existing_eps, self._existing_runs = set(existing[0]), set(existing[1])
        self.episodes_written: list[str] = []
        self._hashes: dict[str, int] = {}
        self._plain_shells: dict[tuple[int | None, str], int | None] = {}
        """(content hash, role) -> shell hash of a message with only those two fields
        (`call_rows.add_call`); every shell here is recorded like a memoised text."""
        self._entry_lists = EntryLists(self.HASH_CACHE)

    # -- text ----------------------------------------------------------------------------------
    HASH_CACHE = 50_000

    def text(self, s: str | None) -> int | None:
        """The blob hash of a text, recording the blob once; memoised per file (restated memory
        and resent prompts repeat the same texts). Every memoised text is already recorded."""
        if s is None:
            return None
        h = self._hashes.get(s)
        if h is None:
            h = blob_hash(s)
            if h not in self.known:
                self.known.add(h)
                self.blob_rows.append((h, s))
            if len(self._hashes) >= self.HASH_CACHE:
                self._hashes.clear()
            self._hashes[s] = h
        return h

    # -- events --------------------------------------------------------------------------------
    def add(self, ev: Event, seq: int) -> None:
        """Buffer one validated event; `seq` is its line number in the source."""
        self.n_events += 1
        if not self.n_events & 255 and sum(map(len, self.rows.values())) >= self.FLUSH_ROWS:
            self.flush()
        fid = self.file_id
        t = type(ev)
        if t is ModelCall or t is FAST_CALL:
            self._call(ev, seq)  # type: ignore[arg-type]
        elif t is MemoryDelivery or t is FAST_DELIVERY:
            self._delivery(ev, seq)  # type: ignore[arg-type]
        elif t is ToolResultEvent or t is FAST_TOOL_RESULT:
            self._tool_result(ev, seq)  # type: ignore[arg-type]
        elif isinstance(ev, RunEvent):
            if ev.run_id in self._existing_runs:
                raise DuplicateError(f"run_id {ev.run_id!r} is already stored")
            self._existing_runs.add(ev.run_id)
            self.rows["runs"].append(
                (
                    ev.run_id,
                    ev.config,
                    ev.label,
                    ev.agent,
                    ev.model,
                    json.dumps(ev.meta, ensure_ascii=False),
                    fid,
                    seq,
                )
            )
        elif isinstance(ev, EpisodeStart):
            if ev.episode_id in self._existing_eps:
                raise DuplicateError(f"episode_id {ev.episode_id!r} is already stored")
            self._existing_eps.add(ev.episode_id)
            self.open[ev.episode_id] = EpisodeState(ev.episode_id)
            self.ended[ev.episode_id] = (ev, seq, None, None)
        elif isinstance(ev, ModelCall):
            self._call(ev, seq)
        elif isinstance(ev, (Retraction, HistoryRewrite)):
            self._ep(ev.episode_id, ev.type)
            payload = ev.model_dump(exclude={"type", "v", "episode_id", "before_call_id"}, mode="json")
            self.rows["context_events"].append(
                (ev.episode_id, ev.type, ev.before_call_id, json.dumps(payload, ensure_ascii=False), fid, seq)
            )
        elif isinstance(ev, MemoryChange):
            self.rows["item_events"].append(
                (
                    ev.namespace,
                    ev.item_id,
                    ev.version,
                    ev.op,
                    self.text(ev.value),
                    ev.episode_id,
                    ev.run_id,
                    ev.op_ref,
                    ev.at,
                    fid,
                    seq,
                )
            )
        elif isinstance(ev, MemorySearch):
            results = [r.model_dump(exclude_none=True) for r in ev.results]
            self.rows["searches"].append(
                (
                    ev.search_id,
                    ev.episode_id,
                    ev.run_id,
                    ev.route,
                    self.text(ev.query),
                    ev.scope,
                    json.dumps(results, ensure_ascii=False),
                    len(results),
                    fid,
                    seq,
                )
            )
        elif isinstance(ev, MemoryDelivery):
            self._delivery(ev, seq)
        elif isinstance(ev, EpisodeEnd):
            self._ep(ev.episode_id, "episode_end")
            start, sseq, _, _ = self.ended[ev.episode_id]
            self.ended[ev.episode_id] = (start, sseq, ev, seq)
            self._close_episode(ev.episode_id)
        else:  # pragma: no cover
            raise TypeError(type(ev))

    def _tool_result(self, ev: ToolResultEvent, seq: int) -> None:
        st = self._ep(ev.episode_id, "tool_result")
        cs = st.by_id.get(ev.call_id)
        if cs is None:
            raise ValueError(f"call_id {ev.call_id!r} is not an earlier model_call of the episode")
        oh = self.text(ev.output)
        cs.tool_rows.append((oh, ev.exit_code, len(ev.output)))
        self.rows["tool_results"].append(
            (
                ev.episode_id,
                ev.call_id,
                ev.tool_call_id,
                ev.name,
                self.text(ev.arguments),
                oh,
                ev.exit_code,
                self.file_id,
                seq,
            )
        )

    def written_ids(self) -> tuple[set[str], set[str]]:
        """(episode ids, run ids) stored before this writer or written by it."""
        return self._existing_eps, self._existing_runs

    def has_episode(self, episode_id: str) -> bool:
        """The episode id is stored or was written by this writer."""
        return episode_id in self._existing_eps

    def has_run(self, run_id: str) -> bool:
        """The run id is stored or was written by this writer."""
        return run_id in self._existing_runs

    def _ep(self, episode_id: str | None, what: str) -> EpisodeState:
        st = self.open.get(episode_id or "")
        if st is None:
            raise ValueError(f"{what} for episode {episode_id!r} that has not started in this file")
        return st

    _call = add_call
    _delivery = add_delivery

    def _close_episode(self, episode_id: str) -> None:
        st = self.open.pop(episode_id, None)
        start, sseq, end, eseq = self.ended.pop(episode_id)
        steps = step_rows(st) if st else []
        for row in steps:
            self.rows["steps"].append((episode_id, *row))
        self.rows["episodes"].append(
            (
                start.episode_id,
                start.run_id,
                start.task_id,
                start.position,
                start.repo,
                self.text(start.task),
                self.text(start.reference),
                end.resolved if end else None,
                end.exit_status if end else None,
                self.text(end.submission) if end else None,
                end is not None,
                len(steps),
                self.file_id,
                sseq,
                eseq,
            )
        )
        self.episodes_written.append(episode_id)

    # -- flushing ------------------------------------------------------------------------------
    def flush(self) -> None:
        assert self.con is not None
        from .tables import DuplicateKey, append_rows  # duckdb (see __init__)

        if self.blob_rows:
            append_rows(self.con, "blobs", self.blob_rows, or_ignore=True)
            self.blob_rows = []
        for table, rows in self.rows.items():
            if rows:
                try:
                    append_rows(self.con, table, rows)
                except DuplicateKey as e:
                    names = [c for c, _ in TABLE_COLUMNS[table]]
                    if e.column not in names or "seq" not in names:
                        raise duplicate_error(e, [], []) from None
                    k, q = names.index(e.column), names.index("seq")
                    raise duplicate_error(e, [r[k] for r in rows], [r[q] for r in rows]) from None
                self.rows[table] = []
        self.n_rows = 0

    def finish(self) -> None:
        """Close episodes left open (no episode_end: outcome unknown) and flush everything."""
        for ep in list(self.open):
            self._close_episode(ep)
        self.flush()


def append_group(con: duckdb.DuckDBPyConnection, kept: list[dict[str, list[tuple[Any, ...]]]]) -> None:
    """Append the rows several files' writers kept (each: table -> rows, blobs included), one
    statement per table, in the order `EventWriter.flush` appends them (caller holds the
    transaction; a duplicate raises `tables.DuplicateKey`)."""
    from .tables import append_rows

    for table in ["blobs", *(t for t in TABLE_COLUMNS if t != "blobs")]:
        rows = [r for k in kept for r in k[table]]
        if rows:
            append_rows(con, table, rows, or_ignore=table == "blobs")
