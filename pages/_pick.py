"""A select box for a long list of options (episodes, tasks): offered as a window of at most
`views.choices.CHOICES_SHOWN` options with a Find field beside it, so the browser does not build
thousands of options on every run (issue 17: pages under a second). A short list is a plain
select box."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st

from memuse_core.views.choices import CHOICES_SHOWN, choice_window

T = TypeVar("T")


def select_long(
    label: str,
    options: Sequence[T],
    *,
    key: str,
    format_func: Callable[[Any], str] = str,
    **kwargs: Any,
) -> T:
    """`st.selectbox(label, options, key=key, ...)` for a list of any length: over
    CHOICES_SHOWN options, a Find field (key `<key>_find`) narrows what the box offers, and the
    box offers the options around its current value (always included); the box's help says how
    many of how many are offered. The value is read from `st.session_state[key]` as set by the
    caller (seeded selection), else the first option."""
    if len(options) <= CHOICES_SHOWN:
        return st.selectbox(label, options, key=key, format_func=format_func, **kwargs)  # type: ignore[no-any-return]
    box, find = st.columns([4, 1], vertical_alignment="bottom")
    text = find.text_input("Find", key=f"{key}_find", placeholder="part of a name")
    current = st.session_state.get(key)
    win = choice_window(options, current if current in options else None, text, label=format_func)
    if not win.shown:
        win = choice_window(options, options[0])
    if st.session_state.get(key) not in win.shown:
        st.session_state[key] = win.shown[0]
    return box.selectbox(  # type: ignore[no-any-return]
        label, win.shown, key=key, format_func=format_func, help=win.note, **kwargs
    )
