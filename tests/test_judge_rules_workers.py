"""The rules batch over worker processes: every eligible span is judged
exactly once, with the same verdicts as a single-process batch, and progress reaches the parent."""

from __future__ import annotations

from memuse_core.judge.examples import acted_on_episode, ignored_episode, referenced_episode, write_store
from memuse_core.judge.result import JudgeSettings
from memuse_core.judge.runner import run_batch
from memuse_core.store import connect


def _verdicts(db):
    con = connect(db, read_only=True)
    try:
        elig = sorted(
            r[0] for r in con.execute("SELECT span_id FROM spans WHERE status = 'eligible'").fetchall()
        )
        rows = con.execute(
            "SELECT span_id, count(*) FROM judgments WHERE judge = 'rules' AND status = 'accepted' GROUP BY 1"
        ).fetchall()
        triage = dict(con.execute("SELECT span_id, triage FROM verdicts").fetchall())
    finally:
        con.close()
    return elig, dict(rows), {s: triage.get(s) for s in elig}


def test_rules_batch_over_two_processes_matches_one(tmp_path):
    def eps():
        return [
            f(f"{f.__name__[:3]}{i}")
            for i in range(2)  # noqa: E731
            for f in (acted_on_episode, ignored_episode, referenced_episode)
        ]

    one = write_store(tmp_path / "one", eps())
    two = write_store(tmp_path / "two", eps())
    s1 = run_batch(one, JudgeSettings(judge="rules"))
    seen = []
    s2 = run_batch(two, JudgeSettings(judge="rules"), workers=2, progress=lambda sm: seen.append(sm.judged))
    assert s1.judged == s2.judged == s2.accepted == s2.planned == 6 and seen[-1] == 6
    e1, n1, v1 = _verdicts(one)
    e2, n2, v2 = _verdicts(two)
    assert e1 == e2 and all(n2.get(s) == 1 for s in e2)
    assert v1 == v2 and all(v is not None for v in v2.values())
    # a second run finds nothing left to do
    s3 = run_batch(two, JudgeSettings(judge="rules"), workers=2)
    assert s3.planned == 0 and s3.skipped_done == 6


def test_workers_fork_when_single_threaded_and_spawn_under_threads(tmp_path):
    """Forked workers inherit the parent's modules (a fresh single-threaded process: the CLI);
    with other threads alive (the app) the batch spawns fresh interpreters instead. Both give the
    single-process verdicts."""
    import subprocess
    import sys
    import threading

    from memuse_core.judge.workers import start_method

    def eps():
        return [
            f(f"{f.__name__[:3]}{i}")
            for i in range(2)  # noqa: E731
            for f in (acted_on_episode, ignored_episode, referenced_episode)
        ]

    one = write_store(tmp_path / "one", eps())
    run_batch(one, JudgeSettings(judge="rules"))
    forked = write_store(tmp_path / "forked", eps())
    code = (
        "import sys; from memuse_core.judge.workers import start_method; "
        "from memuse_core.judge.runner import run_batch; from memuse_core.judge.result import JudgeSettings; "
        "m = start_method(); s = run_batch(sys.argv[1], JudgeSettings(judge='rules'), workers=2); "
        "print(m, s.judged, s.accepted)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(forked)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["fork", "6", "6"]
    assert _verdicts(forked) == _verdicts(one)
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        assert start_method() == "spawn"
        spawned = write_store(tmp_path / "spawned", eps())
        s = run_batch(spawned, JudgeSettings(judge="rules"), workers=2)
    finally:
        stop.set()
        t.join()
    assert s.judged == s.accepted == 6
    assert _verdicts(spawned) == _verdicts(one)


def test_workers_take_turns_at_the_store_and_a_held_lock_never_blocks(tmp_path, monkeypatch):
    """The workers of a batch share one lock around store access (`judge.batch.store_turn`); a
    lock that stays held (its holder was killed) delays a worker by `SHARED_WAIT` at most, after
    which it opens the store anyway and the batch completes with the single-process verdicts."""
    import multiprocessing as mp

    from memuse_core.judge import batch

    eps = [f(f"{f.__name__[:3]}0") for f in (acted_on_episode, ignored_episode, referenced_episode)]
    one = write_store(tmp_path / "one", eps)
    run_batch(one, JudgeSettings(judge="rules"))
    held = mp.get_context("spawn").Lock()
    assert held.acquire()  # never released: as if its holder had died
    monkeypatch.setattr(batch, "SHARED_WAIT", 0.05)
    monkeypatch.setattr(batch, "_SHARED", [])
    batch.share_store_lock(held)
    other = write_store(tmp_path / "other", eps)
    s = run_batch(other, JudgeSettings(judge="rules"))
    assert s.judged == s.accepted == 3
    assert _verdicts(other) == _verdicts(one)
    free = mp.get_context("spawn").Lock()
    batch.share_store_lock(free)
    with batch.store_turn():
        assert not free.acquire(block=False)  # taken for the turn
    assert free.acquire(block=False)  # and given back


def test_a_worker_that_dies_fails_the_batch_and_leaves_its_spans_pending(tmp_path, monkeypatch):
    """A worker killed before judging anything (the OOM killer, kill -9) must not read as a
    finished batch: the command says which workers failed and exits non-zero, nothing is judged,
    and the same command run again judges every span."""
    from typer.testing import CliRunner

    from memuse_core.cli import app

    eps = [f(f"{f.__name__[:3]}{i}") for i in range(2) for f in (acted_on_episode, ignored_episode)]
    db = write_store(tmp_path / "s", eps)
    monkeypatch.setenv("MEMUSE_FAULT", "judge.worker")
    s = run_batch(db, JudgeSettings(judge="rules"), workers=2)
    assert s.broken and s.judged == 0 and s.planned == 4
    assert s.stopped is not None and "2 of 2 judge worker processes failed" in s.stopped
    assert "4 span(s) left pending" in s.stopped
    r = CliRunner().invoke(app, ["judge", "--judge", "rules", "--workers", "2", "--db", str(db)])
    assert r.exit_code == 1 and "judge worker processes failed" in r.output, r.output
    monkeypatch.delenv("MEMUSE_FAULT")
    again = run_batch(db, JudgeSettings(judge="rules"), workers=2)
    assert not again.broken and again.judged == again.accepted == 4
    elig, n, _ = _verdicts(db)
    assert len(elig) == 4 and all(n.get(x) == 1 for x in elig)
