"""Asking a model in `memuse trim-eval` (MemTrim Table 1 / Table 2 columns): every query with no
memory, with raw memory and with MemTrim's context, through any OpenAI-compatible endpoint
(offline: the scripted server of `memuse_core.judge.scripted_server`).

Accuracy per set, condition and method, and on TD-Dup pairs the ✓→✗ (correct without memory,
wrong with it) and ✗→✓ counts. Identical prompts are asked once (temperature 0): where MemTrim's
context is empty its prompt is the no-memory prompt.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from .cladder import SETS
from .evaluate import CONDITIONS, METHODS, PairOutcome

SYSTEM = (
    "You answer causal-reasoning questions about a hypothetical world. Earlier interactions may be "
    "shown as memory; use them only where they apply to the current question. Reply with one word: "
    "yes or no."
)
_YESNO = re.compile(r"\b(yes|no)\b", re.I)


def parse_yes_no(text: str | None) -> str | None:
    """First yes/no in a reply (lower case), None when there is none."""
    m = _YESNO.search(text or "")
    return m.group(1).lower() if m else None


def prompt(context: str, query: str) -> str:
    """The user message: the memory context (when any), then the current question."""
    return (context + "\n\nCurrent question:\n" if context else "") + query + "\nAnswer yes or no."


def ask_model(
    outcomes: list[PairOutcome],
    model: str,
    base_url: str | None,
    api_key: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Fill `predictions` of every outcome and return the model block per set and condition
    (`{"sets": {set: {cond: {...}}}, "all": {cond: {...}}, "requests": n}`)."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "unused")
    asked: dict[str, str | None] = {}

    def ask(text: str) -> str | None:
        if text not in asked:
            r = client.chat.completions.create(
                model=model,
                temperature=0,
                messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}],
            )
            asked[text] = parse_yes_no(r.choices[0].message.content if r.choices else None)
        return asked[text]

    for i, o in enumerate(outcomes):
        for m in METHODS:
            o.predictions[m] = ask(prompt(o.contexts[m], o.pair.query.text))
        if progress:
            progress(i + 1)
    present = {o.pair.memory.dataset for o in outcomes}
    sets = [s for s in SETS if s in present] + sorted(present - set(SETS))
    out: dict[str, Any] = {"sets": {}, "requests": len(asked)}
    for s in sets:
        out["sets"][s] = {
            c: model_block([o for o in outcomes if o.pair.memory.dataset == s and o.pair.condition == c], c)
            for c in CONDITIONS
        }
    out["all"] = {c: model_block([o for o in outcomes if o.pair.condition == c], c) for c in CONDITIONS}
    return out


def model_block(rows: list[PairOutcome], cond: str) -> dict[str, Any]:
    """Accuracy per method; ✓→✗ / ✗→✓ against no memory on TD-Dup pairs (Table 1)."""
    n = len(rows)
    base = [o.predictions["no_memory"] == o.pair.query.answer for o in rows]
    block: dict[str, Any] = {}
    for m in METHODS:
        ok = [o.predictions[m] == o.pair.query.answer for o in rows]
        entry: dict[str, Any] = {"accuracy": sum(ok) / n if n else None}
        if cond == "TD-Dup" and m != "no_memory":
            entry["correct_to_wrong"] = sum(1 for b, x in zip(base, ok) if b and not x)
            entry["wrong_to_correct"] = sum(1 for b, x in zip(base, ok) if not b and x)
        block[m] = entry
    return block
