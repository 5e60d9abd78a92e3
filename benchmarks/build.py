"""Benchmark: build every derived evaluation-context table for growing demo corpora.

    .venv/bin/python benchmarks/build.py                      # 1k, 2k, 4k, 8k episodes
    .venv/bin/python benchmarks/build.py --sizes 100 200 400  # a quick run
    .venv/bin/python benchmarks/build.py --db data/bench.duckdb --keep

One demo corpus of the largest size is generated once (memuse_core.demo, the scale generator);
each size then builds the context of the first N episodes in a fresh child process (so the peak
memory is per size), after the context tables are cleared. Prints a table of wall and CPU time,
peak RSS of one process, episodes, deliveries and spans, and the fitted exponent of time against size and against
deliveries (log-log least squares). Not a test.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _child(db: str, n: int, workers: int) -> None:
    from memuse_core.build import build_store
    from memuse_core.store import connect
    from memuse_core.store.context import clear_context

    con = connect(db)
    try:
        clear_context(con)
        ids = [
            r[0]
            for r in con.execute(
                "SELECT episode_id FROM episodes ORDER BY hash(episode_id) LIMIT ?", [n]
            ).fetchall()
        ]
        n_del = con.execute(
            "SELECT count(*) FROM deliveries WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))", [ids]
        ).fetchone()[0]
    finally:
        con.close()

    def children_cpu() -> float:
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime

    t, c, cc = time.perf_counter(), time.process_time(), children_cpu()
    stats = build_store(db, episode_ids=ids, workers=workers)
    wall = time.perf_counter() - t
    cpu = time.process_time() - c + children_cpu() - cc  # parent + worker processes
    peak_mb = (
        max(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        )
        / 1024
    )
    print(
        json.dumps(
            {
                "n": len(ids),
                "deliveries": n_del,
                "spans": stats["spans"],
                "wall": wall,
                "cpu": cpu,
                "peak_mb": peak_mb,
            }
        )
    )


def _fit(xs: list[float], ys: list[float]) -> float:
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    ap.add_argument("--db", default=None, help="reuse/keep this database (default: a temporary file)")
    ap.add_argument("--keep", action="store_true", help="keep the generated database")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--workers", type=int, default=2, help="build processes (1 = single process)")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        _child(args.db, args.child, args.workers)
        return
    sizes = sorted(args.sizes)
    tmp = None
    db = args.db
    if db is None:
        tmp = tempfile.mkdtemp(prefix="memuse-bench-")
        db = str(Path(tmp) / "bench.duckdb")
    try:
        from memuse_core.store import connect

        have = 0
        if Path(db).exists():
            con = connect(db, read_only=True)
            have = con.execute("SELECT count(*) FROM episodes").fetchone()[0]
            con.close()
        if have < sizes[-1]:
            from memuse_core.demo import DemoPlan, build_demo

            if Path(db).exists():
                os.remove(db)
            t = time.perf_counter()
            res = build_demo(db, DemoPlan(episodes=sizes[-1], seed=args.seed))
            print(
                f"generated and ingested {res.episodes} demo episodes in {time.perf_counter() - t:.0f} s",
                file=sys.stderr,
            )
        rows = []
        for n in sizes:
            out = subprocess.run(
                [sys.executable, __file__, "--db", db, "--child", str(n), "--workers", str(args.workers)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
            r = rows[-1]
            print(
                f"  {r['n']} episodes: wall {r['wall']:.1f} s, cpu {r['cpu']:.1f} s, "
                f"peak {r['peak_mb']:.0f} MB, {r['deliveries']} deliveries, {r['spans']} spans",
                file=sys.stderr,
                flush=True,
            )
        print(
            f"{'episodes':>9} {'deliveries':>11} {'spans':>8} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'ms/episode':>11}"
        )
        for r in rows:
            print(
                f"{r['n']:>9} {r['deliveries']:>11} {r['spans']:>8} {r['wall']:>8.1f} {r['cpu']:>8.1f} "
                f"{r['peak_mb']:>8.0f} {1000 * r['wall'] / r['n']:>11.1f}"
            )
        if len(rows) > 1:
            ns = [r["n"] for r in rows]
            ds = [r["deliveries"] for r in rows]
            print(
                f"fitted exponent: wall ~ episodes^{_fit(ns, [r['wall'] for r in rows]):.2f}, "
                f"cpu ~ episodes^{_fit(ns, [r['cpu'] for r in rows]):.2f}, "
                f"wall ~ deliveries^{_fit(ds, [r['wall'] for r in rows]):.2f}"
            )
    finally:
        if tmp is not None and not args.keep:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
