"""No memory vs raw memory vs MemTrim on TA / TD-Dup pairs (MemTrim Section 2 metrics, Table 1;
Section 4 Table 2; pairs from C.3).

Every method's context is measured the same way, from its text (nothing is filled in):

- `answer`: share of pairs whose context carries the stored answer (an `Answer:` line, MemTrim's
  kept-answer line, or the answer filed as a fact under its key) — the stale-answer exposure on
  TD-Dup pairs, the retained answer on TA pairs;
- `shared`, `conflicting`, `memory_only`: mean evidence units per pair in the context (header
  and answer lines left out), parsed with the deterministic parser and split against the query's units as
  in 3.3;
- `chars` and `tokens` (vocab.estimate_tokens) of the memory context per pair.

`no_memory` has an empty context; `raw` is the stored interaction with its answer, as a memory
system such as Mem0 passes it (B.4); `memtrim` is MemTrim's context. Per condition MemTrim's
decisions, the pairs whose change hits the support set, and the pairs with an empty MemTrim
context are counted: `fixed_by_construction` states which figures these counts fix. With a
model (`eval_model`), accuracy and the TD-Dup ✓→✗ / ✗→✓ counts of Table 1 are added.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..vocab import TRIM_OUTCOMES, estimate_tokens
from .cladder import SETS, Pair
from .core import MemTrim
from .decide import CONTEXT_HEADER, KEPT_LABEL, QueryEvidence
from .parse_det import DeterministicParser
from .units import canon_text

CONDITIONS = ("TA", "TD-Dup")
METHODS = ("no_memory", "raw", "memtrim")
FIGURES = ("answer", "shared", "conflicting", "memory_only", "chars", "tokens")
_ANSWER_LINE = re.compile(
    r"^(?:-\s*)?(?:answer|" + re.escape(KEPT_LABEL) + r")\s*:\s*(?P<a>.+?)\s*$", re.I | re.M
)


RAW_HEADER = "Relevant memory:"
FRAMING = frozenset({RAW_HEADER, CONTEXT_HEADER})
"""Header lines of the contexts: framing, not evidence (left out when the units are counted)."""


def raw_context(p: Pair) -> str:
    """The stored interaction as an ordinary memory system passes it, answer included."""
    return RAW_HEADER + "\n" + p.memory.text + "\nAnswer: " + p.memory.answer


@dataclass
class PairOutcome:
    """What each method delivered for one pair."""

    pair: Pair
    contexts: dict[str, str]
    figures: dict[str, dict[str, float]]
    decision: str
    support_changed: bool
    predictions: dict[str, str | None] = field(default_factory=dict)


def answer_in(context: str, answer: str, fact_line: str | None) -> bool:
    """Whether a context carries the stored answer: as an answer line, or as MemTrim's fact line."""
    want = canon_text(answer)
    if any(canon_text(m.group("a")) == want for m in _ANSWER_LINE.finditer(context)):
        return True
    return fact_line is not None and any(ln.strip("- ").strip() == fact_line for ln in context.splitlines())


def context_figures(
    context: str, qe: QueryEvidence, answer: str, fact_line: str | None, det: DeterministicParser
) -> dict[str, float]:
    """The figures of one context (module docstring)."""
    shared = conflicting = only = 0
    evidence = "\n".join(
        ln for ln in context.splitlines() if ln.strip() not in FRAMING and not _ANSWER_LINE.match(ln)
    )
    for u in det.parse(evidence).units:
        if u.key.attribute == "subject":
            continue
        if (u.key, u.value) in qe.kvs:
            shared += 1
        elif u.key in qe.keys and not u.many:
            conflicting += 1
        else:
            only += 1
    return {
        "answer": float(answer_in(context, answer, fact_line)),
        "shared": shared,
        "conflicting": conflicting,
        "memory_only": only,
        "chars": len(context),
        "tokens": estimate_tokens(len(context)),
    }


def measure(
    pairs: list[Pair], trimmer: MemTrim | None = None, progress: Callable[[int], None] | None = None
) -> list[PairOutcome]:
    """Write every stored interaction once (with its estimand's support set), then build and
    measure the three contexts for every pair."""
    trimmer = trimmer or MemTrim()
    det = DeterministicParser()
    for p in pairs:
        mid = (p.memory.dataset, p.memory.qid)
        if mid not in trimmer.memories:
            support = list(p.memory.support) if p.memory.support is not None else None
            trimmer.write(mid, p.memory.text, p.memory.answer, support=support)
    out = []
    for p in pairs:
        mid = (p.memory.dataset, p.memory.qid)
        res = trimmer.read(p.query.text, [mid])
        d = res.decisions[mid]
        fk = trimmer.memories[mid].parsed.fact_key
        fact_line = (
            f"{fk.entity + ' ' if fk.entity else ''}{fk.attribute.replace('_', ' ')}: {p.memory.answer}"
            if fk
            else None
        )
        qe = QueryEvidence.of(det.parse(p.query.text).units)
        contexts = {"no_memory": "", "raw": raw_context(p), "memtrim": res.context}
        out.append(
            PairOutcome(
                pair=p,
                contexts=contexts,
                figures={
                    m: context_figures(c, qe, p.memory.answer, fact_line, det) for m, c in contexts.items()
                },
                decision=d.outcome,
                support_changed=bool(d.support_conflicts),
            )
        )
        if progress:
            progress(1)
    return out


