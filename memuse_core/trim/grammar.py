"""The deterministic parser's grammar: what a sentence must look like to become evidence units
(MemTrim 3.1, A.1). `parse_det` walks a text and applies these patterns; this module only says
which patterns exist. Every pattern is anchored on a whole sentence (or line), so a unit's
grounding span is that sentence.

Line level
  - directives `question:` / `query:` / `q:`, `task:`, `answer:` / `a:`, `support:`,
    `entity:` / `subject:` (the entity of the following `key: value` lines);
  - speaker labels `User:`, `Assistant:`, `AI:`, `Human:`, `System:`, `Bot:`, `Agent:`: the label
    is dropped and the rest is read as sentences (a speaker is not a fact key);
  - `key: value` with a key of at most five words and a value of at most eight;
  - `$ command` lines (a shell command).

Sentence level, first match wins
  1. probabilities: "For those who are not X, the probability of Y is 34%.",
     "The overall probability of X is 52%.", "P(Y=1 | do(X=1)) = 0.38" (`do()` kept in the value,
     so an observational and an interventional value conflict, B.4 case 3);
  2. observations: "We observed the candle is out of wax and confounder inactive" ->
     candle.observed = "is out of wax", confounder.status = inactive (another observation of the
     same thing conflicts); causal rules: "We know that A or B causes C" -> c.caused_by = the
     rule (another rule for C, or "causes not C", conflicts); founding: "X was founded in 2016 by A
     and B" (founded_in, founder);
  3. personal facts about the user (Mem0 style, first person, or implicit subject):
       "Lives in Oslo" / "I live in Bergen" / "Moved to Bergen"        -> user.lives_in
       "Is vegetarian" / "I'm vegan" / "I am no longer vegetarian"     -> user.diet
       "Works at Acme" / "I work for Acme"                             -> user.works_for
       "Works as a nurse"                                              -> user.occupation
       "Is from Norway" / "I come from Norway"                         -> user.from
       "Likes pizza" / "I don't like pizza" / "Hates olives"           -> user.likes_<x> (yes/no)
       "Allergic to nuts" / "I'm not allergic to nuts"                 -> user.allergic_to_<x> (yes/no)
       "Is 34 years old"                                               -> user.age
       "Is a software engineer"                                        -> user.is_a (several)
       "Is married" / "I am not married"                               -> user.married (yes/no)
       "Name is John" / "My favourite food is sushi" / "Favourite
        movies are Inception and Heat"                                 -> user.name, user.favourite_food, ...
  4. states: "Highway 5 is closed today", "Route 5 has been shut", "Highway 5 is not open"
     (one `status` key per entity; A.1 "Canonical Evidence Alignment");
  5. relations from a fixed lexicon: "X plays for Y", "X lives in Y", "X directly affects Y (Y)",
     "X is a Y", ... (variable aliases such as "Eating citrus (X)" resolve in later sentences);
  6. anything else with two content words: one free-text unit keyed by its own wording (shared
     only with an identical sentence, never a conflict).
Code facts (file paths, error types, symbols, commands) are read anywhere in a line.

Questions: see `questions` (facts inside a question, the fact an answer states).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .normalize import STATUS_GROUPS, canon_attr, canon_entity

# -- line level -----------------------------------------------------------------------------------
DIRECTIVE = re.compile(r"^(question|query|q|task|answer|a|support|entity|subject)\s*:\s*(.*)$", re.I)
SPEAKER = re.compile(r"^(?:user|assistant|ai|human|system|bot|agent)\s*:\s*", re.I)
KV = re.compile(r"^([A-Za-z][\w .()'/-]{0,48}?)\s*:\s+(\S.*)$")
BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+")
DOLLAR = re.compile(r"^\$\s+(.+)$")
MAX_STATEMENT = 400
"""Longer sentences (minified code, logs) give only code facts and one free-text unit."""

PRONOUNS = frozenset(
    "he she it they this that there these those we i you his her its their which who what here".split()
)
ADVERB = r"(?:(?:now|currently|still|also|already|today|again)\s+)?"
ATTR_TAIL = frozenset(
    "status state version owner date year count price size type name location url path port host "
    "value id time color capital population language country city club team".split()
)
"""Last words of a `key:` that name the attribute, the words before naming the entity
(`club country: France` -> club.country)."""
CATEGORICAL_ATTRS = re.compile(r"(version|_id$|^id$|port|code|commit|branch|tag)")

# -- 1. probabilities (CLADDER given_info and formal notation) ---------------------------------------
_PCT = r"(?P<val>\d+(?:\.\d+)?\s*%|0?\.\d+|[01](?:\.0+)?)"
PROB_NL = re.compile(
    r"^(?:for (?P<cond>.+?),\s*)?the (?:overall )?probability (?:of|that) (?P<ev>.+?) is " + _PCT + r"$", re.I
)
PROB_FORMAL = re.compile(
    r"P\s*\(\s*(?P<ev>[^|()=]+(?:=\s*[\w.]+)?)\s*(?:\|\s*(?P<cond>(?:[^()]|\([^()]*\))+?))?\s*\)\s*=\s*"
    r"(?P<val>[-+]?\d*\.?\d+\s*%?)"
)
DO = re.compile(r"do\s*\(\s*([^()]*)\)", re.I)

# -- 1b. observations (CLADDER's deterministic questions: "We observed the candle is out of wax") ---
OBSERVED = re.compile(r"^we (?:observed|observe|see|saw) (?:that )?(?P<what>.+)$", re.I)
_OBS_STATE = re.compile(
    r"^(?P<subj>.{1,60}?)\s+(?:is\s+|are\s+|was\s+|were\s+)?(?P<neg>not\s+)?(?P<state>[a-z]+)$", re.I
)
_OBS_PRED = re.compile(
    r"^(?P<subj>.{1,60}?)\s+(?P<pred>(?:is|are|was|were|has|have|had|does|did|do)\b.*)$", re.I
)
_OBS_VERB = re.compile(r"^(?P<subj>(?:the\s+|a\s+|an\s+)?[\w'-]+)\s+(?P<pred>[a-z]+s\b.*)$", re.I)
"""A clause without a copula: the subject is its first noun ("the CEO decides to ...")."""


def observations(body: str) -> list[tuple[str, str, str]] | None:
    """ "We observed the candle is out of wax and the room is dark": (subject, attribute, value)
    per observed clause; a clause "confounder inactive" is a state (status), "the candle is out of
    wax" a predicate (observed), anything else is observed to hold (observed = yes)."""
    m = OBSERVED.match(expand_contractions(body))
    if not m:
        return None
    out = []
    for clause in re.split(r"\s+and\s+|\s*,\s*", m.group("what")):
        clause = clause.strip()
        if not clause:
            continue
        st = _OBS_STATE.match(clause)
        if st and st.group("state").casefold() in STATUS_GROUPS:
            out.append((st.group("subj"), "status", ("not " if st.group("neg") else "") + st.group("state")))
            continue
        pr = _OBS_PRED.match(clause) or _OBS_VERB.match(clause)
        if pr:
            out.append((pr.group("subj"), "observed", pr.group("pred")))
        else:
            out.append((clause, "observed", "yes"))
    return out


