"""Writing events into the store: content-addressed text, delta-encoded inputs, steps.

`EventWriter` buffers rows per table and appends them through Arrow; the caller owns the
transaction (one per imported file, so a bad file leaves the store unchanged).

Messages are stored as a small JSON *shell* whose string content is replaced by a reference to a
text blob (`{"$b": <hash>}`), so a tool output that also reaches the next request as a `tool`
message is stored once.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from ..events import (
    EpisodeEnd,
    EpisodeStart,
    Event,
    HistoryRewrite,
    MemoryChange,
    MemoryDelivery,
    MemorySearch,
    Message,
    ModelCall,
    Retraction,
    RunEvent,
    ToolResultEvent,
    message_text,
    text_digest,
)

BLOB_REF = "$b"
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_FENCED_SHELL = re.compile(r"```(?:bash|sh|shell)?\s*\n(.*?)```", re.S)


def blob_hash(text: str) -> int:
    """64-bit signed content hash of a text (blake2b); the key of `blobs`."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


_SHELL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
_js = json.encoder.encode_basestring  # type: ignore[attr-defined]
"""A JSON string literal exactly as `_SHELL_JSON` writes it (ensure_ascii=False)."""
"""Same output as json.dumps(..., sort_keys=True, ensure_ascii=False), without building an encoder per call."""


def message_shell(msg: Message, hasher: Callable[[str], int] = blob_hash) -> tuple[str, str | None]:
    """(shell JSON, content text or None) of a message; the shell references the content blob.

    `hasher` must return `blob_hash` (the writer passes its memoised, blob-recording `text`)."""
    content = msg.content
    if isinstance(content, str) and not msg.__pydantic_extra__:
        return _shell_of(msg, hasher(content)), content
    d = msg.model_dump(exclude_none=True)
    content = d.get("content")
    if isinstance(content, str):
        d["content"] = {BLOB_REF: hasher(content)}
        return _SHELL_JSON(d), content
    return _SHELL_JSON(d), None


def _shell_of(msg: Message, content_hash: int) -> str:
    """The shell JSON of a message with string content and no extra fields, written directly:
    the same text as `_SHELL_JSON(msg.model_dump(exclude_none=True))` with the content replaced by
    its blob reference (keys sorted, default separators), without building dicts per message."""
    head = f'{{"content": {{"{BLOB_REF}": {content_hash}}}'
    if msg.name is None and msg.tool_call_id is None and msg.tool_calls is None:
        return f'{head}, "role": {_js(msg.role)}}}'
    parts = [head]
    if msg.name is not None:
        parts.append(f'"name": {_js(msg.name)}')
    parts.append(f'"role": {_js(msg.role)}')
    if msg.tool_call_id is not None:
        parts.append(f'"tool_call_id": {_js(msg.tool_call_id)}')
    if msg.tool_calls is not None:
        calls = ", ".join(
            f'{{"arguments": {_js(tc.arguments)}, "name": {_js(tc.name)}}}'
            if tc.id is None
            else f'{{"arguments": {_js(tc.arguments)}, "id": {_js(tc.id)}, "name": {_js(tc.name)}}}'
            for tc in msg.tool_calls
        )
        parts.append(f'"tool_calls": [{calls}]')
    return ", ".join(parts) + "}"


I64 = pa.int64()
I32 = pa.int32()
S = pa.string()
B = pa.bool_()
F = pa.float64()
LI = pa.list_(pa.int64())

