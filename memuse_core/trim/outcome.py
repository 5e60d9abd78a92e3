"""The stored answer as MemTrim treats it (MemTrim 3.1, 3.3, A.1): the typed outcome o_m, the
support set H_m, the fact the answer states (its key is where a relabelled answer is filed) and
the units that restate it. `finish_parse` completes any parser's result this way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from . import questions as Q
from .normalize import normalize_value
from .units import Key, Outcome, ParsedInteraction, match_support, restating_units


def make_outcome(task: str, answer: str, question: str | None = None) -> Outcome:
    """Typed outcome o = (τ, y); short single-line answers are expressible as evidence (A.1)."""
    a = answer.strip()
    vtype, value = normalize_value(a, attribute=task)
    words = a.split()
    expressible = "\n" not in a and "```" not in a and 0 < len(words) <= 12
    return Outcome(task=task, answer=a, value=value, vtype=vtype, expressible=expressible, question=question)


def finish_parse(
    p: ParsedInteraction,
    *,
    support: Iterable[str] | None = None,
    support_from: str = "given",
    last_subject: str | None = None,
) -> ParsedInteraction:
    """Complete a parse: H_m from `support` names when given (else the parser's own marks, or
    every unit when it has none: unknown dependence counts as support, A.1), the answer's fact
    key and the units restating the answer (3.3)."""
    if not p.ok:
        return p
    if support is not None:
        hm, open_support = match_support(p.units, support)
        p = replace(p, support=hm, open_support=open_support, support_from=support_from)
    elif p.support_from == "all":
        p = replace(p, support=frozenset(range(len(p.units))))
    fact = fact_key(p, last_subject)
    return replace(p, fact_key=fact, restating=restating_units(p.units, p.outcome, fact))


def fact_key(p: ParsedInteraction, last_subject: str | None = None) -> Key | None:
    """The key the stored answer states (3.3 Type(o_m)): from the question's grammar, else the
    key of a typed unit holding the answer's value; None when neither exists (A.1: the answer is
    then omitted under a task change)."""
    o = p.outcome
    if o is None or not o.expressible:
        return None
    if p.question:
        found = Q.question_fact(p.question, last_subject)
        if found is not None:
            entity, attr, hint, _many = found
            vtype, _ = normalize_value(o.answer, attribute=attr, hint=hint)
            return Key(entity, attr, vtype)
    for i in sorted(restating_units(p.units, o, None)):
        k = p.units[i].key
        if k.vtype != "text" and k.attribute != "subject":
            return k
    return None


def fact_value(key: Key, answer: str) -> object:
    """The stored answer normalised as a value of `key` (the relabelled unit's value)."""
    hint = key.vtype if key.vtype in ("entity", "boolean", "temporal", "numeric") else None
    return normalize_value(answer, attribute=key.attribute, hint=hint)[1]
