"""Scale benchmark of the aggregates.

Builds (or reuses) a store of N demo episodes judged by the offline rules judge, then measures:

1. `memuse report` end to end in a fresh process (Markdown and JSON, baseline comparison with the
   5,000-replicate paired bootstrap): target < 10 s for 8,000 episodes;
2. in-process `build_report` (everything the report prints);
3. the overview the app's front page needs (`group_stats(details=False)` / `overview_frame`), per
   configuration and per run, cold and warm: target < 0.5 s.

Prints one table. Not a test.

    .venv/bin/python benchmarks/report.py                       # 8,000 episodes in a temp dir
    .venv/bin/python benchmarks/report.py 1000 --keep /tmp/rb   # keep the store
    .venv/bin/python benchmarks/report.py --db /tmp/rb/report-8000.duckdb   # reuse a judged store
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

ROOT = Path(__file__).resolve().parents[1]
MEMUSE = [sys.executable, "-m", "memuse_core"]


def _run(args: list[str], quiet: bool = True) -> float:
    return _run_cpu(args, quiet)[0]


def _run_cpu(args: list[str], quiet: bool = True) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+sys) of one `memuse` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    res = subprocess.run(MEMUSE + args, cwd=ROOT, capture_output=quiet, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        sys.exit(f"failed: memuse {' '.join(args)}\n{res.stderr if quiet else ''}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def prepare(n: int, db: Path, steps: int) -> dict[str, float]:
    """Generate N demo episodes (context built) and judge every eligible span with the rules judge."""
    gen = _run(["demo", "-n", str(n), "--steps", str(steps), "--db", str(db)])
    judge = _run(["judge", "--db", str(db), "--judge", "rules"])
    return {"generate+build s": gen, "rules judge s": judge}


def _timed(fn, repeat: int = 1) -> str:  # type: ignore[no-untyped-def]
    """ "first / best wall s (CPU s of the best)" over 1 + `repeat` calls; CPU counts every
    thread of this process (DuckDB runs queries on several threads)."""
    out = []
    for _ in range(1 + repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        out.append((time.perf_counter() - t, time.process_time() - c))
    best = min(out[1:] or out)
    return f"{out[0][0]:.3f} / {best[0]:.3f} ({best[1]:.3f} CPU)"


def measure(db: Path, out: Path) -> list[tuple[str, str]]:
    from memuse_core.metrics import build_report, group_stats, overview_frame
    from memuse_core.store import connect

    con = connect(db, read_only=True)
    try:
        size = con.execute(
            "SELECT (SELECT count(*) FROM episodes), (SELECT count(*) FROM spans), "
            "(SELECT count(*) FROM span_entries), (SELECT count(*) FROM assessments), "
            "(SELECT count(*) FROM verdicts), (SELECT count(*) FROM calls), "
            "(SELECT count(DISTINCT config) FROM runs), (SELECT count(*) FROM runs)"
        ).fetchone()
        cfgs = [r[0] for r in con.execute("SELECT DISTINCT config FROM runs ORDER BY 1").fetchall()]
    finally:
        con.close()
    baseline = "baseline" if "baseline" in cfgs else cfgs[0]
    rows = [
        ("episodes / spans / span entries", f"{size[0]:,} / {size[1]:,} / {size[2]:,}"),
        ("assessments / verdicts / calls", f"{size[3]:,} / {size[4]:,} / {size[5]:,}"),
        ("configurations / runs", f"{size[6]} / {size[7]}"),
    ]
    rows.append((f"load average (1 min) on {os.cpu_count() or 0} cores", f"{os.getloadavg()[0]:.1f}"))
    for label, args in (
        ("md, --baseline", ["--baseline", baseline, "--out", str(out / "md")]),
        ("json, --baseline", ["--baseline", baseline, "--format", "json", "--out", str(out / "json")]),
        ("csv, --by run", ["--by", "run", "--format", "csv", "--out", str(out / "csv")]),
    ):
        wall, cpu = _run_cpu(["report", "--db", str(db), *args])
        rows.append((f"`memuse report` {label}: process wall s (CPU s)", f"{wall:.2f} ({cpu:.2f} CPU)"))
    con = connect(db, read_only=True)
    try:
        rows.append(
            (
                "build_report in process: first / best wall s",
                _timed(lambda: build_report(con, None, baseline), 1),
            )
        )
        for level in ("config", "run"):
            rows.append(
                (
                    f"overview group_stats level={level}: first / best wall s",
                    _timed(lambda level=level: group_stats(con, None, level, details=False), 3),
                )
            )
        rows.append(("overview_frame: first / best wall s", _timed(lambda: overview_frame(con), 3)))
        runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY 1 LIMIT 2").fetchall()]
        rows.append(
            (
                "overview for 2 selected runs: first / best wall s",
                _timed(lambda: group_stats(con, runs, "run", details=False), 3),
            )
        )
    finally:
        con.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("episodes", nargs="?", type=int, default=8000)
    ap.add_argument("--db", type=Path, help="Reuse this judged store instead of generating one.")
    ap.add_argument("--keep", type=Path, help="Keep the generated store and report files here.")
    ap.add_argument("--steps", type=int, default=60, help="Mean steps per demo episode.")
    ap.add_argument("--prepare-only", action="store_true", help="Generate and judge, then stop.")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="memuse-report-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str]] = []
    db = args.db
    if db is None:
        db = work / f"report-{args.episodes}.duckdb"
        if db.exists():
            db.unlink()
        for k, v in prepare(args.episodes, db, args.steps).items():
            rows.append((k, f"{v:.1f}"))
        if args.prepare_only:
            print(f"prepared {db}")
            return
    rows += measure(db, work / "out")
    width = max(len(k) for k, _ in rows)
    print(f"| {'measure':<{width}} | value |\n|{'-' * (width + 2)}|-------|")
    for k, v in rows:
        print(f"| {k:<{width}} | {v} |")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
