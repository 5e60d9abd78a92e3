"""Benchmark: bulk loading of stored episodes, and the rules-judge batch that depends on it.

    .venv/bin/python benchmarks/load.py --db /tmp/x.duckdb            # an existing built store
    .venv/bin/python benchmarks/load.py --episodes 300                # make a demo store first
    .venv/bin/python benchmarks/load.py --db /tmp/x.duckdb --judge    # also time `judge --judge rules`
    .venv/bin/python benchmarks/load.py --db /tmp/x.duckdb --judge --workers 2
    .venv/bin/python benchmarks/load.py --db /tmp/x.duckdb --check    # loaded == validated events

Measures (1) `load_episodes` over every stored episode in chunks (episodes/s and eligible
spans/s, wall and CPU), and with `--judge` (2) a full rules batch (`run_batch`) on a copy of the
store, so the store itself is never changed (batch CPU time includes the worker processes). `--check` validates every loaded event again with
pydantic and compares (the loader builds stored rows without re-validating them). Not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _load(db: str, chunk: int, check: bool) -> dict[str, float]:
    from memuse_core.store import connect, load_episodes

    con = connect(db, read_only=True)
    try:
        eids = [r[0] for r in con.execute("SELECT episode_id FROM episodes ORDER BY file_id, seq").fetchall()]
        spans = con.execute("SELECT count(*) FROM spans WHERE status = 'eligible'").fetchone()[0]  # type: ignore[index]
        t0, c0 = time.perf_counter(), time.process_time()
        n_steps = 0
        for i in range(0, len(eids), chunk):
            recs = load_episodes(con, eids[i : i + chunk])
            n_steps += sum(r.T for r in recs.values())
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if check:
            _check(con, eids, chunk)
    finally:
        con.close()
    return {"episodes": len(eids), "spans": spans, "steps": n_steps, "wall": wall, "cpu": cpu}


def _check(con, eids: list[str], chunk: int) -> None:  # noqa: ANN001
    from memuse_core.events import EVENT_ADAPTER
    from memuse_core.store.reader import episode_events as _episode_events

    n = 0
    for i in range(0, len(eids), chunk):
        for _, ev in _episode_events(con, eids[i : i + chunk]):
            v = EVENT_ADAPTER.validate_python(ev.model_dump())
            if v != ev or v.model_dump_json() != ev.model_dump_json():
                raise SystemExit(f"loaded event differs from its validated copy: {ev!r}")
            n += 1
    print(f"check: {n:,} loaded events equal their validated copies")


def _judge(db: str, workers: int) -> dict[str, float]:
    from memuse_core.judge.result import JudgeSettings
    from memuse_core.judge.runner import run_batch

    def children() -> float:
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime

    t0, c0, k0 = time.perf_counter(), time.process_time(), children()
    s = run_batch(db, JudgeSettings(judge="rules"), workers=workers)
    return {
        "judged": s.judged,
        "wall": time.perf_counter() - t0,
        "cpu": time.process_time() - c0 + children() - k0,
        "errors": sum(s.errors.values()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", help="a built store (default: make a demo store in a temp folder)")
    ap.add_argument("--episodes", type=int, default=300, help="demo size when --db is not given")
    ap.add_argument("--chunk", type=int, default=200, help="episodes per load_episodes call")
    ap.add_argument("--judge", action="store_true", help="also time a rules batch on a copy of the store")
    ap.add_argument("--workers", type=int, default=1, help="processes for the rules batch")
    ap.add_argument("--check", action="store_true", help="compare loaded events with validated copies")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="memuse-load-")
    try:
        db = a.db
        if db is None:
            db = os.path.join(tmp, "demo.duckdb")
            exe = Path(sys.executable).with_name("memuse")
            t = time.perf_counter()
            subprocess.run([str(exe), "demo", "--episodes", str(a.episodes), "--db", db], check=True)
            print(f"demo + build: {time.perf_counter() - t:.1f} s")
        r = _load(db, a.chunk, a.check)
        print(
            f"load_episodes: {r['episodes']} episodes, {r['steps']:,} steps, {r['spans']} eligible spans in "
            f"{r['wall']:.2f} s wall / {r['cpu']:.2f} s CPU: {r['episodes'] / r['wall']:.1f} episodes/s, "
            f"{r['spans'] / r['wall']:.1f} spans/s ({r['spans'] / max(r['cpu'], 1e-9):.1f} per CPU-second)"
        )
        if a.judge:
            copy = os.path.join(tmp, "judge.duckdb")
            shutil.copyfile(db, copy)
            j = _judge(copy, a.workers)
            print(
                f"rules batch ({a.workers} process{'es' if a.workers > 1 else ''}): {j['judged']} spans ({j['errors']} errors) in {j['wall']:.1f} s wall / "
                f"{j['cpu']:.1f} s CPU: {j['judged'] / j['wall']:.1f} spans/s "
                f"({j['judged'] / max(j['cpu'], 1e-9):.1f} per CPU-second)"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
