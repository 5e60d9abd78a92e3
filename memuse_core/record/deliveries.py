"""The life of a delivery between its announcement and the agent call that carried it (MemUse A.1.1).

The bridge announces a delivery before the host sends it; the recorder binds it to the agent call
that actually carried it and verifies its placement proofs against that call's request
(`proofs.verify_placement`). One `DeliveryBook` per episode keeps what is waiting:

* one-shot deliveries (a memory tool result) bind to the next agent call of the episode that
  completes; a failed call does not consume them, because the harness's retry resends the same
  input, so they go back to the front of the queue;
* standing deliveries (a recall block in the system message) are restated, and re-verified, on
  every agent call until withdrawn or until their text leaves the request;
* at the end of the episode, deliveries no call carried are written unbound with their proofs
  marked unverified and the reason, so the recording checks (A.1.3) refuse them by name.

No I/O and no locking here: the recorder calls these under its own lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .proofs import verify_placement
from .wire import CHAT, MessageMap


@dataclass
class Delivery:
    """One announced delivery (its `memory_delivery` event) and how far its binding got."""

    event: dict[str, Any]
    standing: bool
    bound_once: bool = False
    attempted_call: str | None = None
    """The last (failed) call that carried it, when only failed calls did."""
    orig: dict[str, Any] | None = None
    """The delivery as announced (before binding), for re-binding after a failed call."""


def _unchecked(p: dict[str, Any], why: str) -> dict[str, Any]:
    p = dict(p)
    if p.get("proof") is not None:
        p["proof"] = {**p["proof"], "verified": False, "problem": why}
    return p


def _unbound_event(d: Delivery) -> dict[str, Any]:
    ev = dict(d.event)
    if d.attempted_call:
        # Only failed calls carried it: bound, but to a call with no attributed step.
        ev["consuming_call_id"] = d.attempted_call
        why = "its only carrying call failed"
    else:
        why = "no agent call carried this delivery"
    ev["placements"] = [_unchecked(p, why) for p in ev.get("placements", [])]
    return ev


@dataclass
class DeliveryBook:
    """Deliveries of one episode waiting for (one-shot) or restated on (standing) agent calls."""

    episode_id: str
    n_ids: int = 0
    pending: list[Delivery] = field(default_factory=list)
    standing: dict[str, Delivery] = field(default_factory=dict)

    def next_id(self) -> str:
        """A new delivery id of this episode (`<episode>-d<n>`)."""
        self.n_ids += 1
        return f"{self.episode_id}-d{self.n_ids}"

    def announce(self, event: dict[str, Any], *, standing: bool) -> None:
        d = Delivery(event, standing=standing)
        if standing:
            self.standing[event["delivery_id"]] = d
        else:
            self.pending.append(d)

    def withdraw(self, delivery_id: str) -> None:
        """End a standing delivery (the host stopped inserting it)."""
        self.standing.pop(delivery_id, None)

    def bind(self, call_id: str, kind: str | None, body: dict[str, Any], mm: MessageMap) -> list[Delivery]:
        """Bind what this agent call carries: every standing delivery still in its request (a
        restatement gets a new delivery id) and every pending one-shot delivery."""
        chat = kind == CHAT
        consumed: list[Delivery] = []
        for did, d in list(self.standing.items()):
            pls = [verify_placement(p, body, mm, chat=chat) for p in d.event.get("placements", [])]
            gone = pls and all(
                (p.get("proof") or {}).get("problem", "").startswith("placement text not found") for p in pls
            )
            if gone and d.bound_once:
                # The harness no longer sends the block: the standing delivery has ended.
                del self.standing[did]
                continue
            ev = dict(d.event)
            if d.bound_once:
                ev["delivery_id"] = self.next_id()
            ev["placements"] = pls
            ev["consuming_call_id"] = call_id
            consumed.append(Delivery(ev, standing=True))
            d.bound_once = True
        for d in self.pending:
            ev = dict(d.event)
            ev["placements"] = [verify_placement(p, body, mm, chat=chat) for p in ev.get("placements", [])]
            ev["consuming_call_id"] = call_id
            consumed.append(Delivery(ev, standing=False, attempted_call=call_id, orig=d.orig or d.event))
        self.pending = []
        return consumed

    def settle(self, consumed: list[Delivery], call_id: str, *, ok: bool) -> list[dict[str, Any]]:
        """The delivery events a finished call writes: all it carried when it succeeded; none when it
        failed, and its one-shot deliveries wait for the retry, which resends the same input."""
        if ok:
            return [d.event for d in consumed]
        requeue = [
            Delivery(d.orig or d.event, standing=False, attempted_call=call_id)
            for d in consumed
            if not d.standing
        ]
        self.pending[:0] = requeue
        return []

    def close(self) -> list[dict[str, Any]]:
        """End of episode: the still-pending deliveries as unbound events; nothing stays standing."""
        out = [_unbound_event(d) for d in self.pending]
        self.pending.clear()
        self.standing.clear()
        return out