TABLE_COLUMNS: dict[str, list[tuple[str, pa.DataType]]] = {
    "blobs": [("hash", I64), ("text", S)],
    "runs": [
        ("run_id", S),
        ("config", S),
        ("label", S),
        ("agent", S),
        ("model", S),
        ("meta", S),
        ("file_id", I32),
        ("seq", I32),
    ],
    "episodes": [
        ("episode_id", S),
        ("run_id", S),
        ("task_id", S),
        ("position", I32),
        ("repo", S),
        ("task_hash", I64),
        ("reference_hash", I64),
        ("resolved", B),
        ("exit_status", S),
        ("submission_hash", I64),
        ("ended", B),
        ("n_steps", I32),
        ("file_id", I32),
        ("seq", I32),
        ("end_seq", I32),
    ],
    "calls": [
        ("call_id", S),
        ("episode_id", S),
        ("call_seq", I32),
        ("role", S),
        ("status", S),
        ("base_call_id", S),
        ("base_len", I32),
        ("msg_hashes", LI),
        ("n_messages", I32),
        ("input_chars", I64),
        ("tools_hash", I64),
        ("request_extra", S),
        ("response_hash", I64),
        ("input_tokens", I64),
        ("output_tokens", I64),
        ("cached_tokens", I64),
        ("reasoning_tokens", I64),
        ("cost_usd", F),
        ("started_at", F),
        ("ended_at", F),
        ("op_ref", S),
        ("model", S),
        ("file_id", I32),
        ("seq", I32),
    ],
    "steps": [
        ("episode_id", S),
        ("step", I32),
        ("call_id", S),
        ("response_hash", I64),
        ("action", S),
        ("tools", S),
        ("exit_code", I32),
        ("obs_hashes", LI),
        ("obs_chars", I64),
    ],
    "tool_results": [
        ("episode_id", S),
        ("call_id", S),
        ("tool_call_id", S),
        ("name", S),
        ("arguments_hash", I64),
        ("output_hash", I64),
        ("exit_code", I32),
        ("file_id", I32),
        ("seq", I32),
    ],
    "context_events": [
        ("episode_id", S),
        ("type", S),
        ("before_call_id", S),
        ("payload", S),
        ("file_id", I32),
        ("seq", I32),
    ],
    "item_events": [
        ("namespace", S),
        ("item_id", S),
        ("version", S),
        ("op", S),
        ("value_hash", I64),
        ("episode_id", S),
        ("run_id", S),
        ("op_ref", S),
        ("changed_at", F),
        ("file_id", I32),
        ("seq", I32),
    ],
    "searches": [
        ("search_id", S),
        ("episode_id", S),
        ("run_id", S),
        ("route", S),
        ("query_hash", I64),
        ("scope", S),
        ("results", S),
        ("n_results", I32),
        ("file_id", I32),
        ("seq", I32),
    ],
    "deliveries": [
        ("delivery_id", S),
        ("episode_id", S),
        ("route", S),
        ("form", S),
        ("consuming_call_id", S),
        ("search_id", S),
        ("provisional_step", I32),
        ("n_entries", I32),
        ("chars", I64),
        ("file_id", I32),
        ("seq", I32),
        ("entries_of", S),
    ],
    "delivery_entry_rows": [
        ("delivery_id", S),
        ("pos", I32),
        ("namespace", S),
        ("item_id", S),
        ("id_scheme", S),
        ("version", S),
        ("version_portable", B),
        ("digest", S),
        ("value_hash", I64),
        ("display_key", S),
        ("labels", S),
    ],
    "placements": [
        ("delivery_id", S),
        ("pos", I32),
        ("episode_id", S),
        ("slot", S),
        ("kind", S),
        ("text_hash", I64),
        ("digest", S),
        ("size", I64),
        ("message_index", I32),
        ("json_pointer", S),
        ("message_digest", S),
        ("start", I32),
    ],
}


def rows_to_arrow(table: str, rows: list[tuple[Any, ...]]) -> pa.Table:
    """Rows (tuples in TABLE_COLUMNS order) as one Arrow table with the store's column types."""
    cols = TABLE_COLUMNS[table]
    arrays = [pa.array(list(col), type=t) for col, (_, t) in zip(zip(*rows), cols)]
    return pa.Table.from_arrays(arrays, names=[c for c, _ in cols])


