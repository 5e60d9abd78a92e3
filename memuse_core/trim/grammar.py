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
  3. personal facts about the user (Mem0 style, first person, or implicit subject; frames in `facts`):
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

from .facts import expand_contractions
from .normalize import STATUS_GROUPS

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
