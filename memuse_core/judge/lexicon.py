"""Lexical helpers of the rules judge: distinctive tokens, stemmed content words, sentences and the
markers of hedging, deferral and explicit credit (MemUse A.2.2 read as text rules).

Pure functions over strings, memoized where the judge calls them repeatedly. What the rules judge
decides with them is in `judge.rules_claims` (relevance, novelty, accuracy) and `judge.rules_use`
(influence, observed effect).
"""

from __future__ import annotations

import re
from functools import lru_cache

# ---- Distinctive tokens: identifiers, paths, values, commands, settings ----------------------
_BACKTICK = re.compile(r"`([^`\n]{1,120})`")
_TOKEN_RES = [
    re.compile(  # paths (a token starts after a non-path character: no start is retried)
        r"(?<![\w./-])(?:[\w.-]+/)+[\w.-]*[\w-]|(?<![\w./-])[\w-]+\."
        r"(?:py|js|ts|rs|go|java|rb|cfg|toml|ya?ml|json|ini|txt|md|csv|html|sh|env|lock)\b"
    ),
    re.compile(
        r"(?<![\w.])[A-Za-z_][\w]*=(?:\{[^}\n]{0,60}\}|'[^'\n]{0,60}'|\"[^\"\n]{0,60}\"|[\w.:/<>-]+)"
    ),  # k=v
    re.compile(
        r"(?<!\w)_*[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\([^()\n]{0,60}\))?"
    ),  # dotted
    re.compile(r"(?<![\w-])_*[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+(?![\w-])"),  # snake_case
    re.compile(r"(?<!\w)_+[A-Za-z][A-Za-z0-9]{3,}(?!\w)"),  # _private
    re.compile(r"(?<!\w)_*[a-z]+[A-Z][A-Za-z0-9]*|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"),  # camel/CapWords
    re.compile(r"(?<![\w-])--[a-zA-Z][\w-]+"),  # long flags
    re.compile(r"(?<![\w-])-[a-zA-Z] [a-z]+:[a-z][\w-]*"),  # -p no:plugin
    re.compile(r"(?<![\w/:])[a-z]+:[a-z][\w-]*(?![\w/:])"),  # no:randomly
    re.compile(  # expressions
        r"(?<![\w.()'\"])[\w.()'\"]+(?:\s?(?:\*\*|//|==|!=|<=|>=|\*|<|>)\s?[\w.()'\"]+)+"
    ),
    re.compile(r"\b\d+\.\d+(?:\.\d+)*\b|\b\d{3,}\b"),  # versions, values
    re.compile(r"\b[A-Za-z]+\d+[A-Za-z0-9]*\b"),  # flake8, cp1252, urllib3, F401
]
_TOKEN_NEEDS: list[tuple[str, ...]] = [
    ("/", "."),  # paths: a slash, or a dot before the extension
    ("=",),  # k=v
    (".",),  # dotted
    ("_",),  # snake_case
    ("_",),  # _private
    (),  # camel/CapWords
    ("--",),  # long flags
    (":",),  # -p no:plugin
    (":",),  # no:randomly
    ("*", "<", ">", "//", "==", "!="),  # expressions: an operator
    (),  # versions, values
    (),  # flake8, cp1252
]
"""Per pattern of `_TOKEN_RES`: strings one of which every match contains (none: no such test)."""
_PATHLIKE = re.compile(r"/|\.(?:py|js|ts|rs|go|java|rb|cfg|toml|ya?ml|json|ini|txt|md|csv|html|sh|env|lock)$")
_TOK_STOP = {"self", "none", "true", "false", "e.g", "i.e", "etc."}

# ---- Content words -------------------------------------------------------------------------
STOP = frozenset(
    """a an the and or but if then else when while after before since until of in on at to for from
    with without by as into onto over under about between through per via than that this these those
    there here it its it's is are was were be been being am do does did done has have had having can
    could may might must should would will shall not no nor so too very also only just all any each
    every some such own same other others more most less few many much one two three first second
    last next new old i me my we our you your he she they them their what which who whom whose how why
    where let lets get gets got make makes made use uses used using run runs ran running need needs
    needed require requires required call calls called take takes set sets add adds added keep keeps
    fix fixes fixed fixing instead always never now yet still again once more src py lib tests test
    file files code line lines error errors fail fails failed failing failure failures pass passes
    passed passing work works repo repository module function value values way thing things case
    edit editing change changes changed check checks checking look see try tried like want""".split()
)


