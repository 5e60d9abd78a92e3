"""Explaining credit windows on the timeline and in the transcript (MemUse 3.3, A.1.5): entry
labels, why a window ends where it does, and the figure's caption."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..charts import is_nan

CAPTION = (
    "Top row: memory deliveries at their consuming steps; ▼ delivery (span start) is the first "
    "delivery of an injection span, labelled with its form; ▽ restated delivery repeats it. Actions "
    "row: one marker per step, coloured by the command it ran; ✖ non-zero exit marks a command that "
    "failed. Each lower row is one delivered entry; its bar is the entry's credit window (MemUse 3.3, "
    "A.1.5): the steps whose actions can be credited to it. A window starts at the span's first "
    "consuming step and ends just before a later copy of the same item takes over the credit, or at "
    "the episode end; removing the text from the input does not close it, and consequences are "
    "followed past its end. Hover a bar for its reason. ◇ empty window: an earlier visible copy of "
    "the item keeps the credit. ■ anchored action: a step the judge credits to the entry; "
    "◯ acted on memory: the same step on the actions row; ★ observed effect: improved (green) or "
    "observed effect: harmed (red). Click a marker to open its step; J / K move to the next / "
    "previous step."
)
"""What the figure shows, in words (the page prints it under the chart)."""


def short(text: Any, n: int = 90) -> str:
    """Text on one line, cut to `n` characters with an ellipsis."""
    s = "" if text is None else str(text).replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def entry_label(row: Mapping[str, Any]) -> str:
    """Row label of a span entry on the timeline."""
    key = row.get("display_key") or row.get("item_id") or f"entry {row.get('pos')}"
    ep, _, delivery = str(row.get("span_id", "")).partition("/")
    rest = delivery.replace(ep, "", 1).lstrip(":-_/") or delivery
    return f"{short(key, 28)} · {short(rest, 16)}#{row.get('pos')}"


def num(v: Any) -> int | None:
    """An integer, or None for a missing value (None, NaN)."""
    return None if is_nan(v) else int(v)


def _same_item(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return (a.get("namespace"), a.get("item_id")) == (b.get("namespace"), b.get("item_id")) and bool(
        a.get("item_id")
    )


def window_reason(entry: Mapping[str, Any], entries: Sequence[Mapping[str, Any]], last_step: int) -> str:
    """Why an entry's credit window ends where it does (A.1.5), in words.

    A window ends at t'-1 (or at t' when t' is the span's last consuming step) where t' is the
    first step of the earliest later span that delivers the same item with text containing this
    entry's exposed text (any later copy when an exposure is unknown); without one it runs to the
    final step. An entry whose earlier copy is still visible gets an empty window (resident copy).
    Removal of the text from the input never ends a window."""
    ws, we = num(entry.get("window_start")), num(entry.get("window_end"))
    if ws is None or we is None:
        status = entry.get("status")
        if status in ("eligible", "auto_neutral", "error") and entry.get("first_step") is not None:
            return (
                "empty window: an earlier copy of this item is still visible in the input and keeps "
                "the credit (resident copy)"
            )
        return f"no window: the span is {status or 'not attributed'}"
    if we >= last_step:
        return (
            "runs to the episode end: no later copy of this item takes over the credit "
            "(dropping the text from the input does not end a window)"
        )
    later = sorted(
        (
            o
            for o in entries
            if o is not entry
            and _same_item(o, entry)
            and o.get("span_id") != entry.get("span_id")
            and num(o.get("first_step")) in (we, we + 1)
        ),
        key=lambda o: num(o.get("first_step")) or 0,
    )
    if later:
        t2 = num(later[0].get("first_step"))
        return (
            f"ends at S{we}: a later copy of this item (span {later[0].get('span_id')}, first "
            f"consumed at S{t2}) contains its text and takes over the credit"
        )
    return f"ends at S{we}: a later copy of this item takes over the credit"


def anchor_steps(v: Any) -> list[int]:
    """The anchored action steps of an entry's assessment (none when missing)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return []
    try:
        return [int(a) for a in v if a is not None]
    except TypeError:
        return []
