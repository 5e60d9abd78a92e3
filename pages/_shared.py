"""UI helpers shared by the pages: cached view calls, writes, shared selections, deep links,
and safe rendering of recorded text.

Pages call the typed views of `memuse_core.views` through `cached(view_fn, *args)`: it opens the
store read-only for one unit of work and closes it (a batch judge may hold the write lock), and
caches the view model with `st.cache_data`, keyed by the database path and its modification
times, so a judge run or an annotation invalidates it. mypy checks the arguments against the
view function's signature (ParamSpec).
"""

from __future__ import annotations

import os
import pickle
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import streamlit as st

from memuse_core import textsafe
from memuse_core.views import case_studies as cs_view
from memuse_core.views import links, writes
from memuse_core.views.common import Connection, StoreError, StoreLocked, open_read
from memuse_core.vocab import JUDGE_KINDS, JudgeKind

P = ParamSpec("P")
R = TypeVar("R")


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

SHARED = ("episode", "span", "step", "item")
"""Selections shared by every page and mirrored in the URL (?episode=…&span=…&step=…&item=…)."""

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


WRITE_TIMEOUT = float(os.environ.get("MEMUSE_APP_WRITE_TIMEOUT", "1"))
"""Seconds a write waits for a busy database before it is queued (views.writes)."""

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


# ---- Shared selections and deep links --------------------------------------------------------


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


# ---- Safe rendering of recorded text (every function delegates to memuse_core.textsafe) ------


def md_escape(text: Any) -> str:
    """Recorded text made inert for st.markdown: shown character for character (no emphasis,
    links, images, HTML, formulas, icons, emoji or colours; control and bidi characters visible)."""
    return textsafe.markdown_literal(text)


def text_columns(columns: Iterable[str]) -> dict[str, Any]:
    """Column configs for numbers formatted as text by `views.common.formatted`: right-aligned
    like numbers."""
    return {str(c): st.column_config.TextColumn(alignment="right") for c in columns}


def show_text(text: Any, *, max_chars: int = 20000, language: str | None = None) -> None:
    """Show recorded text verbatim (inert), truncated with a note when very long."""
    s = textsafe.neutralise(text)
    if len(s) > max_chars:
        st.code(s[:max_chars], language=language, wrap_lines=True)
        st.caption(f"… {len(s) - max_chars:,} more characters not shown")
    else:
        st.code(s or " ", language=language, wrap_lines=True)


# ---- Annotations -------------------------------------------------------------------------------


def annotation_form(
    target_kind: cs_view.TargetKind, target_id: str, episode_id: str | None, *, key: str
) -> None:
    """A compact form to annotate a step, span (entry) or item: note, tags, five human labels."""
    write_notice()
    with st.form(f"ann_form_{key}", clear_on_submit=False):
        st.markdown(f"**Annotate {target_kind}** {md_code(target_id)}")
        note = st.text_area("Note (markdown)", key=f"ann_note_{key}")
        tags = st.text_input("Tags (comma separated)", key=f"ann_tags_{key}")
        cols = st.columns(len(cs_view.SIGNAL_VALUES))
        labels: dict[str, str | None] = {}
        for c, (sig, vals) in zip(cols, cs_view.SIGNAL_VALUES.items()):
            labels[sig] = c.selectbox(sig, [None, *vals], key=f"ann_{sig}_{key}")
        names = {c.case_study_id: c.name for c in cached(cs_view.case_studies)}
        case_opts: list[str | None] = [None, *names]
        current = st.session_state.get("cs_pick")
        case = st.selectbox(
            "Add to case study",
            case_opts,
            format_func=lambda c: "—" if c is None else names.get(c, c),
            index=case_opts.index(current) if current in case_opts else 0,
            key=f"ann_case_{key}",
        )
        if st.form_submit_button("Save annotation"):
            ann = cs_view.new_annotation(
                target_kind,
                target_id,
                episode_id=episode_id,
                note=note,
                tags=cs_view.parse_tags(tags),
                labels=labels,
                author=os.environ.get("USER"),
                case_study_id=case,
            )
            if submit(writes.annotation_write(ann)):
                st.success(f"Saved annotation {ann.annotation_id}.")


def url(path: str, **params: Any) -> str:
    """A relative deep link (`./<path>?k=v…`) with every value URL-encoded; `path` is a page's
    URL path ("" for the Overview). Clicked in the app it switches page in this session."""
    page = links.page_of_path(path)
    if page is None:
        raise ValueError(f"no page is served at {path!r}")
    return links.url(page, **params)


def md_code(text: Any) -> str:
    """Recorded text as an inline code span (inert; one line, backticks replaced)."""
    return textsafe.code_literal(text)


def note_md(text: Any) -> str:
    """A user's markdown note, rendered as markdown but without images (an imported case study
    must not make the browser fetch remote images) and without raw HTML (Streamlit escapes it)."""
    return re.sub(r"!\[", r"\\![", textsafe.neutralise(text))