def stem(w: str) -> str:
    """A light suffix stripper: enough to match `retries`/`retry`, `durations`/`duration`,
    `intermittently`/`intermittent`, `caching`/`cache`."""
    w = w.lower()
    for suf, rep in (("ies", "y"), ("ly", ""), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suf) and len(w) - len(suf) >= 4 and not w.endswith("ss"):
            w = w[: -len(suf)] + rep
            break
    return w


_PIECE = re.compile(r"[A-Z]*[a-z][a-z0-9]*|[A-Z][A-Z0-9]*")
"""Word pieces: identifiers split at underscores, dots and lower-to-upper case changes."""
_STEMS: dict[str, str] = {}
"""Word piece -> its stem, or "" for a stop word (a cache: the judge sees the same words often)."""


def _stem_of(piece: str) -> str:
    got = _STEMS.get(piece)
    if got is None:
        low = piece.lower()
        got = "" if low in STOP else stem(low)
        if got in STOP:
            got = ""
        if len(_STEMS) < 500_000:
            _STEMS[piece] = got
    return got


@lru_cache(maxsize=8192)
def tokens(text: str) -> frozenset[str]:
    """Distinctive tokens of a text: backquoted commands, paths, settings (`k=v`), dotted and
    snake/camel identifiers, flags, plugin switches, code expressions, versions and values."""
    out: set[str] = set()
    for m in _BACKTICK.finditer(text):
        if len(m.group(1).strip()) >= 2:
            out.add(m.group(1).strip())
    for rx, needs in zip(_TOKEN_RES, _TOKEN_NEEDS, strict=True):
        if needs and not any(n in text for n in needs):
            continue  # the pattern cannot match without one of these (most short texts)
        for m in rx.finditer(text):
            t = m.group(0).strip().strip(".,;:[]'\"")
            if t.endswith("(") or (t.count("(") != t.count(")")):
                t = t.split("(", 1)[0]
            if len(t) >= 4 and t.lower() not in _TOK_STOP:
                out.add(t)
                if "." in t and "/" not in t and " " not in t and "(" not in t and "=" not in t:
                    out.update(p for p in t.split(".") if len(p) >= 4 and ("_" in p or _camel(p)))
    return frozenset(out)


_EXPR_CHAR = re.compile(r"[\w.()'\"]")
"""A character of an operand of the expression pattern (the one token pattern whose `\\s?` can
take a line break)."""


def tokens_of_parts(parts: list[str]) -> frozenset[str]:
    """`tokens("\\n".join(parts))` from the (cached) tokens of each part: texts joined from parts
    that recur (an episode's task, a failure output) cost only their new parts.

    The same set: no token pattern crosses a line break except an expression whose operator is
    separated from an operand by it (`x <` + line break + `y`); where a part boundary allows one
    (an operand character on one side of the break, an operator character on the other), the
    joined text is read instead."""
    for a, b in zip(parts, parts[1:], strict=False):
        x, y = a[-1:], b[:1]
        if x and y and ((_EXPR_CHAR.match(x) and y in "*/=!<>") or (x in "*/=<>" and _EXPR_CHAR.match(y))):
            return tokens("\n".join(parts))
    out: set[str] = set()
    for part in parts:
        out |= tokens(part)
    return frozenset(out)


def words_of_parts(parts: list[str], minimum: int = 4) -> frozenset[str]:
    """`words("\\n".join(parts), minimum)` from the (cached) words of each part: no word piece and
    no backquoted span crosses a line break."""
    out: set[str] = set()
    for part in parts:
        out |= words(part, minimum)
    return frozenset(out)


def _camel(p: str) -> bool:
    return re.search(r"[a-z][A-Z]", p) is not None


@lru_cache(maxsize=65536)
def is_path(tok: str) -> bool:
    """A file or directory location (`src/dates.py`, `notes.txt`), not a claim's content."""
    return " " not in tok and "=" not in tok and _PATHLIKE.search(tok) is not None


def prose(text: str) -> str:
    """The text with backquoted commands removed (their words are not separate words)."""
    return _BACKTICK.sub(" ", text)


