"""Placement proofs and recording validity (MemUse A.1.1 "Placements and proofs", A.1.3).

Every placement of a delivery bound to an observed consuming call must resolve to one visible
host message and to one unique interval in it, so the delivered text can be cut out of the input.
The episode must also have a gap-free input at every such call, resolved boundaries and a task.
Any failure makes every nonempty span with an attributed step of the episode an error span;
`episode_checks` returns the failures with the rule that failed.

Rule names (stored in `recording_checks.rule` and in the error span's reason):

`proof_missing`, `proof_invalid`, `proof_unresolved`, `proof_duplicated`, `host_ambiguous`,
`proof_slot_mismatch`,
`placement_unverified`, `placement_missing`, `text_not_found`, `text_not_unique`,
`shared_host_unresolved`, `consuming_call_missing`, `input_gap`, `retraction_unresolved`,
`retraction_without_targets`, `invalid_retained_prefix`, `task_missing`,
`episode_boundary_unresolved`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from ..episode import CallView, EpisodeRecord
from ..events import HistoryRewrite, Message, Placement, Retraction, text_digest
from .models import RecordingCheck


@dataclass
class ResolvedPlacement:
    """A placement located in its consuming input (A.1.1)."""

    pos: int
    """Placement position in its delivery."""
    slot: str
    """Slot name."""
    text: str | None
    """Placement text (recovered from the host for a redacted placement with offset and size)."""
    host: int | None = None
    """Index of the host message in the consuming input."""
    start: int | None = None
    """Start of the unique interval in the host message text."""
    rule: str | None = None
    """Failed rule, None when the placement is verified."""
    detail: str = ""
    """What failed."""

    @property
    def verified(self) -> bool:
        return self.rule is None and self.host is not None and self.start is not None

    @property
    def end(self) -> int | None:
        return None if self.start is None or self.text is None else self.start + len(self.text)


def _pointer_host(pointer: str, messages: list[Message]) -> tuple[int | None, str | None]:
    """Message index named by an RFC 6901 pointer into the request, or an error text."""
    if not pointer.startswith("/"):
        return None, f"json_pointer {pointer!r} does not start with '/'"
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]
    if len(parts) < 2 or parts[0] != "messages" or not parts[1].isdigit():
        return None, f"json_pointer {pointer!r} does not name a request message"
    idx = int(parts[1])
    if idx >= len(messages):
        return None, f"json_pointer {pointer!r} is outside the {len(messages)} input messages"
    return idx, None


_SLOT_ROLES: dict[str, tuple[str, ...]] = {
    "system": ("system", "developer"),
    "developer": ("system", "developer"),
    "user": ("user",),
    "prompt": ("user",),
    "assistant": ("assistant",),
    # observations reach the model as tool messages or, in harnesses without tool calling, as
    # user messages (mini-SWE-agent)
    "tool": ("tool", "function", "user"),
    "observation": ("tool", "function", "user"),
    "function": ("tool", "function", "user"),
}


def slot_roles(slot: str) -> tuple[str, ...] | None:
    """Message roles a slot's name allows for its host message, from the name's first word
    (`system_suffix`, `system:memory_blocks/x` -> system; `tool_result`, `observation` -> tool or
    user; `user_prefix`, `user:extra_info/x` -> user). None for an adapter-specific name that
    names no role: the check then has nothing to compare (importers name slots differently)."""
    head = slot.strip().lower()
    for sep in ":/._- ":
        head = head.split(sep, 1)[0]
    return _SLOT_ROLES.get(head)


class TextSeq(Protocol):
    """Read-only indexable texts: a list of strings, or texts computed on access."""

    def __len__(self) -> int: ...

    def __getitem__(self, i: int, /) -> str: ...

    def __iter__(self) -> Iterator[str]: ...


def _count(hay: str, needle: str, limit: int = 2) -> int:
    n, i = 0, hay.find(needle)
    while i >= 0 and n < limit:
        n += 1
        i = hay.find(needle, i + 1)
    return n


def resolve_placement(
    p: Placement, pos: int, cv: CallView, texts: TextSeq, digest: Callable[[str], str] = text_digest
) -> ResolvedPlacement:
    """Resolve one placement proof against the consuming input (A.1.1, A.1.3).

    `texts` are the visible texts of the call's input messages; `digest` computes `text_digest`
    (callers may memoize it: restated host messages are checked at every call).
    """
    rp = ResolvedPlacement(pos=pos, slot=p.slot, text=p.text)
    proof = p.proof
    msgs = cv.messages
    if proof is None or (
        proof.message_index is None and proof.json_pointer is None and proof.message_digest is None
    ):
        rp.rule, rp.detail = "proof_missing", f"placement {pos} ({p.slot}) has no proof"
        return rp
    host: int | None = None
    if proof.message_index is not None:
        if proof.message_index >= len(msgs):
            rp.rule = "proof_invalid"
            rp.detail = (
                f"placement {pos}: message_index {proof.message_index} outside the {len(msgs)} input messages"
            )
            return rp
        host = proof.message_index
    if proof.json_pointer is not None:
        idx, err = _pointer_host(proof.json_pointer, msgs)
        if err:
            rp.rule, rp.detail = "proof_invalid", f"placement {pos}: {err}"
            return rp
        if host is not None and idx != host:
            rp.rule = "proof_invalid"
            rp.detail = f"placement {pos}: json_pointer and message_index name different messages"
            return rp
        host = idx
    if host is None:  # digest-only proof: it must name exactly one message
        cands = [i for i, t in enumerate(texts) if digest(t) == proof.message_digest]
        if not cands:
            rp.rule, rp.detail = (
                "proof_unresolved",
                f"placement {pos}: no input message has digest {proof.message_digest}",
            )
            return rp
        if len(cands) > 1:
            rp.rule = "host_ambiguous"
            rp.detail = f"placement {pos}: digest {proof.message_digest} names {len(cands)} messages {cands}"
            return rp
        host = cands[0]
    rp.host = host
    htext = texts[host]
    if proof.message_digest is not None and digest(htext) != proof.message_digest:
        rp.rule, rp.detail = (
            "proof_invalid",
            f"placement {pos}: host message {host} digest differs from the proof",
        )
        return rp
    text = p.text
    if text is None:
        if proof.start is not None and p.size:
            cand = htext[proof.start : proof.start + p.size]
            if len(cand) == p.size and p.digest and text_digest(cand) == p.digest:
                rp.text = text = cand
        if text is None:
            rp.rule = "placement_unverified"
            rp.detail = f"placement {pos}: text is redacted and cannot be recovered from the host"
            return rp
    if not text:
        rp.rule, rp.detail = "proof_invalid", f"placement {pos}: empty placement text"
        return rp
    if p.digest is not None and digest(text) != p.digest:
        rp.rule, rp.detail = "proof_invalid", f"placement {pos}: text digest differs from the recorded digest"
        return rp
    n = _count(htext, text)
    if n == 0:
        rp.rule = "text_not_found"
        rp.detail = f"placement {pos}: text does not occur in host message {host}"
        return rp
    if n > 1:
        rp.rule = "text_not_unique"
        rp.detail = f"placement {pos}: text occurs more than once in host message {host}"
        return rp
    start = htext.find(text)
    if proof.start is not None and proof.start != start:
        rp.rule = "proof_invalid"
        rp.detail = f"placement {pos}: proof offset {proof.start} but text is at {start} in message {host}"
        return rp
    # the text is where the proof says; the slot check comes last so a proof whose text is missing
    # is reported as such first
    roles = slot_roles(p.slot)
    if roles is not None and msgs[host].role not in roles:
        # A.1.3: "exactly one slot-matched proof resolving to one visible host message": a proof
        # whose host is not the kind of message the slot names does not prove this placement
        rp.rule = "proof_slot_mismatch"
        rp.detail = (
            f"placement {pos}: slot {p.slot!r} names a {'/'.join(roles)} message, but its proof "
            f"names message {host} ({msgs[host].role})"
        )
        return rp
    rp.start = start
    return rp


def call_level_checks(resolved: list[tuple[str, list[ResolvedPlacement]]]) -> list[tuple[str, str]]:
    """Cross-placement rules within one consuming call (A.1.3): a host interval claimed twice
    (`proof_duplicated`, also two placements of one delivery in the same slot), and a verified
    placement sharing its host with an unresolved proof (`shared_host_unresolved`).
    Marks the affected placements and returns (rule, detail) findings."""
    out: list[tuple[str, str]] = []
    seen: dict[tuple[int, int], str] = {}
    for did, rps in resolved:
        slots: set[str] = set()
        for rp in rps:
            if rp.slot in slots:
                out.append(("proof_duplicated", f"{did}: two placements in slot {rp.slot!r}"))
                rp.rule = rp.rule or "proof_duplicated"
            slots.add(rp.slot)
            if rp.host is not None and rp.start is not None:
                key = (rp.host, rp.start)
                if key in seen:
                    out.append(
                        (
                            "proof_duplicated",
                            f"{did} placement {rp.pos} and {seen[key]} claim the same interval of message {rp.host}",
                        )
                    )
                    rp.rule = rp.rule or "proof_duplicated"
                else:
                    seen[key] = f"{did} placement {rp.pos}"
    bad_hosts = {rp.host for _, rps in resolved for rp in rps if rp.rule is not None and rp.host is not None}
    for did, rps in resolved:
        for rp in rps:
            if rp.rule is None and rp.host in bad_hosts:
                rp.rule = "shared_host_unresolved"
                out.append(
                    (
                        "shared_host_unresolved",
                        f"{did} placement {rp.pos}: host message {rp.host} is also named by an unresolved proof",
                    )
                )
    return out


def _prev_agent_calls(rec: EpisodeRecord) -> dict[str, CallView | None]:
    prev: CallView | None = None
    out: dict[str, CallView | None] = {}
    for cv in rec.calls:
        if cv.call.role == "agent":
            out[cv.call_id] = prev
            prev = cv
    return out


def replay_input(
    prev: list[Message], events: list[Retraction | HistoryRewrite]
) -> tuple[list[int | None], str | None, str]:
    """Replay retractions and history rewrites on the previous input (A.1.3).

    Returns, for each message of the expected next input prefix, the index of the previous
    message it continues (None for replacement messages), plus a failed rule and detail.
    """
    idx: list[int | None] = list(range(len(prev)))
    for ev in events:
        if isinstance(ev, Retraction):
            bad = [p for p in ev.removed if p < 0 or p >= len(idx)]
            if bad or not ev.removed:
                return (
                    idx,
                    "retraction_without_targets",
                    (
                        f"retraction before {ev.before_call_id} names positions {bad or ev.removed} "
                        f"that are not in the visible input of {len(idx)} messages"
                    ),
                )
            drop = set(ev.removed)
            idx = [x for i, x in enumerate(idx) if i not in drop]
        else:
            if ev.kept_prefix > len(idx):
                return (
                    idx,
                    "invalid_retained_prefix",
                    (
                        f"history rewrite before {ev.before_call_id} keeps {ev.kept_prefix} of {len(idx)} messages"
                    ),
                )
            idx = idx[: ev.kept_prefix] + [None] * len(ev.replacement)
    return idx, None, ""


def input_checks(rec: EpisodeRecord) -> tuple[list[tuple[str, str]], set[str]]:
    """Gap checks of every agent call's input (A.1.3): unresolvable delta bases, retractions and
    rewrites that do not apply to the visible input, and messages missing without a recorded
    removal. Returns findings and the ids of calls whose input has a gap."""
    findings: list[tuple[str, str]] = []
    gaps: set[str] = set()
    by_before: dict[str, list[Retraction | HistoryRewrite]] = {}
    for ev in rec.context_events:
        if rec.call(ev.before_call_id) is None:
            rule = "retraction_unresolved" if isinstance(ev, Retraction) else "invalid_retained_prefix"
            findings.append((rule, f"{ev.type} names unknown call {ev.before_call_id!r}"))
            continue
        by_before.setdefault(ev.before_call_id, []).append(ev)
    prevs = _prev_agent_calls(rec)
    hosts: dict[str, set[int]] = {}
    for d in rec.deliveries:
        if d.consuming_call_id is not None:
            for p in d.placements:
                if p.proof is not None and p.proof.message_index is not None:
                    hosts.setdefault(d.consuming_call_id, set()).add(p.proof.message_index)
    for cv in rec.calls:
        if cv.call.role != "agent":
            continue
        if cv.input_gap:
            findings.append(("input_gap", f"call {cv.call_id}: {cv.input_gap}"))
            gaps.add(cv.call_id)
            continue
        prev = prevs.get(cv.call_id)
        evs = by_before.get(cv.call_id, [])
        if prev is None:
            if evs:
                findings.append(
                    ("retraction_without_targets", f"{evs[0].type} before the first agent call {cv.call_id}")
                )
                gaps.add(cv.call_id)
            continue
        idx, failed_rule, detail = replay_input(prev.messages, evs)
        if failed_rule:
            findings.append((failed_rule, detail))
            gaps.add(cv.call_id)
            continue
        cur = cv.messages
        if not evs and len(cur) >= len(prev.messages) and cur[: len(prev.messages)] == prev.messages:
            continue  # fast path: the input repeats the previous one exactly, then appends
        if len(cur) < len(idx):
            findings.append(
                (
                    "input_gap",
                    f"call {cv.call_id}: {len(idx) - len(cur)} visible messages "
                    "are missing without a recorded retraction or rewrite",
                )
            )
            gaps.add(cv.call_id)
            continue
        memory_hosts = hosts.get(cv.call_id, set()) | hosts.get(prev.call_id, set())
        for j, src in enumerate(idx):
            if src is None:
                continue
            old, new = prev.messages[src], cur[j]
            if old is new or (src in memory_hosts or j in memory_hosts) and old.role == new.role:
                continue
            if old.role != new.role or old.text() != new.text():
                findings.append(
                    (
                        "input_gap",
                        f"call {cv.call_id}: message {j} differs from the replayed "
                        f"history (message {src} of {prev.call_id}): missing positions",
                    )
                )
                gaps.add(cv.call_id)
                break
    return findings, gaps


def as_checks(episode_id: str, findings: list[tuple[str, str]]) -> list[RecordingCheck]:
    """Recording-check rows: the failures, or a single passing row (A.1.3)."""
    if not findings:
        return [RecordingCheck(episode_id=episode_id, ok=True, rule="all", detail="")]
    seen: set[tuple[str, str]] = set()
    out = []
    for rule, detail in findings:
        if (rule, detail) in seen:
            continue
        seen.add((rule, detail))
        out.append(RecordingCheck(episode_id=episode_id, ok=False, rule=rule, detail=detail))
    return out