def _block(rows: list[PairOutcome], candidates: int | None = None) -> dict[str, Any]:
    n = len(rows)
    block: dict[str, Any] = {"pairs": n}
    if candidates is not None:
        block["candidates"] = candidates
    block["methods"] = {
        m: {f: (sum(o.figures[m][f] for o in rows) / n if n else None) for f in FIGURES} for m in METHODS
    }
    block["decisions"] = {k: sum(1 for o in rows if o.decision == k) for k in TRIM_OUTCOMES}
    block["support_changed"] = sum(o.support_changed for o in rows)
    block["empty_memtrim_context"] = sum(1 for o in rows if not o.contexts["memtrim"])
    return block


def summarize(
    outcomes: list[PairOutcome], candidates: dict[tuple[str, str], int] | None = None
) -> dict[str, Any]:
    """Figures per set and condition, and over all sets ("all"), with the statements of what
    is fixed by construction."""
    sets = [s for s in SETS if any(o.pair.memory.dataset == s for o in outcomes)]
    sets += sorted({o.pair.memory.dataset for o in outcomes} - set(sets))
    res: dict[str, Any] = {"sets": {}}
    for s in sets:
        res["sets"][s] = {
            c: _block(
                [o for o in outcomes if o.pair.memory.dataset == s and o.pair.condition == c],
                (candidates or {}).get((s, c)),
            )
            for c in CONDITIONS
        }
    res["all"] = {c: _block([o for o in outcomes if o.pair.condition == c]) for c in CONDITIONS}
    res["fixed_by_construction"] = fixed_by_construction(res["all"])
    return res


def fixed_by_construction(all_sets: dict[str, Any]) -> list[str]:
    """Which figures the construction fixes, with the counts that show it."""
    ta, td = all_sets["TA"], all_sets["TD-Dup"]
    n = ta["pairs"] + td["pairs"]
    empty = ta["empty_memtrim_context"] + td["empty_memtrim_context"]
    return [
        "no_memory: every figure is 0 by definition (the model sees only the query).",
        "raw: the memory is passed whole with its `Answer:` line, so `answer` is 100% on every pair "
        "(measured, but it cannot differ), and its shared / conflicting units are the memory's own.",
        "memtrim: Eq. (1) never passes a unit the query states or contradicts, so its `shared` and "
        "`conflicting` are 0 by construction (the measured values check it).",
        f"C.3 keeps only pairs that change a quantity the query's reasoning uses; where that quantity is "
        f"one the stored estimand names, Eq. (1) must suppress the answer: {ta['support_changed']} of "
        f"{ta['pairs']} TA and {td['support_changed']} of {td['pairs']} TD-Dup pairs, so MemTrim's TA "
        f"`answer` cannot exceed {_share(ta['pairs'] - ta['support_changed'], ta['pairs'])}.",
        f"MemTrim's context is empty on {empty} of {n} pairs (the query restates every stored quantity "
        "and the answer is suppressed): there a model's MemTrim prompt is its no-memory prompt, so "
        "those answers are the same by construction.",
    ]


def _share(k: int, n: int) -> str:
    return f"{k / n:.1%}" if n else "-"


def table(result: dict[str, Any]) -> list[str]:
    """The figures as text lines (one row per set, condition and method)."""
    head = (
        f"{'set':<6} {'cond':<7} {'pairs':>5} {'method':<10} {'answer':>7} {'shared':>7} {'conflict':>8} "
        f"{'mem_only':>8} {'chars':>7} {'tokens':>6}  memtrim decisions"
    )
    lines = [head]
    blocks = [(s, c, b) for s, per in result["sets"].items() for c, b in per.items()]
    blocks += [("all", c, b) for c, b in result["all"].items()]
    for s, c, b in blocks:
        for i, m in enumerate(METHODS):
            f = b["methods"][m]
            dec = ""
            if m == "memtrim":
                dec = " ".join(f"{k} {v}" for k, v in b["decisions"].items() if v) + (
                    f"; support changed {b['support_changed']}, empty {b['empty_memtrim_context']}"
                )
            lines.append(
                f"{s if i == 0 else '':<6} {c if i == 0 else '':<7} {b['pairs'] if i == 0 else '':>5} {m:<10} "
                f"{_pct(f['answer']):>7} {_num(f['shared']):>7} {_num(f['conflicting']):>8} "
                f"{_num(f['memory_only']):>8} {_num(f['chars'], 0):>7} {_num(f['tokens'], 0):>6}  {dec}"
            )
    return lines


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _num(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"