def insert_arrow(
    con: duckdb.DuckDBPyConnection,
    table: str,
    tbl: pa.Table,
    *,
    or_ignore: bool = False,
    file_id: int | None = None,
) -> None:
    """Append an Arrow table to a store table; `file_id` replaces that column's values (rows
    built in a worker process before the file had its id)."""
    con.register("_memuse_rows", tbl)
    try:
        verb = "INSERT OR IGNORE INTO" if or_ignore else "INSERT INTO"
        sel = "*"
        if file_id is not None and "file_id" in tbl.column_names:
            sel = f"* REPLACE (CAST({int(file_id)} AS INTEGER) AS file_id)"
        con.execute(f"{verb} {table} SELECT {sel} FROM _memuse_rows")
    finally:
        con.unregister("_memuse_rows")


def append_rows(
    con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple[Any, ...]], *, or_ignore: bool = False
) -> None:
    """Append rows (tuples in TABLE_COLUMNS order) to a table through one Arrow batch."""
    if rows:
        insert_arrow(con, table, rows_to_arrow(table, rows), or_ignore=or_ignore)


def existing_ids(con: duckdb.DuckDBPyConnection) -> tuple[set[str], set[str]]:
    """(episode ids, run ids) already in the store."""
    return (
        {r[0] for r in con.execute("SELECT episode_id FROM episodes").fetchall()},
        {r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()},
    )


class DuplicateError(ValueError):
    """An event names an id that the store already holds from another file."""


@dataclass
class _CallState:
    call_id: str
    role: str
    status: str
    hashes: list[int]
    roles: list[str]
    contents: list[str | None]
    """Content text of each input message (shared references, not copies)."""
    response_hash: int | None
    action: str
    tools: str
    tool_rows: list[tuple[int | None, int | None, int]] = field(default_factory=list)
    """(output hash, exit code, output chars) per tool result."""


@dataclass
class _EpisodeState:
    episode_id: str
    calls: list[_CallState] = field(default_factory=list)
    by_id: dict[str, _CallState] = field(default_factory=dict)


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
        self.open: dict[str, _EpisodeState] = {}
        self.ended: dict[str, tuple[Any, ...]] = {}
        self.n_rows = 0
        self.n_events = 0
        if existing is None:
            assert con is not None
            existing = existing_ids(con)
        self._existing_eps, self._existing_runs = set(existing[0]), set(existing[1])
        self.episodes_written: list[str] = []
        self._hashes: dict[str, int] = {}
        self._entry_lists: dict[tuple[Any, ...], str] = {}
        """Entry list of a delivery (as written) -> the first delivery of this file that had it."""
        self._entry_objs: dict[int, tuple[Any, tuple[Any, ...], str]] = {}
        """id(entry list object) -> (the object, its key, the first delivery that had it)."""

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
            self.open[ev.episode_id] = _EpisodeState(ev.episode_id)
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

    def _ep(self, episode_id: str | None, what: str) -> _EpisodeState:
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
                k = _common_prefix(prev.hashes, full)
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
        action, tools = _action_summary(ev)
        u = ev.usage
        cs = _CallState(ev.call_id, ev.role, ev.status, full, roles, contents, resp_hash, action, tools)
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
        # Restated blocks repeat the same entry list on every call: store it once per file and
        # point later copies at the first (`entries_of`; the `delivery_entries` view expands it).
        # The importer hands restated deliveries the very same entry list object: look it up by
        # identity first (the dict keeps the list alive, so its id cannot be reused).
        same = self._entry_objs.get(id(ev.entries))
        first: str | None
        if same is not None and same[0] is ev.entries:
            key, first = same[1], same[2]
        else:
            key = tuple(
                [
                    (
                        e.namespace,
                        e.item_id,
                        e.id_scheme,
                        e.version,
                        e.version_portable,
                        e.digest,
                        e.value,
                        e.display_key,
                        json.dumps(e.labels, sort_keys=True) if e.labels else None,
                    )
                    for e in ev.entries
                ]
            )
            first = self._entry_lists.get(key)
            if len(self._entry_objs) >= self.HASH_CACHE:
                self._entry_objs.clear()
            self._entry_objs[id(ev.entries)] = (
                ev.entries,
                key,
                first if first is not None else ev.delivery_id,
            )
        if first is None:
            if len(self._entry_lists) >= self.HASH_CACHE:
                self._entry_lists.clear()
            self._entry_lists[key] = ev.delivery_id
            memo, text, add = self._hashes.get, self.text, self.rows["delivery_entry_rows"].append
            did = ev.delivery_id
            for i, (ns, item, scheme, version, portable, digest, v, display, labels) in enumerate(key):
                if v is None:
                    vh = None
                    digest = digest or None
                else:
                    vh = memo(v)
                    if vh is None:
                        vh = text(v)
                    digest = digest or text_digest(v)
                add(
                    (
                        did,
                        i,
                        ns,
                        item,
                        scheme,
                        version,
                        portable,
                        digest,
                        vh,
                        display,
                        json.dumps(ev.entries[i].labels, ensure_ascii=False) if labels else None,
                    )
                )
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
        steps = _steps(st) if st else []
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
                append_rows(self.con, table, rows)
                self.rows[table] = []
        self.n_rows = 0

    def finish(self) -> None:
        """Close episodes left open (no episode_end: outcome unknown) and flush everything."""
        for ep in list(self.open):
            self._close_episode(ep)
        self.flush()


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _action_summary(ev: ModelCall) -> tuple[str, str]:
    """A one-line summary of what a call's response did, and the tool names it used."""
    r = ev.response
    if r is None:
        return "", ""
    if r.tool_calls:
        acts = []
        for tc in r.tool_calls:
            try:
                args = json.loads(tc.arguments) if tc.arguments else {}
            except json.JSONDecodeError:
                args = tc.arguments
            if isinstance(args, dict) and len(args) == 1:
                args = next(iter(args.values()))
            acts.append(f"{tc.name}: {args}" if not isinstance(args, str) else f"{tc.name}: {args}")
        return " | ".join(acts)[:400], ",".join(tc.name for tc in r.tool_calls)
    text = r.content or ""
    m = _FENCED_SHELL.search(text)
    if m:
        return m.group(1).strip()[:400], "bash"
    return text.strip().split("\n")[-1][:400], ""