@lru_cache(maxsize=16384)
def words(text: str, minimum: int = 4) -> frozenset[str]:
    """Stemmed content words of a text, identifiers split into their parts, stop words and words
    shorter than `minimum` dropped."""
    out = set()
    known = _STEMS.get  # the stem cache first: most pieces were seen before
    for piece in set(_PIECE.findall(prose(text))):  # each distinct piece once (the result is a set)
        w = known(piece)
        if w is None:
            w = _stem_of(piece)
        if len(w) >= minimum:
            out.add(w)
    return frozenset(out)


def has_stem(text: str, w: str, low: str | None = None) -> bool:
    """A word with stem `w` (as `words` gives it) starts in `text`: at a word boundary, or as a
    capitalised part of an identifier (`CacheClient` holds `client`). `low` is `text.lower()`
    when the caller has it."""
    low = text.lower() if low is None else low
    for form in (w, w[:-1] + "ie") if w.endswith("y") else (w,):
        i = low.find(form)
        while i >= 0:
            if i == 0 or not low[i - 1].isalnum():
                return True
            i = low.find(form, i + 1)
        cap = form[:1].upper() + form[1:]
        i = text.find(cap)
        while i >= 0:
            if i > 0 and text[i - 1].islower():
                return True
            i = text.find(cap, i + 1)
    return False


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def has(text: str, k: str) -> bool:
    """`k` occurs in `text` as a whole token (not inside a longer identifier, path part or id).

    The same test as the pattern `(?<![\\w-])k(?![\\w]|-\\w)`, done with `str.find` and a look at
    the neighbouring characters (this runs for every token against every step of every span)."""
    i = text.find(k)
    if i < 0 or not k:
        return False
    n, end = len(k), len(text)
    while i >= 0:
        if i == 0 or not (_word_char(text[i - 1]) or text[i - 1] == "-"):
            j = i + n
            if j >= end:
                return True
            c = text[j]
            if not _word_char(c) and not (c == "-" and j + 1 < end and _word_char(text[j + 1])):
                return True
        i = text.find(k, i + 1)
    return False


# ---- Sentences and what they do -------------------------------------------------------------
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\[`(])|\n+")
HEDGE = re.compile(
    r"\b(?:maybe|might|perhaps|possibly|probably|suspect|hypothes\w*|guess|not sure|not confirmed|"
    r"unconfirmed|could be|may be|may|wonder|whether)\b",
    re.I,
)
DEFER = re.compile(r"\b(?:later|maybe|might|may|perhaps|could|would|not now|not yet|instead of that)\b", re.I)
_MEMORY = re.compile(r"\bmemor(?:y|ies)\b|\brecall(?:ed)?\b|\bcard\b", re.I)
_CREDIT = re.compile(
    r"\b(?:says|said|suggests|suggested|recommends|recommended|advises|tells|told|confirms|"
    r"confirmed|per|according to|following|follow|as (?:the )?memory)\b",
    re.I,
)
RERUN = re.compile(r"\b(?:again|once more|re-?run|repeat)\b", re.I)


@lru_cache(maxsize=8192)
def sentences(text: str) -> tuple[str, ...]:
    """The sentences of an agent's text (split at sentence ends and line breaks)."""
    return tuple(s.strip() for s in _SENT.split(text) if s and s.strip())


@lru_cache(maxsize=65536)
def hedged(sentence: str) -> bool:
    """An expressed open possibility: maybe, might, perhaps, not sure, a hypothesis..."""
    return HEDGE.search(sentence) is not None


@lru_cache(maxsize=65536)
def deferred(sentence: str) -> bool:
    """A sentence that puts something off or only considers it (later, may, might, would)."""
    return DEFER.search(sentence) is not None


def credits_memory(sentence: str, names: tuple[str, ...], generic: bool = True) -> bool:
    """The sentence credits memory for what the agent does (A.2.2 "explicitly credits the entry"):
    it names one of `names` (item id, display key), or memory in general when `generic`, and says
    the memory says, suggests, confirms or is being followed."""
    named = any(n and n in sentence for n in names) or (generic and _MEMORY.search(sentence) is not None)
    return named and _CREDIT.search(sentence) is not None and not deferred(sentence)


def mentions(sentence: str, names: tuple[str, ...]) -> bool:
    """The sentence names an entry by one of its identifiers."""
    return any(n and has(sentence, n) for n in names)
