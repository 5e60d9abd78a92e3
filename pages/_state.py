"""Page state kept across pages, reruns and the URL: the shared selections (episode, span, step,
item), settings kept in session state, the sidebar's scope and judge, and the query parameters
that make every page's URL reproduce its view (`write_url` / `from_url`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from memuse_core.vocab import JUDGE_KINDS, JudgeKind

SHARED = ("episode", "span", "step", "item")
"""Selections shared by every page and mirrored in the URL (?episode=…&span=…&step=…&item=…)."""


def view_judge() -> JudgeKind:
    """The judge whose verdicts this page shows: the sidebar's "Verdicts of", else the store's
    default judge (app.py). A choice other than the default is kept in the URL (`judge=`)."""
    picked = st.session_state.get("view_judge")
    write_url(judge=picked if picked in JUDGE_KINDS else None)
    j = picked if picked in JUDGE_KINDS else st.session_state.get("_judge_default")
    return j if j in JUDGE_KINDS else "rules"  # type: ignore[no-any-return]


def scope() -> list[str] | None:
    """Run ids picked in the sidebar (None: every run)."""
    return st.session_state.get("_scope_effective") or None


def sync_from_url() -> None:
    """Apply query params to the shared selections, each distinct value once."""
    seen = st.session_state.setdefault("_qp_seen", {})
    for k in SHARED:
        v = st.query_params.get(k)
        if v and seen.get(k) != v:
            seen[k] = v
            st.session_state[f"sel_{k}"] = int(v) if k == "step" and v.isdigit() else v


def kept(key: str) -> dict[str, Any]:
    """Widget arguments for a setting kept in `st.session_state[key]` across pages and reruns.

    Streamlit forgets a widget's state after a run that did not draw it (a page switch, a page
    that stopped early); the setting itself lives under `key` and the widget (`_w_<key>`) only
    shows and edits it: `st.radio("Judge", kinds, **kept("judge_kind"))`."""
    wkey = f"_w_{key}"
    st.session_state[wkey] = st.session_state.get(key)

    def store() -> None:
        st.session_state[key] = st.session_state[wkey]

    return {"key": wkey, "on_change": store}


def sel(k: str) -> Any:
    return st.session_state.get(f"sel_{k}")


def set_sel(**kw: Any) -> None:
    for k, v in kw.items():
        st.session_state[f"sel_{k}"] = v


def _url_marker(v: Any) -> Any:
    return tuple(str(x) for x in v) if isinstance(v, list | tuple) else str(v)


def write_url(**kw: Any) -> None:
    """Write the page's state back to the URL (None, "" or [] removes a key; a list repeats it).

    Together with `from_url` this makes every page's URL reproduce its view: a value the page
    wrote is never applied back to it, a different one (a followed or pasted link) is."""
    seen = st.session_state.setdefault("_qp_seen", {})
    for k, v in kw.items():
        if v is None or v == "" or (isinstance(v, list | tuple) and not v):
            if k in st.query_params:
                del st.query_params[k]
            seen.pop(k, None)
        elif isinstance(v, list | tuple):
            values = [str(x) for x in v]
            if st.query_params.get_all(k) != values:
                st.query_params[k] = values
            seen[k] = tuple(values)
        else:
            sv = str(v)
            if st.query_params.get(k) != sv:
                st.query_params[k] = sv
            seen[k] = sv


def from_url(
    param: str,
    key: str,
    *,
    options: Sequence[Any] | None = None,
    multi: bool = False,
    cast: Callable[[str], Any] | None = None,
    marker: str | None = None,
) -> None:
    """Before creating the widget `key`: put the URL's value of `param` into its state when the
    URL holds a value this session has not applied or written yet (a pasted or followed link).

    `options` keeps only known choices (a stale link cannot break a widget); `multi` reads a
    repeated parameter into a list; `cast` converts each value (e.g. int). `marker` names what
    remembers the applied value when several uses read one parameter (`<page>:<param>`)."""
    seen = st.session_state.setdefault("_qp_seen", {})
    raw: Any = st.query_params.get_all(param) if multi else st.query_params.get(param)
    if not raw:
        return
    name = marker or param
    value_marker = _url_marker(raw)
    if seen.get(name) == value_marker:
        return
    seen[name] = value_marker
    values = [raw] if not multi else list(raw)
    try:
        parsed = [cast(v) if cast else v for v in values]
    except (TypeError, ValueError):
        return
    if options is not None:
        known = [str(o) for o in options]
        parsed = [options[known.index(str(v))] for v in parsed if str(v) in known]
        if not parsed and not multi:
            return
    st.session_state[key] = parsed if multi else parsed[0]


def seed(widget_key: str, shared: str) -> None:
    """Before creating a widget: take the shared selection when it changed elsewhere."""
    v = sel(shared)
    marker = f"_seed_{widget_key}"
    if v is not None and st.session_state.get(marker) != v:
        st.session_state[widget_key] = v
        st.session_state[marker] = v
