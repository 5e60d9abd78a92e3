"""Letta agent files (`.af` JSON): core-memory blocks as items, message histories as episodes.

One file is one run; each agent in it is one episode (task id = agent name).

Memory items (MemUse 3.6): every core-memory block attached to an agent is an item of namespace
`letta:<agent name>` with item id = block label. Its version id is `sha:` + the first 8 hex of
`text_digest` of the value, so equal values have equal versions. The agent's stored system
message is the compiled prompt; when its `<memory_blocks>` section shows a block whose value
(line-number prefixes removed) differs from the block's current value, the compiled value is
recorded as the item's earlier version (`create`) and the current one as an `update`: the export
keeps the system message as last compiled, and Letta recompiles it only on some memory edits, so
the compiled text is taken to be the older state. A compiled block that is no longer attached is
recorded from its compiled value alone. Origins are unobserved (`episode_id` null).

Calls: every assistant message is one model call whose input is the messages before it; `tool`
messages become tool results. When messages follow the last assistant turn (or there is none),
one more call with status `incomplete` records the exported context window: it has no response
and no step, but it is the input the compiled memory was delivered into.

Deliveries: every call whose input holds the compiled system message gets one delivery (route
`host`, form `core_memory`) with one entry per compiled block (value as shown, line numbers
included; version as above) and one placement per block element (`<label>` ... `</label>`) with a
proof (message index + digest + start) into the system message; each block is its own slot
(`system:memory_blocks/<label>`), since one delivery holds at most one placement per slot. When the system message has no
`<memory_blocks>` section (e.g. raw templates), only the memory changes are recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..events import (
    Entry,
    EpisodeEnd,
    EpisodeStart,
    Event,
    MemoryChange,
    MemoryDelivery,
    Message,
    Placement,
    Proof,
    Response,
    RunEvent,
    ToolResultEvent,
    text_digest,
)
from .base import register
from .common import (
    CallChain,
    Fields,
    guarded,
    load_json,
    looks_native,
    openai_tool_calls,
    run_config,
    safe_id,
    stem,
)
from .observers import BUILTIN, active_observers, find_blocks, observe_lines

_LETTA_OBSERVER = next(o for o in BUILTIN if o.name == "letta-memory-blocks")
_NUMBERED = re.compile(r"^(?:Line \d+: |\d+→ ?)")


class LettaImporter:
    """Letta / MemGPT agent files."""

    name = "letta-agent-file"
    derived_ids = True
    """Run and episode ids come from the file name and content (`ingest.ids`)."""

    def sniff(self, path: Path, head: bytes) -> bool:
        if looks_native(head):
            return False
        h = head.lstrip()
        return (
            h.startswith(b"{")
            and b'"agents"' in h[:200]
            and (b'"agent_type"' in head or b'"blocks"' in head or path.suffix == ".af")
        )

    def events(self, path: Path) -> Iterator[tuple[int | None, Event]]:
        doc = load_json(path)
        yield from guarded(path, observe_lines(((None, e) for e in convert(path, doc)), active_observers()))


def plain_value(shown: str) -> str:
    """A block value as stored, from its compiled rendering (line-number prefixes removed)."""
    lines = shown.split("\n")
    if lines and lines[0].startswith("# NOTE:"):
        lines = lines[1:]
    return "\n".join(_NUMBERED.sub("", x) for x in lines)


def version_of(value: str) -> str:
    return "sha:" + text_digest(value.strip())[:8]


def _content(f: Fields, m: dict[str, Any], field: str) -> tuple[str | None, str | None]:
    """(text, reasoning) of a Letta message content (a string or a list of typed parts)."""
    c = m.get("content")
    if c is None or isinstance(c, str):
        return c, None
    if not isinstance(c, list):
        raise f.fail(f"{field}.content", f"expected a string or a list of parts, got {type(c).__name__}")
    text: list[str] = []
    reasoning: list[str] = []
    for i, p in enumerate(c):
        if not isinstance(p, dict):
            raise f.fail(f"{field}.content[{i}]", f"expected an object, got {type(p).__name__}")
        t = p.get("text") if isinstance(p.get("text"), str) else p.get("reasoning")
        if not isinstance(t, str):
            continue
        (reasoning if p.get("type") in ("reasoning", "omitted_reasoning") else text).append(t)
    return "\n".join(text), ("\n".join(reasoning) or None)


def convert(path: Path, doc: Any) -> Iterator[Event]:
    """The events of one agent file."""
    f = Fields(path)
    doc = f.obj(doc, "")
    agents = f.get(doc, "agents", list, "", required=True)
    blocks_raw = f.get(doc, "blocks", list, "", default=[])
    blocks: dict[str, dict[str, Any]] = {}
    for i, b in enumerate(blocks_raw):
        b = f.obj(b, f"blocks[{i}]")
        f.get(b, "label", str, f"blocks[{i}]", required=True)
        f.get(b, "value", str, f"blocks[{i}]", default="")
        blocks[str(b.get("id", f"block-{i}"))] = b
    run_name = stem(path)
    run_id = f"letta:{safe_id(run_name)}"
    first_model = None
    for a in agents:
        if isinstance(a, dict) and isinstance(a.get("llm_config"), dict):
            first_model = a["llm_config"].get("model")
            break
    yield RunEvent(
        run_id=run_id,
        config=run_config("letta"),
        label=run_name,
        agent="Letta",
        model=first_model if isinstance(first_model, str) else None,
        meta={
            "source": path.name,
            "format": "letta-agent-file",
            "agents": [a.get("name") for a in agents if isinstance(a, dict)],
        },
    )
    for ai, a in enumerate(agents):
        yield from _agent(f, f.obj(a, f"agents[{ai}]"), f"agents[{ai}]", ai, run_id, blocks)


def _agent(
    f: Fields, a: dict[str, Any], field: str, pos: int, run_id: str, blocks: dict[str, dict[str, Any]]
) -> Iterator[Event]:
    name = f.get(a, "name", str, field) or f"agent-{pos}"
    ns = f"letta:{name}"
    ep = f"{run_id}/{safe_id(str(a.get('id') or pos))}"
    msgs_raw = f.get(a, "messages", list, field, default=[])
    block_ids = f.get(a, "block_ids", list, field, default=[])
    for i, b in enumerate(block_ids):
        if not isinstance(b, str):
            raise f.fail(f"{field}.block_ids[{i}]", f"expected a string, got {type(b).__name__}")
    attached = [blocks[b] for b in block_ids if b in blocks]

    messages: list[tuple[Message, dict[str, Any], str | None]] = []
    for i, m in enumerate(msgs_raw):
        mf = f"{field}.messages[{i}]"
        m = f.obj(m, mf)
        role = f.get(m, "role", str, mf, required=True)
        text, reasoning = _content(f, m, mf)
        tcs = openai_tool_calls(f, m.get("tool_calls"), f"{mf}.tool_calls")
        tcid = f.get(m, "tool_call_id", str, mf)
        messages.append((Message(role=role, content=text, tool_calls=tcs, tool_call_id=tcid), m, reasoning))

    # The compiled memory in the first system message.
    sys_idx = next((i for i, (m, _, _) in enumerate(messages) if m.role == "system"), None)
    compiled = None
    if sys_idx is not None:
        found = find_blocks(messages[sys_idx][0].text(), _LETTA_OBSERVER)
        compiled = found[0] if found else None
    shown = {e.item_id or "": e.value or "" for e in compiled.entries} if compiled else {}

    yield EpisodeStart(
        episode_id=ep,
        run_id=run_id,
        task_id=name,
        position=pos,
        task=a.get("description") if isinstance(a.get("description"), str) else None,
    )

    # Memory items: compiled (older) state first, then the current value when it differs.
    versions: dict[str, str] = {}
    labels_attached = {b["label"] for b in attached}
    for b in attached:
        label, value = b["label"], b.get("value") or ""
        cur = version_of(value)
        if label in shown and version_of(plain_value(shown[label])) != cur:
            old = plain_value(shown[label])
            versions[label] = version_of(old)
            yield MemoryChange(
                namespace=ns, item_id=label, version=versions[label], op="create", value=old, run_id=run_id
            )
            yield MemoryChange(
                namespace=ns, item_id=label, version=cur, op="update", value=value, run_id=run_id
            )
        else:
            versions[label] = cur
            yield MemoryChange(
                namespace=ns, item_id=label, version=cur, op="create", value=value, run_id=run_id
            )
    for label, v in shown.items():
        if label not in labels_attached:
            versions[label] = version_of(plain_value(v))
            yield MemoryChange(
                namespace=ns,
                item_id=label,
                version=versions[label],
                op="create",
                value=plain_value(v),
                run_id=run_id,
            )

    # Entries and placements of the compiled blocks.
    entries: list[Entry] = []
    spans: list[tuple[str, int, str]] = []
    sys_text = messages[sys_idx][0].text() if sys_idx is not None else ""
    if compiled is not None:
        by_label = {b["label"]: b for b in attached}
        for e in compiled.entries:
            label = e.item_id or ""
            m = re.search(rf"^<{re.escape(label)}>\n.*?\n</{re.escape(label)}>$", compiled.text, re.M | re.S)
            if m is None:
                continue
            element = m.group(0)
            start = compiled.start + m.start()
            if sys_text.count(element) != 1:
                continue
            b = by_label.get(label, {})
            extra = {
                "description": b.get("description"),
                "chars_limit": b.get("limit"),
                "read_only": b.get("read_only"),
            }
            entries.append(
                Entry(
                    namespace=ns,
                    item_id=label,
                    id_scheme="letta-label",
                    version=versions.get(label),
                    value=e.value,
                    digest=text_digest(e.value or ""),
                    display_key=label,
                    labels={k: v for k, v in extra.items() if v not in (None, "")},
                )
            )
            spans.append((label, start, element))

    def delivery(call_id: str) -> MemoryDelivery:
        digest = text_digest(sys_text)
        return MemoryDelivery(
            episode_id=ep,
            delivery_id=f"{call_id}/core-memory",
            route="host",
            form="core_memory",
            consuming_call_id=call_id,
            entries=[x.model_copy() for x in entries],
            placements=[
                Placement(
                    slot=f"system:memory_blocks/{label}",
                    kind="block",
                    text=t,
                    digest=text_digest(t),
                    proof=Proof(message_index=sys_idx, message_digest=digest, start=s),
                )
                for label, s, t in spans
            ],
        )

    chain = CallChain(ep)
    hist: list[Message] = []
    issued: dict[str, tuple[str, str, str]] = {}
    last_call_len = -1
    for m, raw, reasoning in messages:
        if m.role == "assistant":
            mdl = raw.get("model") if isinstance(raw.get("model"), str) else None
            evs, call = chain.emit(
                hist,
                Response(
                    content=m.content if isinstance(m.content, str) else m.text(),
                    tool_calls=m.tool_calls,
                    reasoning=reasoning,
                ),
                model=mdl,
            )
            yield from evs
            if entries and sys_idx is not None and sys_idx < len(hist):
                yield delivery(call.call_id)
            for tc in m.tool_calls or []:
                if tc.id:
                    issued[tc.id] = (call.call_id, tc.name, tc.arguments)
            last_call_len = len(hist)
        elif m.role == "tool" and m.tool_call_id in issued:
            src = issued[m.tool_call_id or ""]
            yield ToolResultEvent(
                episode_id=ep,
                call_id=src[0],
                tool_call_id=m.tool_call_id,
                name=src[1],
                arguments=src[2],
                output=m.text(),
            )
        hist.append(m)
    if hist and len(hist) > last_call_len + 1:
        evs, call = chain.emit(hist, None, status="incomplete")
        yield from evs
        if entries and sys_idx is not None:
            yield delivery(call.call_id)
    yield EpisodeEnd(episode_id=ep, resolved=None, exit_status="exported")


LETTA = register(LettaImporter())
