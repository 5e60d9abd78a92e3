"""MemTrim performance (MemTrim 4.4: runtime overhead), printed as a table.

    .venv/bin/python benchmarks/trim.py [--memories 10000] [--units 10] [--db data/demo.duckdb]

- write-time indexing: units/s inserted into the trie (pre-parsed memories, key alignment
  included), and units/s including deterministic parsing;
- read-time trimming, excluding query parsing: ms per retrieved memory with 10 retrieved
  memories of `--units` units each against a trie of memories x units units;
- with --db: `memuse trim` over that store (run on a temporary copy, so the store is untouched).

Times are CPU time of this process (the machine may be shared) with wall time alongside.

Targets (issue 7): indexing >= 20,000 units/s; read <= 0.2 ms per retrieved memory at 10 units
each and a 100,000-unit trie; `memuse trim` over the 8,000-episode demo < 5 minutes.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memuse_core.trim import MemTrim  # noqa: E402
from memuse_core.trim.parse_det import DeterministicParser  # noqa: E402


def memory_text(rng: random.Random, units: int, n_keys: int) -> str:
    """A structured memory: `units` key: value facts over a shared key space (overlap is common)."""
    keys = rng.sample(range(n_keys), units)
    return "\n".join(f"service{k // 10} setting{k % 10}: value{rng.randrange(4)}" for k in keys)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--units", type=int, default=10)
    ap.add_argument("--retrieved", type=int, default=10)
    ap.add_argument("--reads", type=int, default=2_000)
    ap.add_argument("--db", type=Path, default=None, help="store to time `memuse trim` on (copied first)")
    a = ap.parse_args(argv)
    rng = random.Random(42)
    n_keys = max(a.units * 20, 2_000)
    texts = [memory_text(rng, a.units, n_keys) for _ in range(a.memories)]
    parser = DeterministicParser()

    c0 = time.process_time()
    parsed = [parser.parse(t, "value1") for t in texts]
    t_parse = time.process_time() - c0
    n_units = sum(len(p.units) for p in parsed)

    trimmer = MemTrim()
    c0, w0 = time.process_time(), time.perf_counter()
    for i, (t, p) in enumerate(zip(texts, parsed)):
        trimmer.write_parsed(i, t, "value1", p)
    t_index, w_index = time.process_time() - c0, time.perf_counter() - w0

    queries = [
        trimmer.parse_query(memory_text(rng, a.units, n_keys) + "\nQuestion: which value?") for _ in range(50)
    ]
    ids = list(range(a.memories))
    plan = [(queries[r % len(queries)], rng.sample(ids, a.retrieved)) for r in range(a.reads)]
    per_read: list[float] = []
    c0 = time.process_time()
    for q, retrieved in plan:
        t0 = time.perf_counter()
        trimmer.read_parsed(q, retrieved)
        per_read.append(time.perf_counter() - t0)
    cpu_ms_per_mem = (time.process_time() - c0) / a.reads / a.retrieved * 1000
    ms_per_mem = statistics.median(per_read) / a.retrieved * 1000

    rows = [
        ("memories written", f"{a.memories:,}", ""),
        ("units in the trie", f"{len(trimmer.trie):,}", f"({n_units:,} parsed)"),
        (
            "write-time indexing (CPU)",
            f"{n_units / t_index:,.0f} units/s",
            f"wall {n_units / w_index:,.0f}/s; target >= 20,000",
        ),
        ("parse + index (CPU)", f"{n_units / (t_parse + t_index):,.0f} units/s", "deterministic parser"),
        (
            "read, no query parsing (CPU)",
            f"{cpu_ms_per_mem:.4f} ms/memory",
            f"wall median {ms_per_mem:.4f}; target <= 0.2",
        ),
    ]
    if a.db is not None:
        from memuse_core.store import connect
        from memuse_core.trim.whatif import run_store

        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "copy.duckdb"
            shutil.copy(a.db, copy)
            con = connect(copy)
            try:
                n_eps = con.execute("SELECT count(*) FROM episodes").fetchone()[0]  # type: ignore[index]
                t0, c0 = time.perf_counter(), time.process_time()
                summary = run_store(con)
                t_trim, c_trim = time.perf_counter() - t0, time.process_time() - c0
            finally:
                con.close()
        rows.append(
            (
                "memuse trim (wall)",
                f"{t_trim:,.1f} s",
                f"CPU {c_trim:,.1f} s; {n_eps:,} episodes, {summary['deliveries']:,} deliveries, "
                f"{summary['entries']:,} entries; target < 300 s",
            )
        )
    w = max(len(r[0]) for r in rows)
    print(f"{'measure':<{w}}  {'value':>22}  note")
    for name, val, note in rows:
        print(f"{name:<{w}}  {val:>22}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
