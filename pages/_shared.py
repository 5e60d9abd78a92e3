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
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import streamlit as st

from memuse_core import textsafe
from memuse_core.views import case_studies as cs_view
from memuse_core.views.common import Connection, StoreError, StoreLocked, open_read, open_write

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


@st.cache_data(ttl=600, max_entries=512, show_spinner=False)
def _cached_call(
    key: tuple[str, float, float],
    name: str,
    _fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> bytes:
    # `name` (module and qualified name) stands for `_fn` in the cache key. The result is kept
    # pickled and every caller gets its own copy: st.cache_data would return the computed object
    # itself on a miss and an unpickled copy on a hit, and a plotly figure's JSON differs between
    # the two (key order), which changes a chart's widget id and drops its selection.
    con = open_read(key[0], LOCK_TIMEOUT)
    try:
        return pickle.dumps(_fn(con, *args, **kwargs), protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        con.close()


def cached(fn: Callable[Concatenate[Connection, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
    """`fn(connection, *args, **kwargs)` on a read-only connection, cached by database state.

    A lock held by another process or a missing database ends the page with one clear message.
    """
    try:
        data = _cached_call(db_key(), f"{fn.__module__}.{fn.__qualname__}", fn, args, dict(kwargs))
    except StoreLocked as e:
        st.warning(f"The database is busy: {e}. The page will work again when that process finishes.")
        st.stop()
    except StoreError as e:
        st.error(str(e))
        st.stop()
    result: R = pickle.loads(data)
    return result


def write(fn: Callable[Concatenate[Connection, P], None], *args: P.args, **kwargs: P.kwargs) -> bool:
    """Run one write (`fn(connection, ...)`) in its own short read-write connection.

    Returns False (with a message) when another process holds the database.
    """
    try:
        con = open_write(db_path(), LOCK_TIMEOUT)
    except StoreLocked as e:
        st.warning(f"Not saved: {e}. Your input is kept; try again in a moment.")
        return False
    try:
        fn(con, *args, **kwargs)
    finally:
        con.close()
    return True


# ---- Legacy string-named queries: only pages/9_memtrim.py still uses them --------------------


def _legacy(fn: str) -> Callable[..., Any]:
    """The function behind a legacy query name (kept until pages/9_memtrim.py calls views)."""
    if fn == "episode_ids":
        from memuse_core.store.app.episodes import episode_ids

        return episode_ids
    if fn == "episode_deliveries":
        from memuse_core.store.app.episodes import episode_deliveries

        return episode_deliveries
    if fn == "whatif.delivery":
        from memuse_core.trim.whatif import delivery_whatif

        return lambda con, delivery_id: delivery_whatif(con, delivery_id).to_dict()
    if fn.startswith("trim."):
        from memuse_core.store import trim

        return getattr(trim, fn.split(".", 1)[1])  # type: ignore[no-any-return]
    raise ValueError(f"unknown legacy query {fn!r}")


def q(fn: str, *args: Any) -> Any:
    """Deprecated: `cached(view_fn, ...)` instead. Runs a legacy query by name, cached."""
    try:
        return pickle.loads(_cached_call(db_key(), f"legacy.{fn}", _legacy(fn), args, {}))
    except StoreLocked as e:
        st.warning(f"The database is busy: {e}. The page will work again when that process finishes.")
        st.stop()
    except StoreError as e:
        st.error(str(e))
        st.stop()


def q_or_empty(fn: str, *args: Any) -> Any:
    """Deprecated: like `q` (derived tables always exist in a store this version opened)."""
    return q(fn, *args)


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


def sel(k: str) -> Any:
    return st.session_state.get(f"sel_{k}")


def set_sel(**kw: Any) -> None:
    for k, v in kw.items():
        st.session_state[f"sel_{k}"] = v


def write_url(**kw: Any) -> None:
    """Write the page's selections back to the URL (None removes a key)."""
    seen = st.session_state.setdefault("_qp_seen", {})
    for k, v in kw.items():
        if v is None or v == "":
            if k in st.query_params:
                del st.query_params[k]
            seen.pop(k, None)
        else:
            sv = str(v)
            if st.query_params.get(k) != sv:
                st.query_params[k] = sv
            seen[k] = sv


def seed(widget_key: str, shared: str) -> None:
    """Before creating a widget: take the shared selection when it changed elsewhere."""
    v = sel(shared)
    marker = f"_seed_{widget_key}"
    if v is not None and st.session_state.get(marker) != v:
        st.session_state[widget_key] = v
        st.session_state[marker] = v


def link(page: str, label: str, **params: Any) -> None:
    """A page link carrying deep-link params."""
    st.page_link(
        PAGES[page], label=label, query_params={k: str(v) for k, v in params.items() if v is not None}
    )


def go(page: str, **shared: Any) -> None:
    """Switch page with shared selections set (and in the URL)."""
    set_sel(**shared)
    st.session_state.setdefault("_qp_seen", {}).update(
        {k: str(v) for k, v in shared.items() if v is not None}
    )
    st.switch_page(PAGES[page], query_params={k: str(v) for k, v in shared.items() if v is not None})


PAGES = {
    "overview": "pages/1_overview.py",
    "episodes": "pages/2_episodes.py",
    "timeline": "pages/3_timeline.py",
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
            if write(cs_view.save_annotation, ann):
                st.success(f"Saved annotation {ann.annotation_id}.")


def url(path: str, **params: Any) -> str:
    """A relative deep link (`./<path>?k=v…`) with every value URL-encoded."""
    from urllib.parse import urlencode

    qs = urlencode({k: str(v) for k, v in params.items() if v is not None})
    return f"./{path}?{qs}" if qs else f"./{path}"


def md_code(text: Any) -> str:
    """Recorded text as an inline code span (inert; one line, backticks replaced)."""
    return textsafe.code_literal(text)


def note_md(text: Any) -> str:
    """A user's markdown note, rendered as markdown but without images (an imported case study
    must not make the browser fetch remote images) and without raw HTML (Streamlit escapes it)."""
    return re.sub(r"!\[", r"\\![", textsafe.neutralise(text))
