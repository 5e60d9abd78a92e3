"""Personal facts in the deterministic grammar (MemTrim 3.1, A.1): what Mem0-style memories
("Lives in Oslo", "Is vegetarian") and first-person statements ("I live in Bergen", "I'm vegan")
say about the user. The frames are listed in `grammar`'s docstring, item 3.
"""

from __future__ import annotations

import re

from .normalize import canon_attr, canon_entity

# -- frames -------------------------------------------------------------
USER = "user"
"""Entity of facts about the person a memory belongs to (Mem0's implicit subject, "I")."""
_CONTRACTIONS = [
    (re.compile(r"\bI'm\b", re.I), "I am"),
    (re.compile(r"\bI've\b", re.I), "I have"),
    (re.compile(r"\b(do|does|is|are|was)n't\b", re.I), r"\1 not"),
]
_SUBJ_I = re.compile(r"^(?:i|user|the user)\s+(?=\w)", re.I)
_SUBJ_MY = re.compile(r"^(?:my|user's|the user's)\s+(?=\w)", re.I)
_IMPLICIT = frozenset(
    "is am lives lived resides moved works worked likes loves enjoys prefers dislikes hates "
    "allergic comes does name age favourite favorite".split()
)
"""First words of a Mem0-style fact sentence with no subject ("Lives in Oslo", "Is vegan")."""
PERSONAL_ATTRS = frozenset(
    "name age birthday email phone job occupation profession nationality hometown address timezone "
    "pronouns partner wife husband spouse employer diet".split()
)
DIETS = frozenset(
    "vegetarian vegan pescatarian pescetarian omnivore carnivore keto paleo flexitarian".split()
)
_NEG = r"(?P<neg>not\s+|no\s+longer\s+|never\s+)?"
_BE = r"(?:am|is|are|was)\s+"
PERSONAL_FRAMES: list[tuple[re.Pattern[str], str, str | None, bool]] = [
    # (pattern over the predicate, attribute or kind, value hint, multi-valued)
    (
        re.compile(r"^(?:" + _BE + r")?" + _NEG + r"(?:an?\s+)?(?P<val>" + "|".join(DIETS) + r")$", re.I),
        "diet",
        None,
        False,
    ),
    (
        re.compile(
            r"^(?:(?:now|currently|still)\s+)?(?:lives?|lived|resides?|resided|"
            + _BE
            + r"(?:living|based|residing))\s+in\s+(?P<val>.+)$",
            re.I,
        ),
        "lives_in",
        "entity",
        False,
    ),
    (re.compile(r"^(?:(?:have|has|just)\s+)?moved\s+to\s+(?P<val>.+)$", re.I), "lives_in", "entity", False),
    (re.compile(r"^(?:" + _BE + r"|comes?\s+)from\s+(?P<val>.+)$", re.I), "from", "entity", False),
    (
        re.compile(
            r"^(?:works?|worked|" + _BE + r"(?:working|employed))\s+(?:at|for|by)\s+(?P<val>.+)$", re.I
        ),
        "works_for",
        "entity",
        False,
    ),
    (
        re.compile(r"^(?:works?|" + _BE + r"working)\s+as\s+(?:an?\s+)?(?P<val>.+)$", re.I),
        "occupation",
        "categorical",
        False,
    ),
    (
        re.compile(
            r"^(?P<neg>(?:do|does)\s+not\s+|no\s+longer\s+|never\s+)?"
            r"(?P<verb>likes?|loves?|enjoys?|prefers?|dislikes?|hates?)\s+(?P<val>.+)$",
            re.I,
        ),
        "likes",
        None,
        False,
    ),
    (
        re.compile(r"^(?:" + _BE + r")?" + _NEG + r"allergic\s+to\s+(?P<val>.+)$", re.I),
        "allergic_to",
        None,
        False,
    ),
    (re.compile(r"^" + _BE + r"(?P<val>\d{1,3})(?:\s+years?\s+old)?$", re.I), "age", "numeric", False),
    (re.compile(r"^" + _BE + r"(?:an?)\s+(?P<val>.+)$", re.I), "is_a", "categorical", True),
    (
        re.compile(
            r"^" + _BE + _NEG + r"(?P<val>(?!(?:in|at|on|from|to|the)\b)[a-z][a-z-]*(?:\s+[a-z][a-z-]*)?)$",
            re.I,
        ),
        "adjective",
        None,
        False,
    ),
]
_ATTR_IS = re.compile(r"^(?P<attr>[A-Za-z][\w' -]{0,40}?)\s+(?P<be>is|are|was)\s+(?P<val>.+)$", re.I)
_NEGATIVE_VERBS = ("dislike", "hate")
SPLIT_LIST = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
_VALUE_TAIL = re.compile(
    r"\s+(?:anymore|any more|now|these days|lately|too|as well|a lot|very much|so much|today|currently)$",
    re.I,
)