CAUSE_RULE = re.compile(r"^(?P<know>we know that\s+)?(?P<cause>.+?)\s+causes\s+(?P<effect>.+)$", re.I)


def cause_rule(body: str) -> tuple[str, str] | None:
    """A structural rule ("We know that A or B causes C"): (the effect without its negation, the
    rule). The rule is the value, so "A or B causes C" and "A and B causes C", or "A causes not
    C", conflict. Only for rules (a "we know that" lead, or a cause joined by and / or); a plain
    "X causes Y" stays a relation."""
    m = CAUSE_RULE.match(body)
    if not m or not (m.group("know") or re.search(r"\s(?:and|or)\s", m.group("cause"), re.I)):
        return None
    effect = m.group("effect").strip()
    return re.sub(r"\bnot\s+", "", effect, flags=re.I), m.group("cause").strip() + " => " + effect


# -- 2. founding ----------------------------------------------------------------------------------
FOUNDED = re.compile(
    r"^(?P<subj>.{1,80}?)\s+(?:was|were) (?:founded|established|created|started)"
    r"(?:\s+in (?P<year>\d{4}))?(?:\s+by (?P<who>.+?))?(?:\s+in (?P<year2>\d{4}))?$",
    re.I,
)
FOUNDED_CUE = re.compile(r"\b(?:founded|established|created|started)\b")

# -- 3. personal facts about the user -------------------------------------------------------------
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


# -- 4. states --------------------------------------------------------------------------------------
_STATE_ALT = "|".join(sorted((re.escape(s) for s in STATUS_GROUPS), key=len, reverse=True))
STATE = re.compile(
    r"^(?P<subj>.{1,80}?)\s+(?:is|are|was|were|has been|have been|had been|remains|remain|stays|"
    r"stay|got|became)\s+"
    + ADVERB
    + r"(?P<neg>not\s+)?"
    + ADVERB
    + r"(?P<state>"
    + _STATE_ALT
    + r")\b(?P<rest>.*)$",
    re.I,
)
STATE_CUE = re.compile(r"\b(?:" + _STATE_ALT.lower() + r")\b")

