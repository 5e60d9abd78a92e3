"""Prior context B_S and earlier copies of the target items (MemUse 3.3, A.1.3, A.2.1)."""

from __future__ import annotations

from ..events import Message
from .analysis import DInfo, EpisodeAnalysis
from .models import EarlierCopy, PriorSource, Visibility


def _render(msg: Message, text: str) -> str:
    """A message's visible text plus its tool calls (commands are prior sources too)."""
    if msg.tool_calls:
        calls = "\n".join(f"[tool call {tc.name}] {tc.arguments}" for tc in msg.tool_calls)
        return f"{text}\n{calls}" if text else calls
    return text


def prior_sources(an: EpisodeAnalysis, target: DInfo) -> list[PriorSource]:
    """B_S (A.1.3, A.2.1): the first consuming input of the span, in input order, with the
    target delivery's proven placement intervals cut out. Other deliveries stay; a message
    that consisted only of the target's memory keeps its position as an empty marker. Removed or
    rewritten history is not in the input, so it is not in B_S (the steps stay readable)."""
    call = target.call
    if call is None:
        return []
    cuts: dict[int, list[tuple[int, int]]] = {}
    for rp in target.placements:
        if rp.verified and rp.host is not None and rp.start is not None and rp.end is not None:
            cuts.setdefault(rp.host, []).append((rp.start, rp.end))
    out: list[PriorSource] = []
    for i, m in enumerate(call.messages):
        text = m.text()
        cut = sorted(cuts.get(i, []))
        memory_only = False
        if cut:
            parts, at = [], 0
            for a, b in cut:
                parts.append(text[at:a])
                at = max(at, b)
            parts.append(text[at:])
            rest = "".join(parts)
            memory_only = not rest.strip() and not m.tool_calls
            text = "" if memory_only else rest
        out.append(
            PriorSource(
                pos=len(out) + 1,
                message_index=i,
                role=m.role,
                text=_render(m, text),
                cut=cut,
                memory_only=memory_only,
            )
        )
    return out


def removed_steps(an: EpisodeAnalysis, target: DInfo) -> list[int]:
    """Steps before the first consuming step whose response is no longer in its input (removed
    or rewritten history, A.1.3): not part of B_S, but still readable as evidence."""
    call = target.call
    if call is None or target.step is None:
        return []
    present = set(an.msg_ids.get(call.call_id, []))
    rids = an.response_ids()
    return [
        t
        for t in range(1, min(target.step, len(rids) + 1))
        if rids[t - 1] is None or rids[t - 1] not in present
    ]


def _surviving_exposed(placement: str, part: str, exposed: str) -> str | None:
    """The exposed text of a copy cut to what survives of its placement (`part`, a prefix of
    `placement`): the exposed text up to the end of the surviving prefix, or None when nothing of
    it survives."""
    at = placement.find(exposed)
    if at < 0:  # exposure matched after decoding: keep it when the surviving prefix still holds it
        return exposed if exposed in part else None
    keep = len(part) - at
    return exposed[:keep] if keep > 0 else None


def earlier_copies(an: EpisodeAnalysis, target: DInfo, span_ids: set[str]) -> list[EarlierCopy]:
    """Earlier deliveries of each target item (A.2.1), marked `visible` (a surviving proven
    placement shows the copy), `not_visible`, `same_input` (same consuming call: no prior
    exposure) or `undetermined` (unbound copy, gapped input, or unknown exposure with only some
    placements left), with whether the copy's verified text contains the target's exposed text.
    A partly visible copy (its host now holds only an opening part of the placement) is visible
    with the part of its exposed text that survives: "retaining only the exposed prefix when a
    copy is partly visible" (A.2.1).
    """
    call = target.call
    cid = call.call_id if call is not None else None
    gap = cid in an.gap_calls
    out: list[EarlierCopy] = []
    by_item = an.by_item()
    for pos, key in enumerate(target.ikeys):
        target_exposed = target.exposures[pos].exposed_text
        for d0 in by_item.get(key, []):
            if d0.order >= target.order and not (d0.cid is not None and d0.cid == cid):
                continue
            if d0 is target or d0.id in span_ids or key not in d0.ikeys:
                continue
            p0 = d0.ikeys.index(key)
            x0 = d0.exposures[p0]
            vis: Visibility
            seen = x0.exposed_text  # what of the copy the agent can still see
            if call is None or d0.call is None or d0.step is None:
                vis = "undetermined"
            elif d0.cid == cid:
                vis = "same_input"
            elif gap:
                vis = "undetermined"
            elif x0.exposure != "unknown":
                rp = d0.placements[x0.placement_pos] if x0.placement_pos is not None else None
                if rp is None or not rp.verified:
                    vis = "undetermined"
                else:
                    part = an.visible_part(d0, rp, call)
                    vis = "visible" if part is not None else "not_visible"
                    if part is not None and part != rp.text and seen is not None:
                        # partly visible: only the exposed prefix that survives counts (A.2.1)
                        seen = _surviving_exposed(rp.text or "", part, seen)
            else:
                proven = [rp for rp in d0.placements if rp.verified]
                alive = [rp for rp in proven if an.placement_survives(d0, rp, call)]
                if not proven:
                    vis = "undetermined"
                elif len(alive) == len(proven):
                    vis = "visible"
                elif not alive:
                    vis = "not_visible"
                else:
                    vis = "undetermined"
            contains: bool | None = None
            if target_exposed is not None:
                if seen is not None:
                    contains = an.contains(seen, target_exposed)
                elif any(rp.verified for rp in d0.placements):
                    contains = any(
                        an.contains(rp.text, target_exposed, d0.d.route == "agent")
                        for rp in d0.placements
                        if rp.verified
                    )
            out.append(
                EarlierCopy(
                    entry_pos=pos, delivery_id=d0.id, step=d0.step, visibility=vis, contains_target=contains
                )
            )
    return out
