"""Evidence units, task signatures, support sets and typed outcomes (MemTrim 3.1, A.1).

A memory m = (E_m, τ_m, H_m, o_m): atomic evidence units E_m, each a key-value pair whose key
names the entity described, its attribute or relation and the type of its value (A.1
"Canonicalizing evidence units"); a task signature τ_m (what the interaction asked); a support
set H_m ⊆ E_m (the units the stored answer depends on; uncertain dependence counts as support,
A.1 "Extracting task signatures and answer support"); and a typed outcome o_m = (τ_m, y_m).

Every unit keeps a pointer to the text span it came from; `ground` drops units whose span does
not match the source text (A.1: an ungrounded unit never enters the trie). Canonical spellings
and value normalisation live in `normalize`; `match_support` turns the caller's support names
into H_m and `restating_units` finds the units that restate the stored answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from .normalize import (
    STATUS_GROUPS,
    STATUS_NEGATION,
    Value,
    canon_attr,
    canon_entity,
    canon_text,
    content_words,
    jaccard,
    normalize_value,
    parse_date,
    parse_number,
    task_signature,
)

__all__ = [
    "STATUS_GROUPS",
    "STATUS_NEGATION",
    "EvidenceUnit",
    "Key",
    "Outcome",
    "ParsedInteraction",
    "Value",
    "canon_attr",
    "canon_entity",
    "canon_text",
    "content_words",
    "ground",
    "jaccard",
    "match_support",
    "normalize_value",
    "parse_date",
    "parse_number",
    "restating_units",
    "task_signature",
]

ValueType = Literal["boolean", "numeric", "temporal", "categorical", "entity", "text"]
VALUE_TYPES: tuple[str, ...] = ("boolean", "numeric", "temporal", "categorical", "entity", "text")


class Key(NamedTuple):
    """Canonical key of an evidence unit: entity, attribute or relation, value type (A.1)."""

    entity: str
    """Canonical entity name ('' for interaction-level attributes such as key: value lines)."""
    attribute: str
    """Canonical attribute or relation (snake_case)."""
    vtype: str
    """One of VALUE_TYPES."""

    def label(self) -> str:
        """Readable `entity.attribute` form, e.g. `highway 5.status`."""
        return f"{self.entity}.{self.attribute}" if self.entity else self.attribute


@dataclass(frozen=True, slots=True)
class EvidenceUnit:
    """One atomic piece of evidence e = (k, v) with its grounding pointer (3.1, A.1)."""

    key: Key
    """Canonical key."""
    value: Value
    """Normalised value."""
    text: str
    """The value as written (for display)."""
    start: int
    """Start offset of the source span in the interaction text."""
    end: int
    """End offset (exclusive) of the source span."""
    span: str
    """The source span itself; `ground` checks it against the text."""
    many: bool = False
    """True for multi-valued relations (founders, edges, mentioned files): another value for the
    same key is additional evidence, not a conflict."""

    @property
    def kv(self) -> tuple[Key, Value]:
        """Identity of the unit in the trie: (key, value)."""
        return (self.key, self.value)

    def render(self) -> str:
        """Key-value rendering used when the source span cannot be shown on its own."""
        if self.key.vtype == "text":
            return self.span.strip()
        shown = self.text if self.text else str(self.value)
        ent = f"{self.key.entity} " if self.key.entity else ""
        return f"{ent}{self.key.attribute.replace('_', ' ')}: {shown}"


@dataclass(frozen=True, slots=True)
class Outcome:
    """Typed outcome o_m = (τ_m, y_m) of a stored interaction (3.1)."""

    task: str
    """τ_m, the task the answer was given for."""
    answer: str
    """y_m as stored."""
    value: Value
    """Normalised answer value (used to detect disagreeing answers across memories)."""
    vtype: str
    """Value type of the answer."""
    expressible: bool
    """Whether the answer can be restated as a factual key-value unit without changing its
    meaning (A.1: procedural, subjective or long answers are not)."""
    question: str | None = None
    """The question as written, used to label a relabelled answer."""


@dataclass
class ParsedInteraction:
    """A parsed interaction (memory or query): m = (E_m, τ_m, H_m, o_m) of 3.1."""

    units: list[EvidenceUnit] = field(default_factory=list)
    """E_m, grounded units in text order (duplicates removed)."""
    task: str | None = None
    """τ, canonical task signature; None when the text asks nothing recognisable."""
    question: str | None = None
    """The question sentence the task came from, as written."""
    support: frozenset[int] = frozenset()
    """H_m as indices into `units`."""
    outcome: Outcome | None = None
    """o_m; None when there is no stored answer (or it must never be reused)."""
    ok: bool = True
    """False when the parser could not produce a valid representation (A.1 fallback)."""
    error: str | None = None
    """Why parsing failed, when it did."""
    dropped: int = 0
    """Units discarded because their span could not be traced to the text (A.1)."""
    support_dropped: int = 0
    """Of those, units the parser said the answer (possibly) depends on: while any is missing, the
    stored answer cannot be checked and is never reused (A.1, fail closed)."""
    support_from: str = "all"
    """Where H_m came from: `given` (the caller's `support=`), `line` (a `support:` line),
    `parser` (the LLM parser's marks) or `all` (dependence unknown: every unit, A.1)."""
    open_support: tuple[str, ...] = ()
    """Support names the caller gave that no unit of the memory states: a query that states any
    value for them suppresses the answer (the memory cannot show the value was the same)."""
    fact_key: Key | None = None
    """The key the stored answer states as a fact (from the question, or a unit restating it): a
    relabelled answer is filed under it (3.3 Type(o_m)); None when it has no factual form."""
    restating: frozenset[int] = frozenset()
    """Units that restate the stored answer: they follow the outcome decision instead of being
    passed on as memory-only evidence (a suppressed answer must not return through them)."""


def ground(text: str, units: list[EvidenceUnit]) -> tuple[list[EvidenceUnit], int]:
    """Keep the units whose span pointer matches the source text; count the dropped ones (A.1)."""
    kept: list[EvidenceUnit] = []
    seen: set[tuple[Key, Value]] = set()
    dropped = 0
    for u in units:
        if not (0 <= u.start < u.end <= len(text)) or text[u.start : u.end] != u.span or not u.span.strip():
            dropped += 1
            continue
        if u.kv in seen:
            continue
        seen.add(u.kv)
        kept.append(u)
    return kept, dropped


def match_support(units: list[EvidenceUnit], names: Iterable[str]) -> tuple[frozenset[int], tuple[str, ...]]:
    """H_m from the caller's names (3.1 "support set", A.1): a name selects every unit whose key
    label (`highway 5.status`), entity, attribute or value it spells, compared in canonical form;
    a number selects the units holding that number (CLADDER names its quantities by value).
    Names that select nothing come back as open support."""
    out: set[int] = set()
    unmatched: list[str] = []
    for raw in names:
        name = str(raw).strip()
        if not name:
            continue
        ent, attr, low = canon_entity(name), canon_attr(name), name.casefold()
        num = parse_number(name)
        hit = False
        for i, u in enumerate(units):
            k, v = u.key, u.value
            if (
                k.label() == low
                or (k.entity and k.entity == ent)
                or k.attribute == attr
                or (isinstance(v, str) and v in (ent, low))
                or (num is not None and isinstance(v, float) and v == num)
            ):
                out.add(i)
                hit = True
        if not hit:
            unmatched.append(name)
    return frozenset(out), tuple(unmatched)


_NAMED = ("categorical", "entity")


def restating_units(
    units: list[EvidenceUnit], outcome: Outcome | None, fact_key: Key | None
) -> frozenset[int]:
    """Units that restate the stored answer y_m: the unit under the answer's fact key, a typed
    unit holding the answer's value (categorical and entity values compare as names), or a
    free-text unit containing the answer as a phrase (answers of at most six words). They are
    part of the outcome decision (3.3): when the answer is suppressed they go with it."""
    if outcome is None:
        return frozenset()
    phrase = canon_text(outcome.answer)
    pattern = None
    if 0 < len(phrase.split()) <= 6:
        pattern = re.compile(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)")
    same_kind = (lambda t: t in _NAMED) if outcome.vtype in _NAMED else (lambda t: t == outcome.vtype)
    out: set[int] = set()
    for i, u in enumerate(units):
        vt = u.key.vtype
        if fact_key is not None and u.key == fact_key:
            out.add(i)
        elif vt == "text":
            if pattern is not None and pattern.search(str(u.value)):
                out.add(i)
        elif same_kind(vt) and u.value == outcome.value:
            out.add(i)
    return frozenset(out)
