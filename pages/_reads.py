"""Cached reads of the database for the pages, and what they show while it is busy.

Pages call the typed views of `memuse_core.views` through `cached(view_fn, *args)`: it opens the
store read-only for one unit of work and closes it (a batch judge may hold the write lock), and
caches the view model with `st.cache_data`, keyed by the database path and its modification
times, so a judge run or an annotation invalidates it. mypy checks the arguments against the
view function's signature (ParamSpec). While another process holds the database the last result
of the same call is shown under one banner in the notices container above the page (`notices`,
placed by `begin_run`).
"""

from __future__ import annotations

import os
import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import streamlit as st

from memuse_core import textsafe
from memuse_core.views.common import Connection, StoreError, StoreLocked, open_read
from pages._text import md_escape

P = ParamSpec("P")
R = TypeVar("R")

LOCK_TIMEOUT = float(os.environ.get("MEMUSE_APP_LOCK_TIMEOUT", "5"))
"""Seconds a page waits for a database held by another process before saying so."""

NOT_BUILT = "not computed yet — run `memuse build` (context) and `memuse judge` (verdicts)"


def db_path() -> str:
    """The database this session reads: chosen by app.py, else MEMUSE_DB, else the default."""
    return str(st.session_state.get("db_path") or os.environ.get("MEMUSE_DB") or "data/memuse.duckdb")


def db_key() -> tuple[str, float, float]:
    """Cache key of the database state: path and modification times of the file and its WAL."""
    p = Path(db_path())
    wal = Path(str(p) + ".wal")
    return (
        str(p.resolve()),
        p.stat().st_mtime if p.exists() else 0.0,
        wal.stat().st_mtime if wal.exists() else 0.0,
    )


_LAST_GOOD: OrderedDict[bytes, tuple[float, bytes]] = OrderedDict()
"""The last result of each (database, view, arguments) read, for showing while the database is
busy; at most _LAST_GOOD_MAX entries, shared by the sessions of this process."""
_LAST_GOOD_MAX = 96
_LAST_GOOD_LOCK = threading.Lock()


@st.cache_data(ttl=600, max_entries=512, show_spinner=False)
def _cached_call(
    key: tuple[str, float, float],
    name: str,
    _fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    _timeout: float = LOCK_TIMEOUT,
) -> bytes:
    # `name` (module and qualified name) stands for `_fn` in the cache key. The result is kept
    # pickled and every caller gets its own copy: st.cache_data would return the computed object
    # itself on a miss and an unpickled copy on a hit, and a plotly figure's JSON differs between
    # the two (key order), which changes a chart's widget id and drops its selection.
    con = open_read(key[0], _timeout)
    try:
        return pickle.dumps(_fn(con, *args, **kwargs), protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        con.close()


def busy() -> str | None:
    """Why the database could not be read in this run (the lock holder), or None."""
    reason = st.session_state.get("_busy_reason")
    return str(reason) if reason else None


def begin_run() -> None:
    """Called by app.py at the start of every run, above the page: forget the previous run's busy
    state, take over the notice of a write queued by the previous run, and place the one notices
    container (see `notices`)."""
    st.session_state["_busy_reason"] = None
    st.session_state["_busy_banner_shown"] = False
    st.session_state["_write_notice_now"] = st.session_state.pop("_write_notice", None)
    st.session_state["_notices"] = st.container()


def end_run() -> None:
    """Called by app.py after the page ran (also when it stopped or reran): the notices
    container belongs to that run only."""
    st.session_state["_notices"] = None


def notices() -> Any:
    """The container above the page for run-dependent notices (busy database, pending writes).

    It is always there, so a notice appearing or going never moves the page's elements: the
    browser matches elements by position, and a moved expander would be drawn anew, collapsed,
    hiding a kept draft. Outside app.py's full run (a fragment's rerun; AppTest's page-only
    reruns) it is gone (`end_run`) and notices go inline."""
    slot = st.session_state.get("_notices")
    return slot if slot is not None else st


def _busy_banner(reason: str, as_of: float) -> None:
    if st.session_state.get("_busy_banner_shown"):
        return
    st.session_state["_busy_banner_shown"] = True
    when = time.strftime("%H:%M:%S", time.localtime(as_of))
    msg = (
        f"The database is busy: {md_escape(textsafe.one_line(reason))}. Showing what it held at {when}; "
        "annotations and re-judges you start are queued and saved when it is free."
    )
    notices().warning(msg)


def cached(fn: Callable[Concatenate[Connection, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
    """`fn(connection, *args, **kwargs)` on a read-only connection, cached by database state.

    While another process holds the database the last result of the same call is shown with a
    banner (so the page, and any draft in its forms, stays); without one the page ends with one
    clear message. A missing or unreadable database ends the page with its error.
    """
    name = f"{fn.__module__}.{fn.__qualname__}"
    stale_key = pickle.dumps((db_path(), name, args, sorted(kwargs.items())))
    # Once this run met the lock, later reads fail fast instead of each waiting LOCK_TIMEOUT.
    timeout = 0.0 if busy() else LOCK_TIMEOUT
    try:
        data = _cached_call(db_key(), name, fn, args, dict(kwargs), timeout)
    except StoreLocked as e:
        st.session_state["_busy_reason"] = str(e)
        with _LAST_GOOD_LOCK:
            last = _LAST_GOOD.get(stale_key)
        if last is None:
            st.warning(
                f"The database is busy: {md_escape(textsafe.one_line(e))}. This page will work again when that "
                "process finishes."
            )
            st.stop()
        _busy_banner(str(e), last[0])
        data = last[1]
    except StoreError as e:
        st.error(md_escape(textsafe.one_line(e)))
        st.stop()
    else:
        with _LAST_GOOD_LOCK:
            _LAST_GOOD[stale_key] = (time.time(), data)
            _LAST_GOOD.move_to_end(stale_key)
            while len(_LAST_GOOD) > _LAST_GOOD_MAX:
                _LAST_GOOD.popitem(last=False)
    result: R = pickle.loads(data)
    return result
