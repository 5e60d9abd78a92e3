"""Text the rules judge reads once instead of once per use (MemUse A.2.2 read as text rules): a token
pattern is skipped when the text lacks a string every match of it contains, an entry's absence
claims are read once per entry text rather than once per step compared (A.2.2 Accuracy), and an
entry's claims once per text (A.2.2 Novelty). Each gives what the full reading gives."""

from __future__ import annotations

import random

from memuse_core.judge import lexicon, rules_claims
from memuse_core.judge.lexicon import (
    _BACKTICK,
    _TOK_STOP,
    _TOKEN_NEEDS,
    _TOKEN_RES,
    _camel,
    is_path,
    sentences,
)


def _tokens_reference(text: str) -> frozenset[str]:
    """`lexicon.tokens` with every pattern run over the whole text."""
    out: set[str] = set()
    for m in _BACKTICK.finditer(text):
        if len(m.group(1).strip()) >= 2:
            out.add(m.group(1).strip())
    for rx in _TOKEN_RES:
        for m in rx.finditer(text):
            t = m.group(0).strip().strip(".,;:[]'\"")
            if t.endswith("(") or (t.count("(") != t.count(")")):
                t = t.split("(", 1)[0]
            if len(t) >= 4 and t.lower() not in _TOK_STOP:
                out.add(t)
                if "." in t and "/" not in t and " " not in t and "(" not in t and "=" not in t:
                    out.update(p for p in t.split(".") if len(p) >= 4 and ("_" in p or _camel(p)))
    return frozenset(out)


_PIECES = [
    "src/app.py",
    "notes.txt",
    "a.b.c",
    "Printer._print",
    "retry_count",
    "_private_x",
    "CacheClient",
    "--no-cache",
    "-p no:randomly",
    "no:cacheprovider",
    "x == 3",
    "a<b",
    "y // 2",
    "n ** 2",
    "a != b",
    "1.2.3",
    "12345",
    "urllib3",
    "`make test`",
    "k=v",
    "MAX_RETRIES=5",
    "é",
    "ß",
    " ",
    "\n",
    ".",
    "/",
    "_",
    ":",
    "-",
    "=",
    "*",
    ">",
    "word",
    "Error",
]


def test_tokens_skip_only_patterns_that_cannot_match() -> None:
    assert len(_TOKEN_NEEDS) == len(_TOKEN_RES)
    rnd = random.Random(11)
    for _ in range(4000):
        text = "".join(rnd.choices(_PIECES, k=rnd.randint(0, 12)))
        assert lexicon.tokens.__wrapped__(text) == _tokens_reference(text), text


def test_every_match_holds_one_of_the_needed_strings() -> None:
    rnd = random.Random(3)
    for _ in range(3000):
        text = "".join(rnd.choices(_PIECES, k=rnd.randint(1, 10)))
        for rx, needs in zip(_TOKEN_RES, _TOKEN_NEEDS, strict=True):
            for m in rx.finditer(text):
                assert not needs or any(n in m.group(0) for n in needs), (text, m.group(0))


def _absence_reference(text: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    out = []
    for sent in sentences(text):
        if not rules_claims._ABSENCE.search(sent):
            continue
        paths = tuple(k for k in lexicon.tokens(sent) if is_path(k))
        terms = tuple(m.group(1) or m.group(2) for m in rules_claims._QUOTED.finditer(sent))
        out.append((paths, terms))
    return out


def test_absence_claims_are_the_sentences_read_per_step() -> None:
    texts = [
        "",
        "settings.py lacks 'CACHE_TTL'. Add it.",
        "The key \"retry\" is missing from conf/app.yaml; also 'x' not in src/a.py.",
        "Nothing is absent here.",
        "Without 'a' and 'b' in a.py and b.py, tests fail.\nsrc/c.py no longer has 'c'.",
    ]
    for t in texts:
        assert list(rules_claims._absence_claims(t)) == _absence_reference(t)


def test_claims_are_kept_per_text() -> None:
    text = "Use `retry=3`; set MAX_RETRIES. Then run again!\n\nOK"
    assert rules_claims.claims(text) == rules_claims.claims.__wrapped__(text)
    # "Then run again!" holds only stop words and no token: no claim
    assert rules_claims.claims(text) == ("Use `retry=3`", "set MAX_RETRIES.")