# -- 5. relations: (phrase regex, attribute, multi-valued, value hint) ---------------------------------
RELATIONS: list[tuple[str, str, bool, str | None]] = [
    (
        r"has a direct effect on|directly affects|has an effect on|affects|causes|influences",
        "affects",
        True,
        "entity",
    ),
    (r"plays for|signed with|joined", "plays_for", False, "entity"),
    (r"plays as an?|plays as|plays the position of", "plays_as", False, "categorical"),
    (r"works (?:at|for)|is employed (?:at|by)", "works_for", False, "entity"),
    (r"lives in|resides in", "lives_in", False, "entity"),
    (r"is based in|is headquartered in|is located in", "located_in", False, "entity"),
    (r"was born in", "born_in", False, None),
    (r"is the capital of", "capital_of", False, "entity"),
    (r"is married to", "spouse", False, "entity"),
    (r"is owned by", "owner", False, "entity"),
    (r"is part of|belongs to", "part_of", False, "entity"),
    (r"depends on|requires", "depends_on", True, "entity"),
    (r"imports", "imports", True, "entity"),
    (r"is defined in|lives in file", "defined_in", False, "entity"),
    (r"reports to", "reports_to", False, "entity"),
    (r"is an?", "is_a", True, "categorical"),
]
REL = [
    (re.compile(r"^(?P<subj>.{1,80}?)\s+" + ADVERB + r"(?P<rel>" + p + r")\s+(?P<obj>.+)$", re.I), a, m, h)
    for p, a, m, h in RELATIONS
]
REL_CUE = re.compile(r"\s(?:" + "|".join(p for p, _, _, _ in RELATIONS) + r")\s")
ALIAS = re.compile(r"^(?P<name>.+?)\s*\((?P<sym>[A-Z][A-Za-z0-9]{0,2})\)$")
OBJ_TAIL = re.compile(r"\s+(?:today|now|for the day|this week|at the moment|currently|again)$", re.I)

# -- code facts -------------------------------------------------------------------------------------
PATH = re.compile(
    r"(?<![\w/.-])((?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}|[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|c|h|"
    r"cpp|hpp|rb|php|md|toml|yaml|yml|json|cfg|ini|sh|sql|html|css))(?![\w/])"
)
ERROR = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Warning))\b")
SYMBOL = re.compile(r"\b(?:def|class|function|fn|func)\s+([A-Za-z_]\w*)|`([A-Za-z_][\w.]*)(?:\(\))?`")
COMMAND_WORDS = (
    "pytest python pip git npm npx yarn make cargo ls grep sed cat bash poetry tox docker mvn gradle node "
    "ruff mypy".split()
) + ["go ", "cd ", "sh ", "uv ", "find ", "rg "]
COMMAND_STARTS = tuple(COMMAND_WORDS)
COMMAND_HEADS = frozenset(w.strip() for w in COMMAND_WORDS)
BACKTICK = re.compile(r"`([^`\n]{2,200})`")
CODE_CUE = re.compile(r"[./`]|Error|Exception|Warning|\b(?:def|class|function|fn|func)\s")


# -- sentence scanning -----------------------------------------------------------------------------
_BOUNDARY = re.compile(r"[.!?](?=\s|$)|:(?= [A-Z])")


def sentences(seg: str, base: int) -> Iterable[tuple[int, int]]:
    """(start, end) offsets of the sentences of `seg` (a '.', '!' or '?' followed by space ends
    one, as does the colon after a long preamble; decimals and paths do not)."""
    start = 0
    for m in _BOUNDARY.finditer(seg):
        i = m.start()
        if seg[i] == ":" and i - start <= 40:
            continue  # a short label ("Weather: sunny") stays in its sentence
        yield from _trimmed(seg, start, i + 1, base)
        start = i + 1
    if start < len(seg):
        yield from _trimmed(seg, start, len(seg), base)


def _trimmed(seg: str, a: int, b: int, base: int) -> Iterable[tuple[int, int]]:
    while a < b and seg[a].isspace():
        a += 1
    while b > a and seg[b - 1].isspace():
        b -= 1
    if b > a:
        yield base + a, base + b


def prob_value(raw: str) -> float | None:
    """A probability written as 0.38, .38 or 38% as a fraction (None outside [0, 1])."""
    s = raw.strip()
    try:
        x = float(s.rstrip("%").strip())
    except ValueError:
        return None
    if s.endswith("%"):
        x /= 100.0
    if not 0.0 <= x <= 1.0:
        return None
    return round(x, 4)
