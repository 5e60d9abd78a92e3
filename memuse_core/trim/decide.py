"""Read-time decisions (MemTrim 3.3, Eq. 1) and the merged context (A.1 "Combining multiple
retrieved memories"), as pure functions over stored memories and the query's evidence.

Per retrieved memory m, with its units split into shared S, conflicting D and memory-only U:

- the stored outcome o_m is suppressed when D ∩ H_m ≠ ∅, and also (fail closed, A.1) when a
  unit the answer may depend on was dropped as ungrounded, or when the query states a value for
  a support name the memory itself does not state; otherwise it is kept when τ_m = τ_q, or
  relabelled: filed as a fact under the key it states (Type(o_m)), omitted when it has none;
- units that restate the stored answer follow that decision and are never passed as evidence;
- the kept or relabelled unit meets the query like any unit: shared or contradicted, it goes.

The merge emits each unit once; values of one key that disagree across memories are withheld
(or ordered by a trusted timestamp). The context holds only emitted units, under one neutral
header: a unit's own source sentence when every unit drawn from it is emitted, otherwise its
key-value form; text that no emitted unit covers never reaches the model.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from typing import Any

from .outcome import fact_value
from .records import Decision, StoredMemory
from .units import EvidenceUnit, Key, ParsedInteraction, canon_text, match_support

CONTEXT_HEADER = "From earlier interactions (facts the current request states were left out):"
KEPT_LABEL = "Answer given earlier to this same question"


class QueryEvidence:
    """The query's evidence as two sets: (key, value) pairs and keys (3.3 lookups)."""

    __slots__ = ("kvs", "keys")

    def __init__(self, kvs: Any, keys: Any) -> None:
        self.kvs = kvs
        self.keys = keys

    @classmethod
    def of(cls, units: Iterable[EvidenceUnit]) -> QueryEvidence:
        units = list(units)
        return cls({(u.key, u.value) for u in units}, {u.key for u in units})


def decide(
    mem: StoredMemory,
    q: ParsedInteraction,
    qe: QueryEvidence,
    split: tuple[list[int], list[int], list[int]],
) -> Decision:
    """Eq. (1) for one memory (module docstring)."""
    p = mem.parsed
    dec = Decision(memory_id=mem.memory_id, parsed_ok=p.ok, query_ok=q.ok, support_from=p.support_from)
    has_answer = bool(mem.answer and mem.answer.strip())
    if not q.ok:
        dec.outcome = "suppressed" if has_answer else "none"
        dec.reason = (
            f"The current request could not be parsed ({q.error}), so shared and conflicting evidence "
            "cannot be told apart: nothing of this memory is passed on and no stored answer is reused "
            "(fail closed, A.1)."
        )
        return dec
    if not p.ok:
        dec.outcome = "suppressed" if has_answer else "none"
        dec.reason = (
            f"The parser could not represent this memory ({p.error}); it stays in the memory store, but "
            "nothing of it is passed on and its stored answer is never reused (A.1)."
        )
        return dec
    units = p.units
    s, d, u = split
    restating = p.restating
    dec.shared = [units[i] for i in s]
    dec.conflicting = [units[i] for i in d]
    dec.memory_only = [units[i] for i in u if i not in restating]
    dec.answer_units = [units[i] for i in sorted(restating)]
    dec.support_conflicts = [units[i] for i in d if i in p.support]
    o = p.outcome
    if o is None:
        dec.outcome, dec.reason = "none", "No stored answer."
        return dec
    problems = _support_problems(p, q, dec)
    if problems:
        dec.outcome = "suppressed"
        dec.reason = " ".join(problems) + " The stored answer is removed (Eq. 1)."
        return dec
    fk = p.fact_key
    if q.task is not None and o.task == q.task:
        dec.outcome = "kept"
        dec.reason = f"Same task ({o.task}) and none of the evidence it depends on changed."
        key = fk if fk is not None else Key("", f"answer:{o.task}", o.vtype)
        value = fact_value(fk, o.answer) if fk is not None else o.value
        dec.outcome_unit = EvidenceUnit(key, value, o.answer, 0, 0, KEPT_LABEL)  # type: ignore[arg-type]
    elif o.expressible and fk is not None:
        dec.outcome = "relabelled"
        dec.reason = (
            f"Different task (stored: {o.task}; current: {q.task or 'none'}): the earlier answer is passed "
            f"only as a fact under `{fk.label()}`, not as an answer (3.3, Type(o_m))."
        )
        dec.outcome_unit = EvidenceUnit(fk, fact_value(fk, o.answer), o.answer, 0, 0, "")  # type: ignore[arg-type]
    else:
        dec.outcome = "relabelled"  # the Type(o_m) branch of Eq. (1) with nothing to emit
        why = (
            "it is not a short factual answer"
            if not o.expressible
            else "its question names no fact it states"
        )
        dec.reason = (
            f"Different task (stored: {o.task}; current: {q.task or 'none'}), and the earlier answer "
            f"cannot be restated as a fact ({why}), so it is omitted (A.1)."
        )
    ou = dec.outcome_unit
    if ou is not None and ou.key in qe.keys and not ou.key.attribute.startswith("answer:"):
        if (ou.key, ou.value) in qe.kvs:
            dec.outcome_removed = (
                f"The request already states `{ou.key.label()}`: the answer is not repeated."
            )
        else:
            dec.outcome_removed = (
                f"The request gives `{ou.key.label()}` another value: the earlier answer is removed (the "
                "request wins, A.1)."
            )
        dec.outcome_unit = None
    return dec


