"""How values read on a page: recorded names made safe, numbers in their formats, missing values
as "—", episode outcomes and memory states as words, table titles naming their judge.

Pure functions of values and frames (no store): the views build their tables with them and the
pages show the result (`formatted` tables get right-aligned text columns, pages/_text.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import pandas as pd

from .. import textsafe
from ..metrics.render import judge_label


def display_name(value: Any) -> str:
    """A recorded id or name for a widget option or label: one line, control and bidi
    characters made visible (`textsafe.one_line`)."""
    return textsafe.one_line(value)


NumberFormat = Literal["count", "percent", "pp", "decimal", "usd", "tokens", "share"]
"""How a number column is shown: count 1,234; percent 25.0%; pp +1.5 pp; decimal 1.23;
usd $0.0012; tokens 164,393; share (of 100%, 3 significant digits) 0.0123%."""

MISSING = "—"
"""What a missing value shows as (never "None" or "nan")."""

_FORMATS: dict[str, Callable[[float], str]] = {
    "count": lambda v: f"{v:,.0f}",
    "percent": lambda v: f"{v:.1%}",
    "pp": lambda v: f"{v:+.1f} pp",
    "decimal": lambda v: f"{v:,.2f}",
    "usd": lambda v: f"${v:,.4f}",
    "tokens": lambda v: f"{v:,.0f}",
    "share": lambda v: f"{100 * v:.3g}%",
}


OUTCOME_TEXT: dict[str, str] = {"resolved": "resolved", "failed": "not resolved", "no_result": MISSING}
"""How an episode outcome (`vocab.EPISODE_OUTCOMES`) reads in a table or header: an unknown outcome
(no harness result) is "—", never "failed" (A.5.4)."""
OUTCOME_CHOICE_TEXT: dict[str, str] = {**OUTCOME_TEXT, "no_result": "no result (—)"}
"""How an episode outcome reads as a filter choice."""
MEMORY_TEXT: dict[str, str] = {
    "none_delivered": "No memory was delivered",
    "not_built": "not built yet (run memuse build)",
    "built": "built",
}
"""How an episode's memory state (`vocab.MemoryState`) reads: `none_delivered` means no memory
reached the agent at all (nothing to build), distinct from a context not built yet."""


def outcome_text(outcome: Any) -> str:
    """An episode outcome label for display ("—" when unknown)."""
    return OUTCOME_TEXT.get(str(outcome), MISSING) if not _is_missing(outcome) else MISSING


def memory_note(state: str, episode_id: str) -> str:
    """One sentence on why an episode has no spans to show (its memory state); empty when built."""
    if state == "none_delivered":
        return f"No memory was delivered in episode {textsafe.one_line(episode_id)}: it has no spans."
    if state == "not_built":
        return (
            f"Memory was delivered in episode {textsafe.one_line(episode_id)} but its evaluation context "
            "is not built yet: run memuse build."
        )
    return ""


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v) or v is pd.NA or v is pd.NaT


def format_number(v: Any, fmt: NumberFormat, *, signed: bool = False) -> str:
    """One number as text in a format ("—" when missing); `signed` adds "+" to a positive
    difference."""
    if _is_missing(v):
        return MISSING
    text = _FORMATS[fmt](float(v))
    return f"+{text}" if signed and float(v) > 0 and not text.startswith("+") else text


def formatted(df: pd.DataFrame, formats: Mapping[str, NumberFormat]) -> pd.DataFrame:
    """A small summary table for display: the listed number columns as text in their format,
    every missing value as "—", recorded text neutralised. Row order and columns unchanged.

    For tables of a few dozen rows (the Overview's, Compare's, Judge runs'); a big table keeps its
    numbers and uses column formats instead (its sorting stays numeric)."""
    out = display_table(df).copy()
    for c in out.columns:
        fmt = formats.get(str(c))
        col = out[c]
        if fmt is not None:
            out[c] = [MISSING if _is_missing(v) else _FORMATS[fmt](float(v)) for v in col]
        elif col.isna().any():
            out[c] = [MISSING if _is_missing(v) else v for v in col.astype(object)]
    return out


def display_table(df: pd.DataFrame) -> pd.DataFrame:
    """A table for display with recorded text neutralised in every text cell (control, escape and
    bidi characters made visible); row positions and other cells unchanged. Returns `df` itself
    when no cell needs it, so only hostile tables pay for a copy."""
    out: pd.DataFrame | None = None
    for c in df.columns:
        col = df[c]
        if col.dtype != object and pd.api.types.is_string_dtype(col):
            hit = col.str.contains(textsafe.UNSAFE_PATTERN, regex=True, na=False)
        elif col.dtype == object and any(isinstance(v, str) for v in col.dropna().head(100)):
            text = col.map(lambda v: v if isinstance(v, str) else "")
            hit = text.str.contains(textsafe.UNSAFE_PATTERN, regex=True, na=False)
        else:
            continue
        if not hit.any():
            continue
        if out is None:
            out = df.copy()
        out[c] = [textsafe.neutralise(v) if h else v for v, h in zip(col, hit)]
    return df if out is None else out


def judge_title(what: str, judge: str) -> str:
    """A table or chart title naming the judge whose verdicts it shows: "Outcome classes (rules judge)"."""
    return f"{what} ({judge_label(judge)})"
