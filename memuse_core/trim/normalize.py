"""Canonical forms of keys, values and questions (MemTrim A.1 "Canonicalizing evidence units").

Values are normalised into a fixed form per type so that equal facts compare equal:
boolean (True/False), numeric (float, percentages as fractions), temporal (ISO year or date
string), categorical and entity (case-folded, articles and punctuation removed), text (a
whitespace- and case-normalised sentence). Entity names and attribute names get one canonical
spelling each; a question gets a task signature (3.1) made of its operation and content words.
"""

from __future__ import annotations

import re

Value = bool | float | str
"""A normalised value (hashable, compared with ==)."""

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


_NEGATION = frozenset({"not", "no", "never", "nor", "without"})
_TASK_STOP = _STOP - _NEGATION


def task_signature(question: str) -> str:
    """Deterministic task signature of a question: the requested operation (its wh-word, or
    yes_no) and the target (its content words in order, negations kept, numbers masked) (3.1,
    A.1). Two questions get the same signature only when they ask with the same words; anything
    less certain counts as a different task (A.1)."""
    tokens = _WORD.findall(question.casefold().replace("n't", " not"))
    op = next((w for w in tokens if w in _WH), None)
    if op is None:
        op = "yes_no" if tokens and tokens[0] in _AUX else "ask"
    words = ["<num>" if w[0].isdigit() else w for w in tokens if w not in _TASK_STOP]
    return op + ":" + ("_".join(words) or canon_attr(question))


def jaccard(a: set | frozenset, b: set | frozenset) -> float:
    """|a ∩ b| / |a ∪ b| (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    if len(a) > len(b):
        a, b = b, a
    inter = sum(1 for x in a if x in b)
    return inter / (len(a) + len(b) - inter)
