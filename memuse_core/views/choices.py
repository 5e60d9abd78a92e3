"""Which options a long select box offers (issue 17: pages under a second).

A select box holds every option in the browser: Streamlit's select box builds a collection node
per option on every run that draws it, and with the 8,000 episodes of a large store that alone
took most of a timeline's re-render (about 0.6 CPU-s of 1.3 s idle). A long list is therefore
offered as a window: the options around the current one, or the ones matching what the reader
typed in the box's Find field, never more than `limit`; the current option is always offered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T")

CHOICES_SHOWN = 200
"""Most options a select box offers at once; a longer list gets a Find field."""


class ChoiceWindow(BaseModel, Generic[T]):
    """The options offered (`shown`), how many match the Find text (`matched`) of `total`."""

    shown: list[T]
    matched: int
    total: int

    @property
    def note(self) -> str:
        """What the box offers, in a few words (its help text)."""
        if len(self.shown) >= self.total:
            return f"All {self.total:,} shown."
        return (
            f"{len(self.shown):,} of {self.matched:,} matching shown (of {self.total:,}); type in Find to narrow."
            if self.matched < self.total
            else f"{len(self.shown):,} of {self.total:,} shown, around the selected one; type in Find to narrow."
        )


def choice_window(
    options: Sequence[T],
    current: T | None,
    find: str = "",
    label: Callable[[T], str] = str,
    limit: int = CHOICES_SHOWN,
) -> ChoiceWindow[T]:
    """The options a select box offers: all of them when at most `limit`; else those whose
    label or value contains `find` (case-insensitive), at most `limit`, centred on `current`
    when it is among them. `current` (not None) is always offered, first when it is outside."""
    needle = find.strip().lower()
    matched = (
        [o for o in options if needle in label(o).lower() or needle in str(o).lower()]
        if needle
        else list(options)
    )
    shown = matched
    if len(matched) > limit:
        at = matched.index(current) if current is not None and current in matched else 0
        start = max(0, min(at - limit // 2, len(matched) - limit))
        shown = matched[start : start + limit]
    if current is not None and current not in shown:
        shown = [current, *shown]
    return ChoiceWindow[T](shown=shown, matched=len(matched), total=len(options))
