"""Agreement of a judge with the demo corpus's planted truth, per signal: a consistency check of the
judge against what the demo generator planted, not a measure of validity."""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel

from ..store import connect
from ..store.judging import planted_agreement_rows


class SignalAgreement(BaseModel):
    """Agreement on one signal over the entries where the planted value is defined."""

    signal: str
    n: int
    agree: int

    @property
    def rate(self) -> float | None:
        return self.agree / self.n if self.n else None


def _norm(x: Any) -> Any:
    return None if x in (None, "undetermined") else x


def planted_agreement(db: str | os.PathLike[str] | None, judge: str = "rules") -> list[SignalAgreement]:
    """Per-signal agreement between current verdicts of `judge` and the planted truth."""
    con = connect(db, read_only=True)
    try:
        rows = planted_agreement_rows(con, judge)
    finally:
        con.close()
    out: dict[str, list[int]] = {}

    def add(name: str, ok: bool) -> None:
        c = out.setdefault(name, [0, 0])
        c[0] += 1
        c[1] += int(ok)

    for pr, pn, pi, pe, jr, jn, ji, je, anchor, anchors in rows:
        pi, pe, pn = _norm(pi), _norm(pe), _norm(pn)
        add("relevance", pr == jr)
        add("novelty", pn == jn)
        add("influence", pi == ji)
        if pi in ("acted_on", "none"):
            add("influence (planted acted_on vs none)", pi == ji)
        if pi == "acted_on":
            add("acted_on recall", ji == "acted_on")
            add("effect (planted acted_on)", pe == (je if ji == "acted_on" else None))
            if anchor is not None:
                add("anchor hit (planted acted_on)", anchor in (anchors or []))
        if pi == "none":
            add("none recall", ji == "none")
        if pi == "selected":
            add("selected recall", ji == "selected")
        if pi == "referenced":
            add("referenced recall", ji == "referenced")
    return [SignalAgreement(signal=k, n=v[0], agree=v[1]) for k, v in out.items()]