def _steps(st: _EpisodeState) -> list[tuple[Any, ...]]:
    """Step rows for an episode: completed agent calls in order with their observations (3.1)."""
    agent = [c for c in st.calls if c.role == "agent" and c.status == "ok"]
    rows = []
    for i, cs in enumerate(agent):
        exit_code = None
        obs_chars = 0
        if cs.tool_rows:
            obs = [h for h, _, _ in cs.tool_rows if h is not None]
            codes = [c for _, c, _ in cs.tool_rows if c is not None]
            exit_code = codes[-1] if codes else None
            obs_chars = sum(n for _, _, n in cs.tool_rows)
        else:
            obs = []
            nxt = agent[i + 1] if i + 1 < len(agent) else None
            if nxt is not None:
                j = len(cs.hashes)
                if j < len(nxt.roles) and nxt.roles[j] == "assistant":
                    j += 1
                while j < len(nxt.roles) and nxt.roles[j] in ("user", "tool"):
                    text = nxt.contents[j] or ""
                    obs.append(blob_hash(text))
                    obs_chars += len(text)
                    m = _RETURNCODE.search(text)
                    if m:
                        exit_code = int(m.group(1))
                    j += 1
        rows.append((i + 1, cs.call_id, cs.response_hash, cs.action, cs.tools, exit_code, obs, obs_chars))
    return rows


def iter_blob_texts(con: duckdb.DuckDBPyConnection, hashes: Iterable[int]) -> dict[int, str]:
    """Fetch blob texts by hash in one query."""
    hs = sorted({h for h in hashes if h is not None})
    if not hs:
        return {}
    rows = con.execute(
        "SELECT hash, text FROM blobs WHERE hash IN (SELECT unnest(?::BIGINT[]))", [hs]
    ).fetchall()
    return dict(rows)
