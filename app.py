"""MemUse Studio: the Streamlit entry point.

Owns navigation and shared state, opens the database named by MEMUSE_DB (default
data/memuse.duckdb) and builds the demo database on first run when it is missing. Nothing else:
every page is UI over `memuse_core`.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from memuse_core.views import common, judgment

st.set_page_config(page_title="MemUse Studio", layout="wide")

defaults: dict[str, object] = {
    "db_path": str(common.resolve_db_path(os.environ.get("MEMUSE_DB") or None)),
    "sel_episode": None,
    "sel_span": None,
    "sel_step": None,
    "sel_item": None,
    "scope_configs": [],
    "scope_runs": [],
    "_qp_seen": {},
    "judge_kind": "rules",
    "view_judge": None,
    "judge_model": os.environ.get("MEMUSE_JUDGE_MODEL", ""),
    "judge_base_url": os.environ.get("OPENAI_BASE_URL", ""),
}
for key, default in defaults.items():
    st.session_state.setdefault(key, default)


def _build_demo(path: Path) -> None:
    """First run: generate the demo corpus into `path`, build its context and judge it with the
    offline rules judge, with progress. MEMUSE_DEMO_EPISODES picks a smaller or larger corpus."""
    n = os.environ.get("MEMUSE_DEMO_EPISODES")
    bar = st.progress(0.0)

    def progress(fraction: float, text: str) -> None:
        bar.progress(fraction, text=text)

    try:
        common.build_demo_database(path, int(n) if n and n.isdigit() and int(n) > 0 else None, progress)
    except ImportError as e:
        st.error(
            f"Database {path} does not exist and the demo generator is not available ({e}). "
            "Import recordings with `memuse ingest` or set MEMUSE_DB."
        )
        st.stop()
    bar.empty()


pages = [
    st.Page("pages/1_overview.py", title="Overview", default=True),
    st.Page("pages/2_episodes.py", title="Episodes", url_path="episodes"),
    st.Page("pages/3_timeline.py", title="Episode timeline", url_path="timeline"),
    st.Page("pages/10_transcript.py", title="Transcript", url_path="transcript"),
    st.Page("pages/11_search.py", title="Search", url_path="search"),
    st.Page("pages/4_span.py", title="Span inspector", url_path="span"),
    st.Page("pages/5_lineage.py", title="Memory item lineage", url_path="lineage"),
    st.Page("pages/6_case_studies.py", title="Case studies", url_path="case_studies"),
    st.Page("pages/7_compare.py", title="Compare", url_path="compare"),
    st.Page("pages/8_judge_runs.py", title="Judge runs", url_path="judge_runs"),
    st.Page("pages/9_memtrim.py", title="MemTrim", url_path="memtrim"),
]
page = st.navigation(pages)

# A deep link that reached a page before app.py ran (see pages/_shared.py) continues here.
_deeplink = st.session_state.pop("_memuse_deeplink", None)
if _deeplink and _deeplink[0]:
    st.switch_page(_deeplink[0], query_params=_deeplink[1])

_path = Path(st.session_state["db_path"])
if not _path.exists():
    _build_demo(_path)

from pages._nav import link_catcher  # noqa: E402
from pages._shared import (  # noqa: E402
    begin_run,
    cached,
    end_run,
    from_url,
    kept,
    navigate,
    pending_check,
    sync_from_url,
    write_url,
)
from pages._widgets import lazy_expander  # noqa: E402

begin_run()
sync_from_url()
all_runs = cached(common.runs)  # first read of the run: a busy database is announced above the page
with st.sidebar:
    clicked = link_catcher(page.url_path)
    if clicked is not None:
        navigate(clicked)
    from_url("configs", "scope_configs", options=all_runs.configs, multi=True)
    st.multiselect(
        "Configurations",
        all_runs.configs,
        format_func=common.display_name,
        help="Limit every page to these configurations (empty: all).",
        **kept("scope_configs"),
    )
    from_url("runs", "scope_runs", options=all_runs.run_ids, multi=True)
    choice = common.scope_choice(all_runs, st.session_state["scope_configs"], st.session_state["scope_runs"])
    st.session_state["scope_runs"] = choice.runs
    st.multiselect(
        "Runs",
        choice.run_options,
        format_func=common.display_name,
        help="Limit to these runs (empty: all runs of the chosen configurations).",
        **kept("scope_runs"),
    )
    choice = common.scope_choice(all_runs, st.session_state["scope_configs"], st.session_state["scope_runs"])
    st.session_state["_scope_effective"] = choice.effective
    write_url(configs=st.session_state["scope_configs"], runs=st.session_state["scope_runs"])
    # One judge's verdicts on every page (never mixed); the URL keeps a choice other than the default.
    judges = cached(common.judge_choice)
    from_url("judge", "view_judge", options=judgment.JUDGE_KINDS)
    st.selectbox(
        "Verdicts of",
        [None, *judgment.JUDGE_KINDS],
        format_func=judges.label,
        # The kept value None (the default judge) reads as "no selection" in the browser, which
        # would show Streamlit's "Choose an option": the placeholder names the default instead.
        placeholder=judges.label(None),
        help="Whose verdicts the Overview, Episodes, Span inspector, Compare and Case studies show. "
        "Default: the LLM judge where it has accepted verdicts, else the rules judge.",
        **kept("view_judge"),
    )
    st.session_state["_judge_default"] = judges.default
    # Drawn only while open (lazy_expander): a closed expander's radio, text boxes and help icons
    # still cost every new tab of every page its elements (issue 17); the settings live in
    # session state (`kept`), not in the widgets.
    with lazy_expander("Judge settings (re-judging)", "judge_settings_open") as shown:
        if shown:
            st.radio(
                "Judge",
                judgment.JUDGE_KINDS,
                horizontal=True,
                **kept("judge_kind"),
                help="rules: the deterministic offline judge; llm: any OpenAI-compatible endpoint.",
            )
            st.text_input(
                "Model", help="Model name the LLM judge asks the endpoint for.", **kept("judge_model")
            )
            st.text_input(
                "Endpoint base URL",
                placeholder="https://api.openai.com/v1",
                help="Base URL of the OpenAI-compatible endpoint of the LLM judge.",
                **kept("judge_base_url"),
            )
            st.caption(
                "The API key is read from OPENAI_API_KEY "
                + ("(set)." if os.environ.get("OPENAI_API_KEY") else "(not set).")
            )
    st.caption(f"Database: `{st.session_state['db_path']}`")
pending_check()
try:
    page.run()
finally:
    end_run()