def personal_cue(low: str) -> bool:
    """Cheap test on a lower-cased sentence: can it be a personal fact at all?"""
    first = low.split(" ", 1)[0]
    return (
        first in _IMPLICIT
        or first in ("i", "i'm", "my", "user", "user's")
        or low.startswith(("the user ", "the user's ", "no longer "))
    )


def expand_contractions(s: str) -> str:
    """ "I'm" -> "I am", "don't" -> "do not": one spelling for the personal-fact frames."""
    for rx, rep in _CONTRACTIONS:
        s = rx.sub(rep, s)
    return s


def personal_facts(body: str) -> list[tuple[str, str, str | None, bool]] | None:
    """Facts about the user stated by `body` (one sentence without its final period):
    (attribute, value as written, value hint, multi-valued); yes/no facts carry the value
    "yes" or "no" with hint "boolean". None when the sentence is not about the user."""
    s = expand_contractions(body.strip())
    m = _SUBJ_MY.match(s)
    if m:
        return _attribute_is(s[m.end() :], possessive=True)
    m = _SUBJ_I.match(s)
    if m:
        pred = s[m.end() :]
    elif s.split(" ", 1)[0].casefold() in _IMPLICIT or s[:10].casefold().startswith("no longer"):
        pred = s
    else:
        return None
    pred = _VALUE_TAIL.sub("", re.sub(r"^(?:now|currently|still|also)\s+", "", pred, flags=re.I))
    for rx, kind, hint, many in PERSONAL_FRAMES:
        fm = rx.match(pred)
        if not fm:
            continue
        val = _VALUE_TAIL.sub("", fm.group("val").strip())
        groups = fm.groupdict()
        negated = bool(groups.get("neg"))
        if kind == "diet":
            return [("diet", ("not " if negated else "") + val.casefold(), "categorical", False)]
        if kind == "likes":
            positive = not fm.group("verb").casefold().startswith(_NEGATIVE_VERBS)
            return [
                (
                    canon_attr("likes " + canon_entity(part)),
                    "yes" if positive != negated else "no",
                    "boolean",
                    False,
                )
                for part in SPLIT_LIST.split(val)
                if part.strip()
            ]
        if kind == "allergic_to":
            return [
                (
                    canon_attr("allergic to " + canon_entity(part)),
                    "no" if negated else "yes",
                    "boolean",
                    False,
                )
                for part in SPLIT_LIST.split(val)
                if part.strip()
            ]
        if kind == "adjective":
            return [(canon_attr(val), "no" if negated else "yes", "boolean", False)]
        return [(kind, val, hint, many)]
    return _attribute_is(pred, possessive=False)


def _attribute_is(s: str, *, possessive: bool) -> list[tuple[str, str, str | None, bool]] | None:
    """ "(My) name is John", "Favourite movies are Inception and Heat" (the attribute must be a
    personal attribute or a favourite when no "my" says whose it is)."""
    m = _ATTR_IS.match(s)
    if not m:
        return None
    attr = canon_attr(m.group("attr"))
    first = attr.split("_", 1)[0]
    if not possessive and attr not in PERSONAL_ATTRS and first not in ("favourite", "favorite"):
        return None
    val = m.group("val").strip()
    if m.group("be").casefold() == "are":
        return [(attr, part, None, True) for part in SPLIT_LIST.split(val) if part.strip()]
    return [(attr, val, None, False)]
