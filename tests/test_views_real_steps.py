"""Every step of every real recording opens: the Transcript's pages and the Timeline's step text
are built for each episode of the shared real runs (mini-swe-agent batch folders, SWE-agent,
OpenHands, mini-swe-agent v2 with reasoning). Real tool results can come without a tool name
(SWE-agent's and many mini-swe-agent observations): such a result reads as an empty name, shown
as "—", never an exception.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memuse_core.build import build_store
from memuse_core.ingest.batch import ingest_batch
from memuse_core.ingest.layouts import plan_folder
from memuse_core.store import connect
from memuse_core.views import common as views
from memuse_core.views.transcript import page_of, transcript


@pytest.fixture(scope="module")
def real_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conftest import need_real_data

    real = need_real_data()
    db = tmp_path_factory.mktemp("real_steps") / "real.duckdb"
    con = connect(db)
    try:
        ingest_batch(con, plan_folder(real / "mini-swe-agent-batch" / "nano-cam-output"), workers=0)
    finally:
        con.close()
    return db


def test_every_step_of_every_real_episode_opens(real_store: Path, import_real) -> None:
    con = connect(real_store)
    try:
        import_real(con, "swe-agent", "openhands", "mini-swe-agent")
    finally:
        con.close()
    build_store(real_store)
    con = connect(real_store, read_only=True)
    try:
        eps = con.execute("SELECT episode_id, n_steps FROM episodes ORDER BY 1").fetchall()
        unnamed = con.execute("SELECT count(*) FROM tool_results WHERE name IS NULL").fetchone()[0]
        assert len(eps) > 50 and unnamed > 0  # the case this guards is in the data
        seen_unnamed = 0
        for episode_id, n_steps in eps:
            for page in range(page_of(max(1, n_steps or 1)) + 1):
                t = transcript(con, episode_id, page)
                assert t is not None, episode_id
                seen_unnamed += sum(r.name == "" for s in t.steps for r in s.results)
            for step in range(1, (n_steps or 0) + 1):
                st = views.step_text(con, episode_id, step)
                assert st is not None, (episode_id, step)
                st.as_text()
        assert seen_unnamed > 0
    finally:
        con.close()
