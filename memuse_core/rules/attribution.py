"""Consuming-step attribution and processing order (MemUse 3.2, A.1.1, A.1.4)."""

from __future__ import annotations

from dataclasses import dataclass

from ..episode import CallView, EpisodeRecord
from ..events import MemoryDelivery


@dataclass(frozen=True)
class Attribution:
    """How a delivery is bound to the agent's steps (A.1.1)."""

    call: CallView | None
    """The bound consuming call, when it is a recorded call of the episode."""
    step: int | None
    """Attributed consuming step: the step the consuming call completed; None otherwise."""
    problem: str | None
    """Why there is no attributed step: `unbound`, `consuming_call_missing`, `call_incomplete`,
    `call_error`, `not_agent_call`; None when attributed."""

    @property
    def attributed(self) -> bool:
        return self.step is not None


def attribute_delivery(rec: EpisodeRecord, d: MemoryDelivery) -> Attribution:
    """Delivery -> consuming call -> attributed consuming step (A.1.1 "Consuming-step attribution").

    The step exists only when the bound call completed an agent step (role `agent`, status
    `ok`). An unbound delivery, a call that is not in the episode, an incomplete or failed call
    and a memory-system call give no attributed step (a provisional step stays audit-only).
    """
    if d.consuming_call_id is None:
        return Attribution(None, None, "unbound")
    cv = rec.call(d.consuming_call_id)
    if cv is None:
        return Attribution(None, None, "consuming_call_missing")
    if cv.call.role != "agent":
        return Attribution(cv, None, "not_agent_call")
    if cv.step is None:
        return Attribution(cv, None, "call_incomplete" if cv.call.status == "incomplete" else "call_error")
    return Attribution(cv, cv.step, None)


def processing_order(rec: EpisodeRecord, atts: dict[str, Attribution]) -> list[int]:
    """Indices into `rec.deliveries` in processing order: by consuming step, then recorded
    position (A.1.4).

    Deliveries without an attributed step sort after the steps completed before their recorded
    position (their consuming call's position when bound), so the restricted rule's "immediately
    preceding delivery" is the one recorded just before them.
    """
    # Steps completed before each recorded event position.
    done = 0
    steps_before: dict[str, float] = {}
    call_pos: dict[str, float] = {}
    for typ, ident in rec.order:
        if typ == "model_call":
            cv = rec.call(ident)
            if cv is not None and cv.step is not None:
                done = cv.step
            else:
                call_pos[ident] = done + 0.5
        elif typ == "memory_delivery":
            steps_before[ident] = done + 0.5
    keys = []
    for i, d in enumerate(rec.deliveries):
        a = atts[d.delivery_id]
        if a.step is not None:
            k: float = a.step
        elif a.call is not None and a.call.call_id in call_pos:
            k = call_pos[a.call.call_id]
        else:
            k = steps_before.get(d.delivery_id, done + 0.5)
        keys.append((k, i))
    return [i for _, i in sorted(keys)]
