"""Questions in the deterministic grammar (MemTrim 3.1, 3.3, A.1).

Questions
  A sentence ending in "?" is the task, not evidence, except a leading clause set off by a comma
  ("I live in Bergen, what should I cook?", "Since I'm vegan, which dish fits?"): that clause is
  read as a sentence. `question_fact` maps a question to the fact its answer states, which is
  where a relabelled answer is filed (3.3 Type(o_m)):
       "When was X founded?" -> X.founded_in         "Who founded X?" -> X.founder
       "Where does X live?" -> X.lives_in            "Where is X based?" -> X.located_in
       "What is the A of X?" / "What is X's A?" -> X.a    "What is my A?" -> user.a
       "Which N is X based in?" -> X.n               "What team does X play for?" -> X.plays_for
       "Which N should I V?" -> recommended_n        "Is the X A?" -> x.a (yes/no)
  Any other question has no factual form: its answer is omitted under a task change (A.1).
"""

from __future__ import annotations

import re

from .facts import USER
from .grammar import PRONOUNS
from .normalize import canon_attr, canon_entity

# -- questions --------------------------------------------------------------------------------------
QUESTION_CLAUSE = re.compile(
    r",\s+(?=(?:so\s+|then\s+|and\s+)?(?:what|which|who|whom|whose|when|where|why|how|should|shall|can|"
    r"could|would|will|do|does|did|is|are|was|were|may|any)\b)",
    re.I,
)
LEAD_CONNECTOR = re.compile(r"^(?:since|as|because|given that|now that|if|so|well|ok|okay)\s*,?\s+", re.I)

_Q = [
    (
        re.compile(
            r"^(?:what|which)\s+(?:is|was|are|were)\s+the\s+(?P<attr>[\w' -]+?)\s+of\s+(?P<x>.+)$", re.I
        ),
        None,
        None,
    ),
    (
        re.compile(r"^(?:what|which)\s+(?:is|was|are|were)\s+(?P<x>my|.+?'s)\s+(?P<attr>[\w -]+)$", re.I),
        None,
        None,
    ),
    (
        re.compile(
            r"^when\s+(?:was|were|is)\s+(?P<x>.+?)\s+(?P<verb>founded|established|created|started|born|released)$",
            re.I,
        ),
        None,
        None,
    ),
    (re.compile(r"^who\s+(?:founded|established|created|started)\s+(?P<x>.+)$", re.I), "founder", "entity"),
    (re.compile(r"^who\s+owns\s+(?P<x>.+)$", re.I), "owner", "entity"),
    (re.compile(r"^where\s+(?:does|did|do)\s+(?P<x>.+?)\s+live$", re.I), "lives_in", "entity"),
    (re.compile(r"^where\s+(?:does|did|do)\s+(?P<x>.+?)\s+work$", re.I), "works_for", "entity"),
    (
        re.compile(r"^where\s+(?:is|was|are)\s+(?P<x>.+?)\s+(?:based|located|headquartered)$", re.I),
        "located_in",
        "entity",
    ),
    (
        re.compile(r"^(?:what|which)\s+(?:team|club)\s+does\s+(?P<x>.+?)\s+play\s+for$", re.I),
        "plays_for",
        "entity",
    ),
    (
        re.compile(
            r"^(?:which|what)\s+(?P<attr>\w+)\s+(?:is|was|are|were)\s+(?P<x>.+?)\s+"
            r"(?:based|located|headquartered)\s+in$",
            re.I,
        ),
        None,
        None,
    ),
    (
        re.compile(
            r"^(?:which|what)\s+(?P<attr>\w+)\s+(?:should|shall|do|can|could|would)\s+(?:i|we)\s+\w+", re.I
        ),
        "recommended",
        None,
    ),
    (
        re.compile(
            r"^(?:is|are|was|were)\s+(?P<x>(?:the|this|that|my|his|her|its|their)\s+\w+)\s+(?P<attr>[\w -]+)$",
            re.I,
        ),
        "yes_no",
        "boolean",
    ),
]
_WHEN = {
    "founded": "founded_in",
    "established": "founded_in",
    "created": "founded_in",
    "started": "founded_in",
}
_POSSESSIVE = re.compile(r"^(?:his|her|its|their)\s+(?P<rest>.+)$", re.I)


def question_fact(question: str, last_subject: str | None) -> tuple[str, str, str | None, bool] | None:
    """The fact a question's answer states: (entity, attribute, value hint, multi-valued), or
    None when the question has no factual form (module docstring, "Questions")."""
    q = question.strip().rstrip("?").strip()
    for rx, kind, hint in _Q:
        m = rx.match(q)
        if not m:
            continue
        g = m.groupdict()
        x = _who(g.get("x"), last_subject)
        if kind == "recommended":
            return "", canon_attr("recommended " + g["attr"]), "categorical", False
        if x is None:
            return None
        if g.get("verb"):
            verb = g["verb"].casefold()
            return x, _WHEN.get(verb, verb + "_in"), None, False
        if kind == "yes_no":
            return x, canon_attr(g["attr"]), "boolean", False
        attr = kind or canon_attr(g["attr"])
        return x, attr, hint, kind == "founder"
    return None


def _who(raw: str | None, last_subject: str | None) -> str | None:
    """Canonical entity of a question's subject; first person is the user, "his club" is the
    last named subject's club, other pronouns need a last subject."""
    if raw is None:
        return ""
    s = raw.strip()
    low = s.casefold()
    if low in ("i", "me", "my", "we"):
        return USER
    m = _POSSESSIVE.match(s)
    if m:
        return canon_entity(f"{last_subject} {m.group('rest')}") if last_subject else None
    if low in PRONOUNS:
        return last_subject
    return canon_entity(s.removesuffix("'s"))
