"""Writes from the pages (annotations, case studies, re-judges): saved now, or queued while another
process holds the database and retried above the page until saved (`memuse_core.views.writes`).
"""

from __future__ import annotations

import os

import streamlit as st

from memuse_core import textsafe
from memuse_core.views import writes
from pages._reads import db_path, notices
from pages._text import md_escape

WRITE_TIMEOUT = float(os.environ.get("MEMUSE_APP_WRITE_TIMEOUT", "1"))
"""Seconds a write waits for a busy database before it is queued (views.writes)."""


def submit(w: writes.Write) -> bool:
    """Save one write now (True), or queue it while another process holds the database.

    A queued write reruns the app: the pending check above the page then lists it and retries
    every 2 s until it is saved, and `write_notice()` says where the user wrote it that it is
    pending (form widgets keep their values, so the draft stays)."""
    res = writes.save(db_path(), w, WRITE_TIMEOUT)
    if any(p.write_id == w.write_id for p in res.pending):
        st.session_state["_write_notice"] = (
            f"Pending: {md_escape(textsafe.one_line(w.label))} is queued because the database is busy "
            f"({md_escape(textsafe.one_line(res.busy))}). It will be saved as soon as the database is free; "
            "your input stays in the form."
        )
        st.rerun()
    return True


def write_notice() -> None:
    """Where the user writes: a slot that says (in the run after it, once) that a write was
    queued. The slot is always drawn, so the elements after it keep their place."""
    slot = st.empty()
    msg = st.session_state.pop("_write_notice_now", None) or st.session_state.pop("_write_notice", None)
    if msg:
        slot.warning(msg)


def pending_check() -> None:
    """Above the page: writes waiting for a busy database, retried every 2 s until saved, and
    then how many were saved (app.py)."""
    with notices():
        _pending_check()


def _pending_check() -> None:
    waiting = writes.pending(db_path())
    saved = st.session_state.pop("_pending_saved", None)
    if saved:
        st.success(f"Saved {saved} pending change{'s' if saved > 1 else ''}.")
    if not waiting:
        return

    @st.fragment(run_every=2.0)
    def retry() -> None:
        res = writes.flush(db_path(), 0.2)
        if res.saved and not res.pending:
            st.session_state["_pending_saved"] = res.saved
            st.rerun(scope="app")
        st.warning(
            f"Pending: {len(res.pending)} change{'s' if len(res.pending) != 1 else ''} waiting — the database is "
            f"busy ({md_escape(textsafe.one_line(res.busy or ''))}). Saved automatically when it is free:\n"
            + "\n".join(f"- {md_escape(textsafe.one_line(p.label))}" for p in res.pending)
        )

    retry()
