"""MemUse Studio: the Streamlit entry point.

Owns navigation and shared state, opens the database named by MEMUSE_DB (default
data/memuse.duckdb) and builds the demo database on first run when it is missing. Nothing else:
every page is UI over `memuse_core`.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from memuse_core.store import db_path

st.set_page_config(page_title="MemUse Studio", layout="wide")

for key, default in {
    "db_path": str(db_path(os.environ.get("MEMUSE_DB") or None)),
    "sel_episode": None,
    "sel_span": None,
    "sel_step": None,
    "sel_item": None,
    "scope_configs": [],
    "scope_runs": [],
    "_qp_seen": {},
    "judge_kind": "rules",
    "judge_model": os.environ.get("MEMUSE_JUDGE_MODEL", ""),
    "judge_base_url": os.environ.get("OPENAI_BASE_URL", ""),
}.items():
    st.session_state.setdefault(key, default)


def _build_demo(path: Path) -> None:
    """First run: generate the deterministic demo corpus into `path`, build its evaluation context
    and judge it with the offline rules judge, with progress."""
    try:
        from memuse_core.build import build_store
        from memuse_core.demo import DemoPlan, build_demo
        from memuse_core.judge.result import JudgeSettings
        from memuse_core.judge.runner import run_batch
    except ImportError as e:
        st.error(
            f"Database {path} does not exist and the demo generator is not available ({e}). "
            "Import recordings with `memuse ingest` or set MEMUSE_DB."
        )
        st.stop()
    # MEMUSE_DEMO_EPISODES picks a smaller or larger first-run corpus (default: the demo's own).
    n = os.environ.get("MEMUSE_DEMO_EPISODES")
    plan = DemoPlan(episodes=int(n)) if n and n.isdigit() and int(n) > 0 else DemoPlan()
    total = plan.tasks_per_run * len(plan.configs) * plan.runs
    bar = st.progress(0.0, text=f"First run: generating the demo corpus into {path}…")
    done = {"n": 0}

    def gen(stage: str, n: int) -> None:
        if stage == "generate":
            done["n"] += n
            bar.progress(min(0.4, 0.4 * done["n"] / max(total, 1)), text="Generating demo episodes…")

    build_demo(path, plan, progress=gen)
    bar.progress(0.45, text="Building the evaluation context (spans, credit windows)…")
    build_store(
        path,
        progress=lambda d, t: bar.progress(
            0.45 + 0.25 * d / max(t, 1), text="Building the evaluation context…"
        ),
    )
    bar.progress(0.7, text="Judging spans with the offline rules judge…")
    run_batch(
        path,
        JudgeSettings(judge="rules"),
        progress=lambda s: bar.progress(
            min(1.0, 0.7 + 0.3 * s.judged / max(s.planned, 1)),
            text=f"Judging spans with the rules judge… {s.judged}/{s.planned}",
        ),
    )
    bar.empty()


pages = [
    st.Page("pages/1_overview.py", title="Overview", default=True),
    st.Page("pages/2_episodes.py", title="Episodes", url_path="episodes"),
    st.Page("pages/3_timeline.py", title="Episode timeline", url_path="timeline"),
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

from pages._shared import q, sync_from_url  # noqa: E402  (needs the page registry above)

sync_from_url()
with st.sidebar:
    runs = q("list_runs")
    configs = sorted(runs["config"].unique()) if len(runs) else []
    st.multiselect(
        "Configurations",
        configs,
        key="scope_configs",
        help="Limit every page to these configurations (empty: all).",
    )
    run_opts = [
        r
        for r, c in zip(runs["run_id"], runs["config"])
        if not st.session_state["scope_configs"] or c in st.session_state["scope_configs"]
    ]
    st.session_state["scope_runs"] = [r for r in st.session_state.get("scope_runs", []) if r in run_opts]
    st.multiselect(
        "Runs",
        run_opts,
        key="scope_runs",
        help="Limit to these runs (empty: all runs of the chosen configurations).",
    )
    if st.session_state["scope_configs"] and not st.session_state["scope_runs"]:
        st.session_state["_scope_effective"] = run_opts
    else:
        st.session_state["_scope_effective"] = st.session_state["scope_runs"] or None
    st.caption(f"Database: `{st.session_state['db_path']}`")
page.run()
