"""Evidence units, task signatures, support sets and typed outcomes (MemTrim 3.1, A.1).

A memory m = (E_m, τ_m, H_m, o_m): atomic evidence units E_m, each a key-value pair whose key
names the entity described, its attribute or relation and the type of its value (A.1
"Canonicalizing evidence units"); a task signature τ_m (what the interaction asked); a support
set H_m ⊆ E_m (the units the stored answer depends on; uncertain dependence counts as support,
A.1 "Extracting task signatures and answer support"); and a typed outcome o_m = (τ_m, y_m).

Every unit keeps a pointer to the text span it came from; `ground` drops units whose span does
not match the source text (A.1: an ungrounded unit never enters the trie).

Values are normalised into a fixed form per type so that equal facts compare equal:
boolean (True/False), numeric (float, percentages as fractions), temporal (ISO year or date
string), categorical and entity (case-folded, articles and punctuation removed), text (a
whitespace- and case-normalised sentence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

ValueType = Literal["boolean", "numeric", "temporal", "categorical", "entity", "text"]
VALUE_TYPES: tuple[str, ...] = ("boolean", "numeric", "temporal", "categorical", "entity", "text")

Value = bool | float | str
"""A normalised value (hashable, compared with ==)."""


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


# ------------------------------------------------------------------------------------------
# normalisation
# ------------------------------------------------------------------------------------------

_TRUE = {"yes", "true", "y", "t", "1", "correct", "valid"}
_FALSE = {"no", "false", "n", "f", "0", "incorrect", "invalid"}
_BOOL_WORDS = _TRUE | _FALSE
_NUM = re.compile(r"^\s*([-+]?\d[\d,]*(?:\.\d+)?|[-+]?\.\d+)\s*(%|percent)?\s*$", re.I)
_YEAR = re.compile(r"^\s*(1[5-9]\d\d|20\d\d)\s*$")
_ISO = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?$")
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ]
    )
}
_MONTHS.update({k[:3]: v for k, v in list(_MONTHS.items())})
_DATE_MDY = re.compile(r"^\s*([A-Za-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\s*$")
_DATE_DMY = re.compile(r"^\s*(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
_WS = re.compile(r"\s+")
_TRAIL = re.compile(r"[\s.,;:!?\"'`)]+$")
_LEAD = re.compile(r"^[\s\"'`(]+")
_SPELLING = {"centre": "center", "colour": "color", "organisation": "organization", "licence": "license"}
_ROAD = re.compile(r"\b(?:route|highway|hwy|rte)\.?\s*(\d+[a-z]?)\b", re.I)
_TEMPORAL_HINT = re.compile(r"(year|date|founded|born|since|released|started|ended|when|deadline|_at$|_on$)")

STATUS_GROUPS: dict[str, str] = {
    "open": "open",
    "opened": "open",
    "reopened": "open",
    "closed": "closed",
    "shut": "closed",
    "shut down": "closed",
    "closed off": "closed",
    "up": "up",
    "down": "down",
    "online": "online",
    "offline": "offline",
    "enabled": "enabled",
    "disabled": "disabled",
    "active": "active",
    "inactive": "inactive",
    "available": "available",
    "unavailable": "unavailable",
    "passing": "passing",
    "failing": "failing",
    "broken": "broken",
    "fixed": "fixed",
    "running": "running",
    "stopped": "stopped",
    "deprecated": "deprecated",
    "blocked": "blocked",
}
"""Surface state words and their canonical state (A.1: "closed", "shut", "not open" agree)."""
STATUS_NEGATION = {
    "open": "closed",
    "closed": "open",
    "up": "down",
    "down": "up",
    "online": "offline",
    "offline": "online",
    "enabled": "disabled",
    "disabled": "enabled",
    "active": "inactive",
    "inactive": "active",
    "available": "unavailable",
    "unavailable": "available",
    "passing": "failing",
    "failing": "passing",
    "running": "stopped",
    "stopped": "running",
}
"""Binary states: "not open" means closed. Other states under negation yield no unit."""


def canon_entity(name: str) -> str:
    """Canonical entity name: case-folded, leading article and edge punctuation removed,
    British spellings unified, road designators (Route/Highway/Hwy N) unified (A.1 example)."""
    s = _WS.sub(" ", name).strip()
    s = _TRAIL.sub("", _LEAD.sub("", s))
    s = _ARTICLE.sub("", s)
    s = s.casefold()
    s = _ROAD.sub(lambda m: f"highway {m.group(1).lower()}", s)
    words = [_SPELLING.get(w, w) for w in s.split(" ")]
    return " ".join(words)


def canon_attr(name: str) -> str:
    """Canonical attribute/relation/task name: snake_case of its words."""
    s = re.sub(r"[^0-9a-z]+", "_", name.casefold()).strip("_")
    return s or "value"


def canon_text(s: str) -> str:
    """Normalised free text: case-folded words without edge punctuation."""
    return _TRAIL.sub("", _WS.sub(" ", s).strip()).casefold()


def parse_number(s: str) -> float | None:
    """52% -> 0.52; 1,234 -> 1234.0; None when `s` is not a plain number."""
    m = _NUM.match(s)
    if not m:
        return None
    x = float(m.group(1).replace(",", ""))
    if m.group(2):
        x /= 100.0
    return round(x, 6)


def parse_date(s: str) -> str | None:
    """A year or a calendar date in ISO form, else None."""
    if _YEAR.match(s):
        return s.strip()
    m = _ISO.match(s)
    if m:
        return f"{int(m.group(1)):04d}-{int(m.group(2)):02d}-{int(m.group(3)):02d}"
    m = _DATE_MDY.match(s)
    if m and m.group(1).casefold() in _MONTHS:
        return f"{int(m.group(3)):04d}-{_MONTHS[m.group(1).casefold()]:02d}-{int(m.group(2)):02d}"
    m = _DATE_DMY.match(s)
    if m and m.group(2).casefold() in _MONTHS:
        return f"{int(m.group(3)):04d}-{_MONTHS[m.group(2).casefold()]:02d}-{int(m.group(1)):02d}"
    return None


def normalize_value(raw: str, *, attribute: str = "", hint: str | None = None) -> tuple[str, Value]:
    """Type and normalise a value written as `raw` (A.1 "normalized into a fixed form").

    `hint` forces a value type when the caller knows it (e.g. the LLM parser's declared type);
    otherwise the type is inferred: boolean words, dates (and bare years when the attribute is
    about time), numbers (percentages become fractions), then short categorical values, then text.
    """
    s = _TRAIL.sub("", _LEAD.sub("", _WS.sub(" ", raw).strip()))
    low = s.casefold()
    if hint == "boolean" or (hint is None and low in _BOOL_WORDS):
        if low in _TRUE:
            return "boolean", True
        if low in _FALSE:
            return "boolean", False
        if hint == "boolean":
            return "categorical", low
    if hint in (None, "temporal"):
        d = parse_date(s)
        if d is not None and (hint == "temporal" or len(d) > 4 or _TEMPORAL_HINT.search(attribute)):
            return "temporal", d
    if hint in (None, "numeric"):
        x = parse_number(s)
        if x is not None:
            return "numeric", x
    if hint == "entity":
        return "entity", canon_entity(s)
    if hint == "text":
        return "text", canon_text(s)
    if hint == "categorical" or (hint is None and len(low.split()) <= 6):
        state = STATUS_GROUPS.get(low)
        return "categorical", state if state else canon_entity(s)
    return "text", canon_text(s)


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


_STOP = frozenset(
    "a an the of to in on at for by with and or but is are was were be been being do does did "
    "this that these those it its his her their our your my i we you he she they them what which "
    "who whom whose when where why how will would should could can may might must shall than "
    "then there here as if so not no yes from into about over under up down out any all some "
    "each more most other such only own same too very just also have has had".split()
)
_WORD = re.compile(r"[a-z0-9][a-z0-9_'-]*")


def content_words(text: str) -> set[str]:
    """Content words of a text (lower-case tokens without stop words; numbers masked)."""
    out = set()
    for w in _WORD.findall(text.casefold()):
        if w in _STOP:
            continue
        out.add("<num>" if w[0].isdigit() else w)
    return out


_WH = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "whether"}
_AUX = {
    "is",
    "are",
    "was",
    "were",
    "do",
    "does",
    "did",
    "will",
    "would",
    "can",
    "could",
    "should",
    "has",
    "have",
    "had",
    "may",
    "might",
    "must",
    "shall",
}


def task_signature(question: str) -> str:
    """Deterministic task signature of a question: the requested operation (its wh-word, or
    yes_no) and the target (its content words in order, numbers masked) (3.1, A.1). Two questions get the same signature only when they ask with the same content
    words; anything less certain counts as a different task (A.1)."""
    tokens = _WORD.findall(question.casefold())
    op = next((w for w in tokens if w in _WH), None)
    if op is None:
        op = "yes_no" if tokens and tokens[0] in _AUX else "ask"
    words = ["<num>" if w[0].isdigit() else w for w in tokens if w not in _STOP]
    return op + ":" + ("_".join(words) or canon_attr(question))


def jaccard(a: set | frozenset, b: set | frozenset) -> float:
    """|a ∩ b| / |a ∪ b| (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    if len(a) > len(b):
        a, b = b, a
    inter = sum(1 for x in a if x in b)
    return inter / (len(a) + len(b) - inter)
