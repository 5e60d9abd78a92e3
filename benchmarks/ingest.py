"""Scale benchmark of the demo generator and the native ingest (issue 2 "Performance").

Generates N demo episodes (default 1,000 and 8,000; ~60 steps each), then in separate processes
measures (1) merely parsing every event line with json.loads and (2) ingesting every file with
`ingest_files` (one transaction per file, parsing in one worker process per core unless
--workers 0) into a fresh store, and prints one table row per N:
wall times, events/s, peak RSS of the ingest process, database size against the unique text it
stores, and the ingest / json.loads time ratio. Targets: 8,000 episodes in < 5 min on 2 cores,
peak < 3 GB, database < 1.5x unique text, ingest <= 3x json.loads. Not a test.

    .venv/bin/python benchmarks/ingest.py            # 1000 and 8000
    .venv/bin/python benchmarks/ingest.py 1000 --keep /tmp/bench
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def phase_generate(n: int, out: str, steps: int) -> dict:
    from memuse_core.demo import DemoPlan, generate

    t = time.perf_counter()
    files = generate(DemoPlan(episodes=n, seed=7, mean_steps=steps), Path(out))
    return {
        "seconds": time.perf_counter() - t,
        "files": [str(p) for p in files.event_files],
        "bytes": sum(p.stat().st_size for p in files.event_files),
        "truth_rows": files.truth_rows,
    }


def phase_parse(files: list[str]) -> dict:
    t, c = time.perf_counter(), time.process_time()
    n = 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                json.loads(line)
                n += 1
    return {"seconds": time.perf_counter() - t, "cpu": time.process_time() - c, "events": n}


def phase_ingest(files: list[str], db: str, profile: str | None, workers: int | None) -> dict:
    from memuse_core.ingest.parallel import ingest_files
    from memuse_core.store import connect

    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    t, c = time.perf_counter(), time.process_time()
    from memuse_core.demo.build import BULK_CHECKPOINT

    con = connect(db)
    con.execute(f"SET checkpoint_threshold = '{BULK_CHECKPOINT}'")  # as `memuse demo` does
    events = episodes = 0
    for _, r in ingest_files(con, [Path(f) for f in files], workers=workers):
        if isinstance(r, Exception):
            raise r
        events += r.events
        episodes += r.episodes
    con.execute("CHECKPOINT")
    unique = con.execute("SELECT coalesce(sum(strlen(text)), 0), count(*) FROM blobs").fetchone()
    con.close()
    seconds, cpu = time.perf_counter() - t, time.process_time() - c
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu += kids.ru_utime + kids.ru_stime  # the parsing worker processes
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile)  # type: ignore[arg-type]
    return {
        "seconds": seconds,
        "cpu": cpu,
        "events": events,
        "episodes": episodes,
        "unique_text_bytes": unique[0],
        "blobs": unique[1],
        "db_bytes": os.path.getsize(db),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "worker_peak_rss_mb": kids.ru_maxrss / 1024,
    }


def _child(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--phase", *args], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(n: int, steps: int, keep: str | None, profile: str | None, workers: int | None) -> dict:
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix=f"memuse-bench-{n}-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        gen = _child("generate", str(n), str(base / "corpus"), str(steps))
        # the machine's speed drifts by ±15% between runs: the baseline is the median of three
        parses = sorted(
            (_child("parse", json.dumps(gen["files"])) for _ in range(3)), key=lambda r: r["seconds"]
        )
        parse = parses[1]
        db = base / "bench.duckdb"
        if db.exists():
            db.unlink()
        ing = _child("ingest", json.dumps(gen["files"]), str(db), profile or "", str(workers))
        return {"n": n, "gen": gen, "parse": parse, "ingest": ing}
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--phase":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        kind, args = sys.argv[2], sys.argv[3:]
        if kind == "generate":
            res = phase_generate(int(args[0]), args[1], int(args[2]))
        elif kind == "parse":
            res = phase_parse(json.loads(args[0]))
        else:
            res = phase_ingest(
                json.loads(args[0]), args[1], args[2] or None, None if args[3] == "None" else int(args[3])
            )
        print(json.dumps(res))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[1000, 8000])
    ap.add_argument("--steps", type=int, default=60, help="mean steps per episode")
    ap.add_argument("--keep", help="keep the corpus and database under this folder")
    ap.add_argument("--profile", help="write a cProfile of the ingest to this file")
    ap.add_argument(
        "--workers",
        type=int,
        default=None,
        help="parsing processes (default: one per core; 0: the sequential ingest_path loop)",
    )
    a = ap.parse_args()
    head = (
        f"{'episodes':>8} {'events':>10} {'input MB':>9} {'gen s':>7} {'json s':>7} {'ingest s':>9} "
        f"{'events/s':>9} {'ratio':>6} {'cpu ratio':>9} {'peak MB':>8} {'worker MB':>9} {'db MB':>8} "
        f"{'text MB':>8} {'db/text':>8}"
    )
    print(
        "wall seconds; `ratio` = ingest / json.loads wall time (the median of three json.loads passes; ingest "
        "includes the final checkpoint); "
        "`cpu ratio` = CPU seconds of the ingest and its parsing workers / CPU seconds of json.loads; "
        "`peak MB` of the writing process, `worker MB` the largest parsing worker (the load average is "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start)"
    )
    print(head)
    print("-" * len(head))
    for n in a.sizes:
        r = run(n, a.steps, f"{a.keep}/{n}" if a.keep else None, a.profile, a.workers)
        g, p, i = r["gen"], r["parse"], r["ingest"]
        print(
            f"{i['episodes']:>8} {i['events']:>10,} {g['bytes'] / 1e6:>9.0f} {g['seconds']:>7.1f} {p['seconds']:>7.1f} "
            f"{i['seconds']:>9.1f} {i['events'] / i['seconds']:>9,.0f} {i['seconds'] / p['seconds']:>6.2f} "
            f"{i['cpu'] / p['cpu']:>9.2f} "
            f"{i['peak_rss_mb']:>8.0f} {i['worker_peak_rss_mb']:>9.0f} {i['db_bytes'] / 1e6:>8.1f} {i['unique_text_bytes'] / 1e6:>8.1f} "
            f"{i['db_bytes'] / max(1, i['unique_text_bytes']):>8.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
