"""The pages' one import point: every page (and app.py) imports its helpers from here.

Importing it first sends a page run that bypassed app.py back through app.py (below); the helpers
themselves live in modules of their own, re-exported here:

* `pages/_reads.py`   cached view calls, the database path, the busy-database banner and notices;
* `pages/_writes.py`  writes saved now or queued while the database is busy, the pending check;
* `pages/_state.py`   shared selections, kept settings, sidebar scope and judge, URL state;
* `pages/_links.py`   page links, deep links and in-session navigation;
* `pages/_text.py`    safe rendering of recorded text;
* `pages/_annotation_form.py`  the annotation form.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st


def _route_through_app() -> None:
    """Send a page run that bypassed app.py back through it, keeping the deep link.

    Until app.py has called st.navigation once, Streamlit treats the `pages/` folder as a
    legacy multipage app; a fresh server whose first request is a deep link (/span?span=…) then
    runs the page file directly and app.py (state, sidebar, navigation) never runs. app.py seeds
    `db_path` in every session, so its absence identifies such a run. We remember the page and its
    query parameters and switch to app.py, which registers the pages with st.navigation and
    switches on to the remembered page (public APIs only).
    """
    # Under app.py (every normal run) return before touching Streamlit: this runs while the module
    # is imported, and a Streamlit call here can stop the import half-way when a rerun request
    # arrives; a concurrent run then gets the half-initialised module ("cannot import name
    # 'cached'", seen on a fresh server's first page load).
    frame = sys._getframe(1)
    while frame is not None:
        if Path(frame.f_code.co_filename).name == "app.py":
            return
        frame = frame.f_back  # type: ignore[assignment]
    if "db_path" in st.session_state:
        return
    import inspect

    page = next(
        (
            Path(f.filename)
            for f in inspect.stack()
            if Path(f.filename).parent.name == "pages" and Path(f.filename).name[:1].isdigit()
        ),
        None,
    )
    st.session_state["_memuse_deeplink"] = (f"pages/{page.name}" if page else None, st.query_params.to_dict())
    st.switch_page("app.py")


_route_through_app()

# The helpers are imported after the check above, as before the split: a page run that bypassed
# app.py stops here, before they (and their cached functions) are set up.
from pages._annotation_form import annotation_form  # noqa: E402
from pages._links import PAGES, go, link, nav_seq, navigate, url  # noqa: E402
from pages._reads import (  # noqa: E402
    LOCK_TIMEOUT,
    NOT_BUILT,
    begin_run,
    cached,
    db_key,
    db_path,
    end_run,
)
from pages._state import (  # noqa: E402
    from_url,
    kept,
    scope,
    seed,
    sel,
    set_sel,
    sync_from_url,
    view_judge,
    write_url,
)
from pages._text import formatted_grid, md_code, md_escape, note_md, show_text, text_columns  # noqa: E402
from pages._writes import WRITE_TIMEOUT, pending_check, submit, write_notice  # noqa: E402

__all__ = [
    "LOCK_TIMEOUT",
    "NOT_BUILT",
    "PAGES",
    "WRITE_TIMEOUT",
    "annotation_form",
    "begin_run",
    "cached",
    "db_key",
    "db_path",
    "end_run",
    "from_url",
    "go",
    "kept",
    "link",
    "md_code",
    "md_escape",
    "nav_seq",
    "navigate",
    "note_md",
    "pending_check",
    "scope",
    "seed",
    "sel",
    "set_sel",
    "show_text",
    "submit",
    "sync_from_url",
    "text_columns",
    "formatted_grid",
    "url",
    "view_judge",
    "write_notice",
    "write_url",
]
