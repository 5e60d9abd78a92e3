"""Links between pages: the page files, `st.page_link`s and relative deep links carrying query
parameters, and switching page in this session with a link's parameters (`navigate`, `go`).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from memuse_core.views import links
from pages._state import SHARED


def link(page: links.PageKey, label: str, **params: Any) -> None:
    """A page link carrying deep-link params."""
    st.page_link(
        PAGES[page], label=label, query_params={k: str(v) for k, v in params.items() if v is not None}
    )


def navigate(target: links.AppLink) -> None:
    """Switch to a page in this session with a link's query parameters (sidebar scope, judge
    settings and every other state kept). The target page applies the parameters as if the
    link had been pasted: their markers are cleared and the shared selections set."""
    seen = st.session_state.setdefault("_qp_seen", {})
    for name in list(seen):
        if name.rpartition(":")[2] in target.params:
            seen.pop(name, None)
    for k in SHARED:
        v = target.first(k)
        if v is not None:
            st.session_state[f"sel_{k}"] = int(v) if k == "step" and v.isdigit() else v
            seen[k] = v
    st.session_state["_nav_seq"] = int(st.session_state.get("_nav_seq", 0)) + 1
    params = dict(target.params)
    for k in links.SCOPE_PARAMS:  # the scope travels with every in-app link
        if k not in params and st.query_params.get_all(k):
            params[k] = st.query_params.get_all(k)
    st.switch_page(PAGES[target.page], query_params=params)


def nav_seq() -> int:
    """Counts in-app navigations of this session (a new value asks a page to scroll again)."""
    return int(st.session_state.get("_nav_seq", 0))


def go(page: links.PageKey, **params: Any) -> None:
    """Switch page with these parameters (shared selections among them are set)."""
    navigate(
        links.AppLink(
            page=page,
            params={k: [str(v)] for k, v in params.items() if v is not None and v != ""},
        )
    )


PAGES: dict[links.PageKey, str] = {
    "overview": "pages/1_overview.py",
    "episodes": "pages/2_episodes.py",
    "timeline": "pages/3_timeline.py",
    "transcript": "pages/10_transcript.py",
    "search": "pages/11_search.py",
    "span": "pages/4_span.py",
    "lineage": "pages/5_lineage.py",
    "cases": "pages/6_case_studies.py",
    "compare": "pages/7_compare.py",
    "judge": "pages/8_judge_runs.py",
    "trim": "pages/9_memtrim.py",
}


def url(path: str, **params: Any) -> str:
    """A relative deep link (`./<path>?k=v…`) with every value URL-encoded; `path` is a page's
    URL path ("" for the Overview). Clicked in the app it switches page in this session."""
    page = links.page_of_path(path)
    if page is None:
        raise ValueError(f"no page is served at {path!r}")
    return links.url(page, **params)