def _support_problems(p: ParsedInteraction, q: ParsedInteraction, dec: Decision) -> list[str]:
    """Why the stored answer cannot be reused: changed support, dropped support, open support."""
    out = []
    if dec.support_conflicts:
        keys = ", ".join(sorted({f"`{x.key.label()}`" for x in dec.support_conflicts}))
        out.append(f"Evidence the stored answer depends on changed in the request: {keys}.")
    if p.support_dropped:
        out.append(
            f"{p.support_dropped} unit(s) the answer may depend on could not be traced to the memory text "
            "and were dropped, so the answer cannot be checked (fail closed, A.1)."
        )
    if p.open_support and q.units:
        hit, _ = match_support(q.units, p.open_support)
        if hit:
            named = ", ".join(f"`{n}`" for n in p.open_support)
            out.append(
                f"The answer depends on {named}, which the memory does not state and the request does, so "
                "it cannot be shown unchanged."
            )
    return out


def merge(
    ids: list[Hashable],
    memories: dict[Hashable, StoredMemory],
    decisions: dict[Hashable, Decision],
    *,
    trust_timestamps: bool = False,
) -> list[str]:
    """Merge the transformed memories: each unit once, disagreeing values withheld (A.1); fills
    every decision's emitted / duplicates / withheld / lines and returns the context lines."""
    cands: list[tuple[Hashable, EvidenceUnit]] = []
    for mid in ids:
        dec = decisions[mid]
        cands.extend((mid, x) for x in dec.memory_only)
        if dec.outcome_unit is not None:
            cands.append((mid, dec.outcome_unit))
    values: dict[Key, dict[Any, list[Hashable]]] = {}
    for mid, x in cands:
        if not x.many:
            values.setdefault(x.key, {}).setdefault(x.value, []).append(mid)
    blocked: set[tuple[Key, Any]] = set()
    for k, by_val in values.items():
        if len(by_val) < 2:
            continue
        winner = _newest(by_val, memories) if trust_timestamps else None
        for v in by_val:
            if v != winner:
                blocked.add((k, v))
    seen: set[tuple[Key, Any]] = set()
    for mid, x in cands:
        dec = decisions[mid]
        kv = (x.key, x.value)
        if kv in blocked:
            dec.withheld.append(x)
            if x is dec.outcome_unit:
                dec.outcome_removed = (
                    f"Retrieved memories disagree on `{x.key.label()}`: the earlier answer is withheld (A.1)."
                )
        elif kv in seen:
            dec.duplicates.append(x)
        else:
            seen.add(kv)
            dec.emitted.append(x)
    lines: list[str] = []
    for mid in ids:
        dec = decisions[mid]
        dec.lines = render(memories[mid], dec)
        lines.extend(dec.lines)
    return lines


def _newest(by_val: dict[Any, list[Hashable]], memories: dict[Hashable, StoredMemory]) -> Any:
    """The value from the newest memory when every memory involved has a trusted timestamp and
    the newest one is unique; otherwise None (all values withheld)."""
    best: list[tuple[float, Any]] = []
    for v, mids in by_val.items():
        for m in mids:
            ts = memories[m].timestamp
            if ts is None:
                return None
            best.append((ts, v))
    best.sort(key=lambda t: t[0], reverse=True)
    if len(best) > 1 and best[0][0] == best[1][0] and best[0][1] != best[1][1]:
        return None
    return best[0][1]


def render(mem: StoredMemory, dec: Decision) -> list[str]:
    """Context lines of one memory, built only from its emitted units (module docstring).

    A source sentence is passed verbatim when every fact unit drawn from it is emitted (code
    facts inside it, multi-valued mentions that never conflict, go with their sentence) and,
    unless the answer was kept, it does not spell the stored answer; otherwise each emitted
    unit appears in its key-value form. A bare code token (a path, a symbol) appears in key-value
    form: on its own it says nothing."""
    if not dec.emitted:
        return []
    ou = dec.outcome_unit
    kept = {(x.key, x.value) for x in dec.emitted if x is not ou}
    hide = _answer_pattern(mem.answer) if dec.outcome != "kept" else None
    text = mem.text
    out: list[str] = []
    for blk in mem.layout():
        facts = [x for x in blk.units if x.key.entity != "code"]
        keep = [x for x in blk.units if (x.key, x.value) in kept]
        if not keep:
            continue
        span = text[blk.start : blk.end].strip()
        whole = (
            bool(facts)
            and all((x.key, x.value) in kept for x in facts)
            and not (hide is not None and hide.search(canon_text(span)))
        )
        if whole:
            out.append(span)
        else:
            out.extend(x.render() for x in keep)
    if ou is not None and any(x is ou for x in dec.emitted):
        out.append(f"{KEPT_LABEL}: {ou.text}" if dec.outcome == "kept" else ou.render())
    return out


def _answer_pattern(answer: str | None) -> re.Pattern[str] | None:
    phrase = canon_text(answer or "")
    if not phrase or len(phrase.split()) > 6:
        return None
    return re.compile(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)")


def context_text(lines: list[str]) -> str:
    """The memory context given to the model: the neutral header and one line per unit."""
    if not lines:
        return ""
    return CONTEXT_HEADER + "\n" + "\n".join(f"- {ln}" for ln in lines)
