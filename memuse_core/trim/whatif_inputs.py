"""What the MemTrim what-if reads of a recorded delivery: its entries, its placements and the
texts of its consuming call's input, and the prior context left when the delivery's own
placements are cut out (MemUse A.1.3; other deliveries stay). Assembled from an EpisodeRecord
(hand-made episodes, tests) or from the store's plain rows (`memuse trim`, the app).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..episode import EpisodeRecord


class EntryView(NamedTuple):
    """The fields of a delivered entry the what-if reads (a light stand-in for `events.Entry`)."""

    namespace: str
    item_id: str | None
    digest: str | None
    value: str | None


@dataclass
class DeliveryInput:
    """What the what-if needs of one delivery: its entries, its placements and the texts of its
    consuming call's input messages (None when it was never consumed)."""

    delivery_id: str
    episode_id: str
    entries: list[Any]
    """`events.Entry` or `EntryView` values (namespace, item_id, digest, value)."""
    placements: list[tuple[str | None, int | None, int | None]]
    """(text, proof message index, proof start offset) per placement."""
    input_texts: list[str] | None
    consuming_call_id: str | None = None


@dataclass
class EpisodeCalls:
    """An episode's calls as stored: (call id, base call id, base length, appended message hashes)
    and the message texts by hash; `resolve_inputs` expands them."""

    calls: list[tuple[str, str | None, int | None, list[int]]] = field(default_factory=list)
    texts: dict[int, str] = field(default_factory=dict)


def resolve_inputs(inputs: list[DeliveryInput], ec: EpisodeCalls) -> None:
    """Fill each delivery's consuming-input texts from the delta-encoded calls."""
    full: dict[str, list[str]] = {}
    for cid, base, blen, hashes in ec.calls:
        prefix = full.get(base, []) if base is not None else []
        if blen is not None:
            prefix = prefix[:blen]
        full[cid] = prefix + [ec.texts.get(h, "") for h in hashes]
    for d in inputs:
        if d.consuming_call_id is not None and d.consuming_call_id in full:
            d.input_texts = full[d.consuming_call_id]


def inputs_from_record(rec: EpisodeRecord) -> list[DeliveryInput]:
    """DeliveryInputs of every delivery of an episode record, in recorded order."""
    out = []
    for d in rec.deliveries:
        cv = rec.call(d.consuming_call_id) if d.consuming_call_id else None
        out.append(
            DeliveryInput(
                d.delivery_id,
                d.episode_id,
                list(d.entries),
                [
                    (
                        pl.text,
                        pl.proof.message_index if pl.proof else None,
                        pl.proof.start if pl.proof else None,
                    )
                    for pl in d.placements
                ],
                [m.text() for m in cv.messages] if cv is not None else None,
            )
        )
    return out


def inputs_from_rows(episode_id: str, rows: Any) -> tuple[str | None, list[DeliveryInput]]:
    """(task text, DeliveryInputs in recorded order) from the store's `EpisodeDeliveryRows`;
    the consuming inputs are expanded from their delta encoding."""
    views: dict[int, EntryView] = {}

    def view(t: tuple[Any, ...]) -> EntryView:
        v = views.get(id(t))
        if v is None:
            v = views[id(t)] = EntryView(*t)
        return v

    inputs: list[Any] = [
        DeliveryInput(
            did,
            episode_id,
            [view(t) for t in rows.entries.get(did, [])],
            list(rows.placements.get(did, [])),
            None,
            cid,
        )
        for did, cid in rows.deliveries
    ]
    ec = EpisodeCalls(list(rows.calls), dict(rows.messages))
    resolve_inputs(inputs, ec)
    return rows.task, inputs


def cut_placements(d: DeliveryInput) -> list[str] | None:
    """Prior-context message texts: the consuming input minus this delivery's placement texts
    (at the proof offset when it matches, else the first occurrence in the proof's message, else
    in any message); None when the delivery was never consumed (MemUse A.1.3)."""
    if d.input_texts is None:
        return None
    texts = list(d.input_texts)
    for text, idx, start0 in d.placements:
        if not text:
            continue
        order = [idx] if idx is not None and 0 <= idx < len(texts) else range(len(texts))
        for i in order:
            t = texts[i]
            start = start0 if idx == i else None
            if start is None or t[start : start + len(text)] != text:
                start = t.find(text)
            if start >= 0:
                texts[i] = t[:start] + t[start + len(text) :]
                break
    return [t for t in texts if t]
