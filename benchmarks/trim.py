"""MemTrim performance (MemTrim 4.4: runtime overhead), printed as a table.

    .venv/bin/python benchmarks/trim.py [--memories 10000] [--units 10] [--db data/demo.duckdb]

Cases (with their performance targets):
- write-time indexing: units/s inserted into the trie from parsed memories (key alignment
  included), and units/s including the deterministic parser (target >= 20,000 units/s);
- read time per retrieved memory: 10 retrieved memories of `--units` units each against an
  index of memories x units units (default 100,000), query parsing excluded (target <= 0.2 ms);
- filtering a Mem0 result page (`{"results": [...]}`, 10 Mem0-style fact memories) with
  `MemoryFilter` and the deterministic parser, query parsing included: warm (the memories are
  indexed) and cold (the page's memories are new, so they are parsed and indexed too)
  (target < 5 ms);
- with --db: `memuse trim` over that store (run on a temporary copy, so the store is untouched).

Times are medians of wall time (CPU time of this process alongside where it is one block). The
machine may be shared: numbers move with its load.
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

from memuse_core.trim import MemoryFilter, MemTrim, ScopedIndex  # noqa: E402
from memuse_core.trim.parse_det import DeterministicParser  # noqa: E402

CITIES = ["Oslo", "Bergen", "Rome", "Lima", "Kyoto", "Cairo", "Quito", "Porto", "Turin", "Dakar"]
FOODS = ["pizza", "sushi", "olives", "tofu", "curry", "tacos", "ramen", "paella", "kimchi", "falafel"]


def memory_text(rng: random.Random, units: int, n_keys: int) -> str:
    """A structured memory: `units` key: value facts over a shared key space (overlap is common)."""
    keys = rng.sample(range(n_keys), units)
    return "\n".join(f"service{k // 10} setting{k % 10}: value{rng.randrange(4)}" for k in keys)


def mem0_fact(rng: random.Random) -> str:
    """One Mem0-style fact about the user."""
    return rng.choice(
        [
            f"Lives in {rng.choice(CITIES)}",
            f"Likes {rng.choice(FOODS)}",
            f"Dislikes {rng.choice(FOODS)}",
            rng.choice(["Is vegetarian", "Is vegan", "Is married", "Is a nurse", "Works at Acme"]),
            f"Favourite food is {rng.choice(FOODS)}",
            f"Allergic to {rng.choice(FOODS)}",
        ]
    )


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--units", type=int, default=10)
    ap.add_argument("--retrieved", type=int, default=10)
    ap.add_argument("--reads", type=int, default=2_000)
    ap.add_argument("--pages", type=int, default=500, help="Mem0 result pages filtered")
    ap.add_argument("--db", type=Path, default=None, help="store to time `memuse trim` on (copied first)")
    a = ap.parse_args(argv)
    rng = random.Random(42)
    n_keys = max(a.units * 20, 2_000)
    texts = [memory_text(rng, a.units, n_keys) for _ in range(a.memories)]
    parser = DeterministicParser()

    # -- write time ------------------------------------------------------------------------------
    c0, w0 = time.process_time(), time.perf_counter()
    parsed = [parser.parse(t, "value1") for t in texts]
    t_parse, w_parse = time.process_time() - c0, time.perf_counter() - w0
    n_units = sum(len(p.units) for p in parsed)
    trimmer = MemTrim()
    c0, w0 = time.process_time(), time.perf_counter()
    for i, (t, p) in enumerate(zip(texts, parsed)):
        trimmer.write_parsed(i, t, "value1", p)
    t_index, w_index = time.process_time() - c0, time.perf_counter() - w0

    # -- read time per retrieved memory ------------------------------------------------------------
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
    ms_per_mem = median_ms(per_read) / a.retrieved

    # -- a Mem0 result page --------------------------------------------------------------------------
    flt = MemoryFilter(ScopedIndex())
    pool = [{"id": f"m{i}", "memory": mem0_fact(rng), "score": 0.5} for i in range(2_000)]
    flt.follow({"results": [dict(r, event="ADD") for r in pool]}, user_id="alice")
    questions = [
        "I live in Bergen, what should I cook?",
        "I'm vegan now. Any dinner ideas?",
        "What should I eat?",
    ]
    warm: list[float] = []
    cold: list[float] = []
    for i in range(a.pages):
        page = {"results": rng.sample(pool, 10)}
        t0 = time.perf_counter()
        flt(questions[i % len(questions)], page, user_id="alice")
        warm.append(time.perf_counter() - t0)
        fresh = {
            "results": [{"id": f"new{i}-{j}", "memory": mem0_fact(rng), "score": 0.5} for j in range(10)]
        }
        t0 = time.perf_counter()
        flt(questions[i % len(questions)], fresh, user_id="bob")
        cold.append(time.perf_counter() - t0)

    rows = [
        ("memories written", f"{a.memories:,}", f"{a.units} units each"),
        ("units in the trie", f"{len(trimmer.trie):,}", f"({n_units:,} parsed)"),
        (
            "index: trie insert (wall)",
            f"{n_units / w_index:,.0f} units/s",
            f"CPU {n_units / t_index:,.0f}/s; target >= 20,000",
        ),
        (
            "index: parse + insert (wall)",
            f"{n_units / (w_parse + w_index):,.0f} units/s",
            f"CPU {n_units / (t_parse + t_index):,.0f}/s; deterministic parser; target >= 20,000",
        ),
        (
            "read per retrieved memory",
            f"{ms_per_mem:.4f} ms",
            f"median wall; CPU mean {cpu_ms_per_mem:.4f}; {a.retrieved} retrieved; target <= 0.2",
        ),
        (
            "Mem0 page of 10, warm",
            f"{median_ms(warm):.3f} ms",
            f"median wall, query parsed; p90 {sorted(warm)[int(0.9 * len(warm))] * 1000:.3f}; target < 5",
        ),
        (
            "Mem0 page of 10, cold",
            f"{median_ms(cold):.3f} ms",
            f"10 new memories parsed and indexed too; p90 {sorted(cold)[int(0.9 * len(cold))] * 1000:.3f}",
        ),
    ]
    if a.db is not None:
        from memuse_core.store import connect
        from memuse_core.store.trim import episode_ids
        from memuse_core.trim.whatif_batch import run_store

        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "copy.duckdb"
            shutil.copy(a.db, copy)
            con = connect(copy)
            try:
                n_eps = len(episode_ids(con))
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
                f"{summary['entries']:,} entries",
            )
        )
    w = max(len(r[0]) for r in rows)
    print(f"{'measure':<{w}}  {'value':>18}  note")
    for name, val, note in rows:
        print(f"{name:<{w}}  {val:>18}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
