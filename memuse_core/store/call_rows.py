"""The rows of a model call and of a memory delivery (`store.writer.EventWriter` buffers them).

A call's input is delta-encoded against an earlier call of its episode (its message shells as
content-addressed text, `store.blobs`); a delivery's placements are stored per delivery, its entry
list once per distinct list (`store.entry_lists`). Both are methods of `EventWriter` (assigned
there), written as functions of the writer to keep each module short.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..events import MemoryDelivery, ModelCall, message_text, text_digest
from .blobs import _shell_of, message_shell
from .duplicates import DuplicateError
from .entry_lists import entry_rows
from .steps import CallState, action_summary, common_prefix

if TYPE_CHECKING:
    from .writer import EventWriter


def add_call(w: EventWriter, ev: ModelCall, seq: int) -> None:
    st = w._ep(ev.episode_id, "model_call")
    if ev.call_id in st.by_id:
        raise DuplicateError(f"call_id {ev.call_id!r} appears twice")
    new_hashes: list[int] = []
    new_roles: list[str] = []
    new_contents: list[str | None] = []
    chars = 0
    text = w.text
    shells = w._plain_shells
    for m in ev.request.messages:
        content = m.content
        if isinstance(content, str) and not m.__pydantic_extra__:
            h = text(content)
            chars += len(content)
            if m.name is None and m.tool_call_id is None and m.tool_calls is None:
                # a plain message's shell depends on its content hash and role only
                key = (h, m.role)
                sh = shells.get(key)
                if sh is None:
                    sh = text(_shell_of(m, h))  # type: ignore[arg-type]
                    if len(shells) >= w.HASH_CACHE:
                        shells.clear()
                    shells[key] = sh
            else:
                sh = text(_shell_of(m, h))  # type: ignore[arg-type]
        else:
            shell, content = message_shell(m, w.text)  # type: ignore[arg-type]
            if content is not None:
                text(content)
                chars += len(content)
            else:
                content = message_text(m.content)
                chars += len(content)
                if content:
                    text(content)
            sh = text(shell)
        new_hashes.append(sh)  # type: ignore[arg-type]
        new_roles.append(m.role)
        new_contents.append(content)
    req = ev.request
    if req.base_call_id is not None:
        base = st.by_id.get(req.base_call_id)
        if base is None:
            raise ValueError(
                f"request.base_call_id {req.base_call_id!r} is not an earlier call of the episode"
            )
        n = base.n if req.base_len is None else req.base_len
        if n > base.n:
            raise ValueError(f"request.base_len {n} exceeds the {base.n} messages of {req.base_call_id}")
        if n == len(base.hashes):
            # the base's whole input and nothing appended after it: extend its lists in place
            # (the usual delta chain; no copy of the episode's growing message lists per call)
            full, roles, contents = base.hashes, base.roles, base.contents
            full += new_hashes
            roles += new_roles
            contents += new_contents
        else:
            full = base.hashes[:n] + new_hashes
            roles = base.roles[:n] + new_roles
            contents = base.contents[:n] + new_contents
        base_id, base_len, stored = req.base_call_id, n, new_hashes
        n_messages = n + len(new_hashes)
    else:
        # the call's own lists start a chain that later calls may extend: not the row's list
        full, roles, contents = list(new_hashes), new_roles, new_contents
        base_id, base_len, stored = None, None, new_hashes
        n_messages = len(new_hashes)
        prev = st.calls[-1] if st.calls else None
        if prev is not None:
            k = common_prefix(prev.hashes, full, prev.n)
            if k:
                base_id, base_len, stored = prev.call_id, k, full[k:]
    # Only extra (undeclared) request fields remain after the exclusions.
    extra = (
        req.model_dump(exclude={"messages", "tools", "base_call_id", "base_len"}, exclude_none=True)
        if req.__pydantic_extra__
        else None
    )
    tools_hash = (
        w.text(json.dumps(req.tools, sort_keys=True, ensure_ascii=False)) if req.tools is not None else None
    )
    resp = ev.response
    resp_hash = w.text(resp.model_dump_json(exclude_none=True)) if resp is not None else None
    action, tools = action_summary(ev)
    u = ev.usage
    cs = CallState(
        ev.call_id, ev.role, ev.status, n_messages, full, roles, contents, resp_hash, action, tools
    )
    st.calls.append(cs)
    st.by_id[ev.call_id] = cs
    w.rows["calls"].append(
        (
            ev.call_id,
            ev.episode_id,
            len(st.calls) - 1,
            ev.role,
            ev.status,
            base_id,
            base_len,
            stored,
            n_messages,
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
            w.file_id,
            seq,
        )
    )


def add_delivery(w: EventWriter, ev: MemoryDelivery, seq: int) -> None:
    w._ep(ev.episode_id, "memory_delivery")
    chars = 0
    for i, p in enumerate(ev.placements):
        th = w.text(p.text)
        size = len(p.text) if p.text is not None else p.size
        chars += size or 0
        digest = p.digest or (text_digest(p.text) if p.text is not None else None)
        pr = p.proof
        w.rows["placements"].append(
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
    key, first = w._entry_lists.first_of(ev)
    if first is None:
        entry_rows(ev, key, w.text, w._hashes.get, w.rows["delivery_entry_rows"].append)
    w.rows["deliveries"].append(
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
            w.file_id,
            seq,
            first,
        )
    )
