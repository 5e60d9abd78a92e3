"""The Compare page's default pair (`views.compare.default_pair`): a bare page opens on the two
groups that share the most tasks, so its paired-task table is not empty when some pair has tasks
in common (a real store mixes SWE-bench batches with single trajectories of unrelated tasks)."""

from __future__ import annotations

from pathlib import Path

from test_metrics_corpus import Corpus

from memuse_core.store import connect
from memuse_core.views.compare import default_pair


def test_default_pair_shares_the_most_tasks(tmp_path: Path) -> None:
    con = connect(tmp_path / "c.duckdb")
    c = Corpus(con)
    for run, cfg, tasks in (
        ("w1", "w", ["t9"]),
        ("x1", "x", ["t1"]),
        ("y1", "y", ["t2", "t3"]),
        ("z1", "z", ["t2", "t3", "t4"]),
        ("z2", "z", ["t1"]),
    ):
        c.run(run, cfg)
        for i, t in enumerate(tasks):
            c.episode(f"{run}/{t}", run, t, i, "A", None)
    assert default_pair(con, "config", ["w", "x", "y", "z"]) == ("y", "z")  # 2 shared tasks
    assert default_pair(con, "run", ["w1", "x1", "y1", "z1", "z2"]) == ("y1", "z1")
    assert default_pair(con, "config", ["w", "x"]) == ("w", "x")  # nothing shared: the first two
    con.close()
