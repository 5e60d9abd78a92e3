"""Every real trajectory, and the demo corpus, imports and builds without exceptions (the files stay
in ../shared/data/real; the real-data test skips only when that folder is absent)."""

from __future__ import annotations

from pathlib import Path

from memuse_core.build import build_store
from memuse_core.demo import DemoPlan, build_demo
from memuse_core.rules.context import build_episode_context
from memuse_core.store import connect, load_episodes


def test_real_trajectories_build_without_exceptions(tmp_path: Path, import_real) -> None:
    db = tmp_path / "real.duckdb"
    con = connect(db)
    try:
        imported = import_real(con)  # an importer crash fails here; only absent data skips
    finally:
        con.close()
    assert len(imported) >= 100
    stats = build_store(db)
    con = connect(db, read_only=True)
    try:
        eids = [r[0] for r in con.execute("SELECT episode_id FROM episodes").fetchall()]
        assert stats["episodes"] == len(eids) > 0
        built = {r[0] for r in con.execute("SELECT episode_id FROM context_built").fetchall()}
        assert built == set(eids)
        for eid, rec in load_episodes(con, eids).items():
            ctx = build_episode_context(rec)
            assert ctx.episode_id == eid
            for s in ctx.spans:
                for e in s.entries:
                    if e.window is not None:
                        assert (
                            s.first_step is not None and s.first_step <= e.window[0] <= e.window[1] <= rec.T
                        )
    finally:
        con.close()


def test_demo_corpus_builds_without_exceptions(tmp_path: Path) -> None:
    db = tmp_path / "demo.duckdb"
    res = build_demo(db, DemoPlan(episodes=16, seed=3, mean_steps=20))
    stats = build_store(db)
    assert stats["episodes"] == res.episodes > 0
    con = connect(db, read_only=True)
    try:
        n_spans = con.execute("SELECT count(*) FROM spans").fetchone()[0]
        statuses = {r[0] for r in con.execute("SELECT DISTINCT status FROM spans").fetchall()}
        assert n_spans == stats["spans"] > 0
        assert "eligible" in statuses
        undelivered = con.execute(
            "SELECT count(*) FROM deliveries d LEFT JOIN delivery_context c "
            "USING (delivery_id) WHERE c.span_id IS NULL"
        ).fetchone()[0]
        assert undelivered == 0  # every delivery belongs to a span
    finally:
        con.close()
