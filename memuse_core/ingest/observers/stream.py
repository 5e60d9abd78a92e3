"""Running observers over an event stream: one `memory_delivery` per block per consuming call."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ...episode import EpisodeError, resolve_messages
from ...events import EpisodeEnd, Event, MemoryDelivery, Message, ModelCall, Placement, Proof, text_digest
from .builtin import BUILTIN
from .rules import Found, Observer, scan_message

_SLOTS = {"system": "system", "developer": "system", "user": "user", "tool": "tool_result"}


Hit = tuple[int, Message, list[Found]]
"""(message index, message, blocks found in it) for the messages of one input that hold blocks."""


def scan_input(
    messages: list[Message],
    observers: list[Observer],
    cache: dict[int, list[Found]] | None = None,
    offset: int = 0,
) -> list[Hit]:
    """Hits of a list of messages (indices start at `offset`); `cache` maps message ids to blocks."""
    hits: list[Hit] = []
    for j, msg in enumerate(messages):
        if cache is not None and id(msg) in cache:
            found = cache[id(msg)]
        else:
            found = scan_message(msg, observers)
            if cache is not None:
                cache[id(msg)] = found
        if found:
            hits.append((offset + j, msg, found))
    return hits


def deliveries_for_call(
    call: ModelCall,
    messages: list[Message],
    observers: list[Observer],
    cache: dict[int, list[Found]] | None = None,
    taken: list[tuple[int, int, int]] | None = None,
) -> list[MemoryDelivery]:
    """The observed deliveries consumed by one call whose resolved input is `messages`.

    `taken` lists (message_index, start, end) intervals already covered by recorded deliveries.
    """
    return deliveries_from_hits(call, scan_input(messages, observers, cache), taken)


def deliveries_from_hits(
    call: ModelCall, hits: list[Hit], taken: list[tuple[int, int, int]] | None = None
) -> list[MemoryDelivery]:
    """One delivery per block found in the call's input, minus blocks overlapping `taken`."""
    out: list[MemoryDelivery] = []
    for idx, msg, found in hits:
        digest = None
        for f in found:
            if taken and any(i == idx and not (f.end <= s or f.start >= e) for i, s, e in taken):
                continue
            if digest is None:
                digest = text_digest(msg.text())
            spec = f.observer.spec
            route = spec.route or ("agent" if msg.role == "tool" else "host")
            out.append(
                MemoryDelivery(
                    episode_id=call.episode_id,
                    delivery_id=f"{call.call_id}/obs/{spec.name}/{idx}.{f.start}",
                    route=route,
                    form=spec.form,
                    consuming_call_id=call.call_id,
                    entries=[e.model_copy() for e in f.entries],
                    placements=[
                        Placement(
                            slot=_SLOTS.get(msg.role, msg.role),
                            kind="block",
                            text=f.text,
                            digest=text_digest(f.text),
                            proof=Proof(message_index=idx, message_digest=digest, start=f.start),
                        )
                    ],
                )
            )
    return out


def observe(events: Iterable[Event], observers: list[Observer] | None = None) -> Iterator[Event]:
    """The events with observed `memory_delivery` events added after each consuming call."""
    for _line, ev in observe_lines(((None, e) for e in events), observers):
        yield ev


def observe_lines(
    pairs: Iterable[tuple[int | None, Event]], observers: list[Observer] | None = None
) -> Iterator[tuple[int | None, Event]]:
    """`observe` over (source line, event) pairs as importers yield them; streamed."""
    obs = BUILTIN if observers is None else observers
    if not obs:
        yield from pairs
        return
    resolved: dict[str, dict[str, list[Message]]] = {}
    caches: dict[str, dict[int, list[Found]]] = {}
    hits_of: dict[str, dict[str, list[Hit]]] = {}
    """Per episode and call: the hits of its input. A delta-encoded call reuses its base's hits
    for the shared prefix and scans only the appended messages (linear in the episode)."""
    held: tuple[int | None, ModelCall, list[Hit]] | None = None
    recorded: list[tuple[int | None, MemoryDelivery]] = []

    def flush() -> Iterator[tuple[int | None, Event]]:
        nonlocal held, recorded
        if held is None:
            return
        line, call, hits = held
        yield line, call
        taken = [
            (p.proof.message_index, p.proof.start, p.proof.start + len(p.text))
            for _, d in recorded
            for p in d.placements
            if p.proof and p.proof.message_index is not None and p.proof.start is not None and p.text
        ]
        yield from recorded
        for d in deliveries_from_hits(call, hits, taken):
            yield line, d
        held, recorded = None, []

    for line, ev in pairs:
        if held is not None:
            if isinstance(ev, MemoryDelivery) and ev.consuming_call_id == held[1].call_id:
                recorded.append((line, ev))
                continue
            yield from flush()
        if isinstance(ev, ModelCall) and ev.role == "agent":
            earlier = resolved.setdefault(ev.episode_id, {})
            try:
                msgs = resolve_messages(ev, earlier)
            except EpisodeError:
                yield line, ev  # the store reports the broken reference with its line
                continue
            earlier[ev.call_id] = msgs
            cache = caches.setdefault(ev.episode_id, {})
            ep_hits = hits_of.setdefault(ev.episode_id, {})
            base = ev.request.base_call_id
            if base is not None and base in ep_hits:
                n = len(msgs) - len(ev.request.messages)
                hits = [h for h in ep_hits[base] if h[0] < n] + scan_input(ev.request.messages, obs, cache, n)
            else:
                hits = scan_input(msgs, obs, cache)
            ep_hits[ev.call_id] = hits
            held = (line, ev, hits)
            continue
        if isinstance(ev, ModelCall):
            earlier = resolved.setdefault(ev.episode_id, {})
            try:
                earlier[ev.call_id] = resolve_messages(ev, earlier)
            except EpisodeError:
                pass
        if isinstance(ev, EpisodeEnd):
            resolved.pop(ev.episode_id, None)
            caches.pop(ev.episode_id, None)
            hits_of.pop(ev.episode_id, None)
        yield line, ev
    yield from flush()
