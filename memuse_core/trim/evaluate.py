"""Raw memory vs MemTrim on TA / TD-Dup pairs (MemTrim Section 2 metrics, Table 1; pairs from C.3).

Without a model this measures the context each method builds for every pair:

- `stale_answer_exposure` (TD-Dup): share of pairs whose stored answer reaches the context;
- `answer_retained` (TA): share of pairs whose still-valid stored answer reaches the context;
- `memory_only_units`: mean memory-only evidence units delivered per pair;
- `conflicts_removed`: mean conflicting units taken out per pair (0 for raw memory);
- `chars`: mean characters of memory context per pair.

The key that does not apply to a condition is null. Raw memory is the stored interaction with
its answer, as a memory system such as Mem0 passes it (B.4). With a model it also asks every
query three ways (no memory, raw memory, MemTrim context) and reports accuracy per condition and,
on TD-Dup pairs, the ✓→✗ (correct without memory, wrong with it) and ✗→✓ counts of Table 1.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cladder import Pair
from .core import MemTrim

CONDITIONS = ("TA", "TD-Dup")
METHODS = ("raw", "memtrim")

SYSTEM = (
    "You answer causal-reasoning questions about a hypothetical world. Earlier interactions may be "
    "shown as memory; use them only where they apply to the current question. Reply with one word: "
    "yes or no."
)


def raw_context(p: Pair) -> str:
    """The stored interaction as an ordinary memory system passes it, answer included."""
    return "Relevant memory:\n" + p.memory.text + "\nAnswer: " + p.memory.answer


@dataclass
class PairOutcome:
    """What each method delivered for one pair."""

    pair: Pair
    contexts: dict[str, str]
    answer_exposed: dict[str, bool]
    memory_only: dict[str, int]
    conflicts_removed: dict[str, int]
    decision: str
    predictions: dict[str, str | None] = field(default_factory=dict)


def measure(pairs: list[Pair], trimmer: MemTrim | None = None) -> list[PairOutcome]:
    """Write every stored interaction once, then build both contexts for every pair."""
    trimmer = trimmer or MemTrim()
    for p in pairs:
        if p.memory.qid not in trimmer.memories:
            trimmer.write(p.memory.qid, p.memory.text, p.memory.answer)
    out = []
    for p in pairs:
        res = trimmer.read(p.query.text, [p.memory.qid])
        d = res.decisions[p.memory.qid]
        exposed = d.outcome_unit is not None and any(u is d.outcome_unit for u in d.emitted)
        n_only = sum(1 for u in d.memory_only if u.key.attribute != "subject")
        kept_only = sum(1 for u in d.emitted if u.key.attribute != "subject" and u is not d.outcome_unit)
        out.append(
            PairOutcome(
                pair=p,
                contexts={"raw": raw_context(p), "memtrim": res.context},
                answer_exposed={"raw": True, "memtrim": exposed},
                memory_only={"raw": n_only, "memtrim": kept_only},
                conflicts_removed={"raw": 0, "memtrim": len(d.conflicting)},
                decision=d.outcome,
            )
        )
    return out


def summarize(outcomes: list[PairOutcome]) -> dict[str, Any]:
    """Per condition and method, the five context metrics (module docstring)."""
    res: dict[str, Any] = {}
    for cond in CONDITIONS:
        rows = [o for o in outcomes if o.pair.condition == cond]
        n = len(rows)
        block: dict[str, Any] = {"pairs": n}
        for m in METHODS:
            exp = sum(o.answer_exposed[m] for o in rows) / n if n else None
            block[m] = {
                "stale_answer_exposure": exp if cond == "TD-Dup" else None,
                "answer_retained": exp if cond == "TA" else None,
                "memory_only_units": sum(o.memory_only[m] for o in rows) / n if n else None,
                "conflicts_removed": sum(o.conflicts_removed[m] for o in rows) / n if n else None,
                "chars": sum(len(o.contexts[m]) for o in rows) / n if n else None,
            }
        block["decisions"] = {
            k: sum(1 for o in rows if o.decision == k) for k in ("kept", "relabelled", "suppressed", "none")
        }
        res[cond] = block
    return res


# -- asking a model (Table 1) ----------------------------------------------------------------------
_YESNO = re.compile(r"\b(yes|no)\b", re.I)


def parse_yes_no(text: str | None) -> str | None:
    """First yes/no in a reply (lower case), None when there is none."""
    m = _YESNO.search(text or "")
    return m.group(1).lower() if m else None


def ask_model(
    outcomes: list[PairOutcome],
    model: str,
    base_url: str | None,
    api_key: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Ask every query without memory, with raw memory and with the MemTrim context; return
    accuracy per condition and method and the TD-Dup ✓→✗ / ✗→✓ counts (Table 1)."""
    import os

    import openai

    client = openai.OpenAI(base_url=base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "unused")

    def ask(ctx: str, query: str) -> str | None:
        user = (ctx + "\n\nCurrent question:\n" if ctx else "") + query + "\nAnswer yes or no."
        r = client.chat.completions.create(
            model=model,
            temperature=0,
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
        )
        return parse_yes_no(r.choices[0].message.content if r.choices else None)

    for i, o in enumerate(outcomes):
        o.predictions["no_memory"] = ask("", o.pair.query.text)
        for m in METHODS:
            o.predictions[m] = ask(o.contexts[m], o.pair.query.text)
        if progress:
            progress(i + 1)
    out: dict[str, Any] = {}
    for cond in CONDITIONS:
        rows = [o for o in outcomes if o.pair.condition == cond]
        n = len(rows)
        block: dict[str, Any] = {}
        for m in ("no_memory", *METHODS):
            ok = [o.predictions[m] == o.pair.query.answer for o in rows]
            entry: dict[str, Any] = {"accuracy": sum(ok) / n if n else None}
            if cond == "TD-Dup" and m != "no_memory":
                base = [o.predictions["no_memory"] == o.pair.query.answer for o in rows]
                entry["correct_to_wrong"] = sum(1 for b, x in zip(base, ok) if b and not x)
                entry["wrong_to_correct"] = sum(1 for b, x in zip(base, ok) if not b and x)
            block[m] = entry
        out[cond] = block
    return out
