"""A small hand-made corpus for the app tests, and a check that it holds what the tests expect.

Invariant: two configurations (three runs) over the same three tasks; every episode carries a
host-scheduled task recall (two entries) and an agent-directed search result (one entry); one
episode's task and trajectory contain an XSS / markdown-link payload that must render inert.
The corpus goes through the real importer and the real context build (and the rules judge when
it exists), never through hand-written rows.
"""

from __future__ import annotations

from pathlib import Path

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import RunEvent, Usage
from memuse_core.ingest import ingest_path
from memuse_core.store import connect
from memuse_core.store.app import episodes as E
from memuse_core.store.app.runs import list_runs

XSS = "<script>alert('xss')</script> <img src=x onerror=alert(2)> [click me](http://evil.example/x) **bold**"
RUNS = [("memA", "rA1"), ("memA", "rA2"), ("memB", "rB1")]
TASKS = ["t1", "t2", "t3"]


def episode_id(run: str, task: str) -> str:
    return f"{run}-{task}"


def _episode(config: str, run: str, task: str, pos: int) -> list:
    xss = run == "rA1" and task == "t1"
    b = EpisodeBuilder(
        episode_id(run, task),
        run_id=run,
        task_id=task,
        position=pos,
        repo="demo/repo",
        task=f"Fix parse_date in src/dates.py for task {task}." + (f" {XSS}" if xss else ""),
    )
    recall = [
        entry(f"{config}-tip-{task}", "parse dates with datetime.fromisoformat"),
        entry("persona", "Always run the tests before submitting."),
    ]
    b.host_block(
        "recall",
        "Memories:\n- parse dates with datetime.fromisoformat\n- Always run the tests before submitting.",
        entries=recall,
    )
    u = Usage(input_tokens=1000, output_tokens=50)
    b.step(
        "Look for the parser.",
        "grep -rn parse_date src",
        "src/dates.py:3:def parse_date(s):",
        usage=u,
        cost_usd=0.002,
    )
    sid = b.search("date parsing", [("card-1", "Use fromisoformat; strptime is slow.")])
    b.step(
        "Search memory.",
        "memory_search 'date parsing'",
        "card-1: Use fromisoformat; strptime is slow.",
        tool_memory=([entry("card-1", "Use fromisoformat; strptime is slow.")], "search_preview"),
        search_id=sid,
        usage=u,
        cost_usd=0.002,
    )
    b.step(
        "Edit with fromisoformat." + (f" {XSS}" if xss else ""),
        "sed -i 's/strptime/fromisoformat/' src/dates.py",
        XSS if xss else "",
        usage=u,
        cost_usd=0.002,
    )
    b.step(
        "Run tests.",
        "pytest -q",
        "1 failed" if task == "t3" else "3 passed",
        exit_code=1 if task == "t3" else 0,
        usage=u,
        cost_usd=0.002,
    )
    b.step("Run the tests again.", "pytest -q tests/test_dates.py", "3 passed", usage=u, cost_usd=0.002)
    b.final("Submitted.")
    resolved = not (config == "memB" and task == "t2") and task != "t3"
    return b.finish(resolved=resolved)


def write_corpus(dir: Path) -> list[Path]:
    """Write one JSONL file per run; returns the paths."""
    paths = []
    for config, run in RUNS:
        evs = [RunEvent(run_id=run, config=config, label=f"{config} {run}")]
        for pos, t in enumerate(TASKS):
            evs += _episode(config, run, t, pos)
        p = dir / f"{run}.jsonl"
        p.write_text("".join(e.model_dump_json() + "\n" for e in evs))
        paths.append(p)
    return paths


def store_of(dir: Path, name: str, events: list, *, judge: bool = False) -> Path:
    """Write `events` as `name`.jsonl, ingest it into `name`.duckdb and build it (and judge it
    with the rules judge when `judge`): a hand-made episode's store, through the real pipeline."""
    path = dir / f"{name}.jsonl"
    path.write_text("".join(e.model_dump_json() + "\n" for e in events))
    return built_store(dir / f"{name}.duckdb", [path], judge=judge)


def make_db(dir: Path, *, judge: bool = True) -> Path:
    """Ingest, build the context, and judge with the rules judge when available."""
    return built_store(dir / "app.duckdb", write_corpus(dir), judge=judge)


def built_store(db: Path, paths: list[Path], *, judge: bool) -> Path:
    """Ingest `paths` into `db` in order, build the context, and judge with the rules judge when
    `judge`."""
    from memuse_core.build import build_store

    con = connect(db)
    try:
        for p in paths:
            ingest_path(con, p)
    finally:
        con.close()
    build_store(db)
    if judge:
        judge_all(db)
    return db


def judge_all(db: Path) -> bool:
    """Judge every eligible span with the offline rules judge (one batch)."""
    from memuse_core.judge.result import JudgeSettings
    from memuse_core.judge.runner import run_batch

    run_batch(db, JudgeSettings(judge="rules"))
    return True


def test_corpus_shape(tmp_path: Path) -> None:
    db = make_db(tmp_path, judge=False)
    con = connect(db, read_only=True)
    try:
        runs = list_runs(con)
        assert sorted(runs["run_id"]) == ["rA1", "rA2", "rB1"]
        eps = E.episode_table(con)
        assert len(eps) == 9
        assert eps["spans"].min() >= 2
        hits = E.episode_table(con, search="onerror=ALERT")
        assert list(hits["episode_id"]) == [episode_id("rA1", "t1")]
        steps = E.episode_steps(con, episode_id("rA1", "t1"))
        assert list(steps["step"]) == [1, 2, 3, 4, 5, 6]
        txt = E.step_text(con, episode_id("rA1", "t1"), 3)
        assert "<script>" in txt["results"][0]["output"]
        ents = E.episode_entries(con, episode_id("rA1", "t1"))
        assert ents["window_start"].notna().any()
    finally:
        con.close()
