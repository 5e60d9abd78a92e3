"""Writing events into the store: content-addressed text (`store.blobs`), delta-encoded inputs,
steps (`store.steps`).

`EventWriter` buffers rows per table and appends them through Arrow (`store.tables`); the caller
owns the transaction (one per imported file, so a bad file leaves the store unchanged).
"""

from __future__ import annotations

import json
from typing import Any

import duckdb

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
    message_text,
    text_digest,
)
from .blobs import _shell_of, blob_hash, message_shell
from .entry_lists import EntryLists, entry_rows
from .steps import CallState, EpisodeState, action_summary, common_prefix, step_rows
from .tables import TABLE_COLUMNS, DuplicateKey, append_rows, existing_ids


class DuplicateError(ValueError):
    """An event names an id that the store already holds from another file; `line` and `field`
    say where, when the id was found by the database at a flush rather than by the writer."""

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.line, self.field = line, field


def duplicate_error(e: DuplicateKey, keys: list[Any], seqs: list[Any]) -> DuplicateError:
    """The DuplicateError of a primary-key violation met while appending rows whose key column
    and line numbers are `keys` and `seqs`: the id, and the line of the row that carries it."""
    col, value = e.column or "id", e.value
    line = next((q for k, q in zip(keys, seqs) if k == value), None)
    if value is None:
        return DuplicateError(f"an id is already stored ({e})", line=line)
    twice = sum(1 for k in keys if k == value) > 1
    where = "appears twice in the file" if twice else "is already stored"
    return DuplicateError(f"{col} {value!r} {where}", line=line, field=col)


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
            existing = existing_ids(con)
        self._existing_eps, self._existing_runs = set(existing[0]), set(existing[1])
        self.episodes_written: list[str] = []
        self._hashes: dict[str, int] = {}
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
        if type(ev) is ModelCall:
            self._call(ev, seq)
        elif type(ev) is MemoryDelivery:
            self._delivery(ev, seq)
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
        elif isinstance(ev, ToolResultEvent):
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
                    fid,
                    seq,
                )
            )
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

    def _call(self, ev: ModelCall, seq: int) -> None:
        st = self._ep(ev.episode_id, "model_call")
        if ev.call_id in st.by_id:
            raise DuplicateError(f"call_id {ev.call_id!r} appears twice")
        new_hashes: list[int] = []
        new_roles: list[str] = []
        new_contents: list[str | None] = []
        chars = 0
        text = self.text
        for m in ev.request.messages:
            content = m.content
            if isinstance(content, str) and not m.__pydantic_extra__:
                h = text(content)
                chars += len(content)
                shell = _shell_of(m, h)  # type: ignore[arg-type]
            else:
                shell, content = message_shell(m, self.text)  # type: ignore[arg-type]
                if content is not None:
                    text(content)
                    chars += len(content)
                else:
                    content = message_text(m.content)
                    chars += len(content)
                    if content:
                        text(content)
            new_hashes.append(text(shell))  # type: ignore[arg-type]
            new_roles.append(m.role)
            new_contents.append(content)
        req = ev.request
        if req.base_call_id is not None:
            base = st.by_id.get(req.base_call_id)
            if base is None:
                raise ValueError(
                    f"request.base_call_id {req.base_call_id!r} is not an earlier call of the episode"
                )
            n = len(base.hashes) if req.base_len is None else req.base_len
            if n > len(base.hashes):
                raise ValueError(
                    f"request.base_len {n} exceeds the {len(base.hashes)} messages of {req.base_call_id}"
                )
            full = base.hashes[:n] + new_hashes
            roles = base.roles[:n] + new_roles
            contents = base.contents[:n] + new_contents
            base_id, base_len, stored = req.base_call_id, n, new_hashes
        else:
            full, roles, contents = new_hashes, new_roles, new_contents
            base_id, base_len, stored = None, None, new_hashes
            prev = st.calls[-1] if st.calls else None
            if prev is not None:
                k = common_prefix(prev.hashes, full)
                if k:
                    base_id, base_len, stored = prev.call_id, k, full[k:]
        # Only extra (undeclared) request fields remain after the exclusions.
        extra = (
            req.model_dump(exclude={"messages", "tools", "base_call_id", "base_len"}, exclude_none=True)
            if req.__pydantic_extra__
            else None
        )
        tools_hash = (
            self.text(json.dumps(req.tools, sort_keys=True, ensure_ascii=False))
            if req.tools is not None
            else None
        )
        resp = ev.response
        resp_hash = self.text(resp.model_dump_json(exclude_none=True)) if resp is not None else None
        action, tools = action_summary(ev)
        u = ev.usage
        cs = CallState(ev.call_id, ev.role, ev.status, full, roles, contents, resp_hash, action, tools)
        st.calls.append(cs)
        st.by_id[ev.call_id] = cs
        self.rows["calls"].append(
            (
                ev.call_id,
                ev.episode_id,
                len(st.calls) - 1,
                ev.role,
                ev.status,
                base_id,
                base_len,
                stored,
                len(full),
                chars,
                tools_hash,
                json.dumps(extra, ensure_ascii=False) if extra else None,
                resp_hash,
                u.input_tokens if u else None,
                u.output_tokens if u else None,
                u.cached_tokens if u else None,
                u.reasoning_tokens if u else None,
                ev.cost_usd,
                ev.started_at,
                ev.ended_at,
                ev.op_ref,
                ev.model,
                self.file_id,
                seq,
            )
        )

    def _delivery(self, ev: MemoryDelivery, seq: int) -> None:
        self._ep(ev.episode_id, "memory_delivery")
        chars = 0
        for i, p in enumerate(ev.placements):
            th = self.text(p.text)
            size = len(p.text) if p.text is not None else p.size
            chars += size or 0
            digest = p.digest or (text_digest(p.text) if p.text is not None else None)
            pr = p.proof
            self.rows["placements"].append(
                (
                    ev.delivery_id,
                    i,
                    ev.episode_id,
                    p.slot,
                    p.kind,
                    th,
                    digest,
                    size,
                    pr.message_index if pr else None,
                    pr.json_pointer if pr else None,
                    pr.message_digest if pr else None,
                    pr.start if pr else None,
                )
            )
        key, first = self._entry_lists.first_of(ev)
        if first is None:
            entry_rows(ev, key, self.text, self._hashes.get, self.rows["delivery_entry_rows"].append)
        self.rows["deliveries"].append(
            (
                ev.delivery_id,
                ev.episode_id,
                ev.route,
                ev.form,
                ev.consuming_call_id,
                ev.search_id,
                ev.provisional_step,
                len(ev.entries),
                chars,
                self.file_id,
                seq,
                first,
            )
        )

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
    for table in ["blobs", *(t for t in TABLE_COLUMNS if t != "blobs")]:
        rows = [r for k in kept for r in k[table]]
        if rows:
            append_rows(con, table, rows, or_ignore=table == "blobs")
