"""A parsed interaction as JSON and back, so a persisted index is parsed once (MemTrim A.1:
"its structured representation is cached with the trie index")."""

from __future__ import annotations

import json
from typing import Any

from .units import EvidenceUnit, Key, Outcome, ParsedInteraction

FORMAT = 1
"""Version of the stored form; a row in another version is re-parsed from its text."""


def _key(k: Key | None) -> list[str] | None:
    return None if k is None else [k.entity, k.attribute, k.vtype]


def dump_parsed(p: ParsedInteraction) -> str:
    """JSON of everything `ParsedInteraction` holds."""
    o = p.outcome
    return json.dumps(
        {
            "format": FORMAT,
            "units": [
                [u.key.entity, u.key.attribute, u.key.vtype, u.value, u.text, u.start, u.end, u.span, u.many]
                for u in p.units
            ],
            "task": p.task,
            "question": p.question,
            "support": sorted(p.support),
            "outcome": None if o is None else [o.task, o.answer, o.value, o.vtype, o.expressible, o.question],
            "ok": p.ok,
            "error": p.error,
            "dropped": p.dropped,
            "support_dropped": p.support_dropped,
            "support_from": p.support_from,
            "open_support": list(p.open_support),
            "fact_key": _key(p.fact_key),
            "restating": sorted(p.restating),
        },
        ensure_ascii=False,
    )


def load_parsed(raw: str) -> ParsedInteraction | None:
    """The interaction `dump_parsed` wrote; None for another format version."""
    d: dict[str, Any] = json.loads(raw)
    if d.get("format") != FORMAT:
        return None
    o = d["outcome"]
    fk = d["fact_key"]
    return ParsedInteraction(
        units=[
            EvidenceUnit(Key(e, a, t), v, text, s, end, span, many)
            for e, a, t, v, text, s, end, span, many in d["units"]
        ],
        task=d["task"],
        question=d["question"],
        support=frozenset(d["support"]),
        outcome=None if o is None else Outcome(o[0], o[1], o[2], o[3], o[4], o[5]),
        ok=d["ok"],
        error=d["error"],
        dropped=d["dropped"],
        support_dropped=d["support_dropped"],
        support_from=d["support_from"],
        open_support=tuple(d["open_support"]),
        fact_key=None if fk is None else Key(*fk),
        restating=frozenset(d["restating"]),
    )
