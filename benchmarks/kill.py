"""kill -9 reliability figures: every crash point, one kill per fresh store.

For each (command, crash point) the real CLI is stopped at that point (`MEMUSE_FAULT`, see
memuse_core/crash.py), its children are listed, it is killed with SIGKILL, and then the same
command (or `memuse ingest` for a killed `memuse build`) runs to the end. A point is *recovered*
when the final store has the same table checksums as an uninterrupted import and the build is
complete; a *survivor* is a child process still running 30 s after the kill. Not a test (the
suite's `tests/hostile/test_kill.py` chains fewer kills); timings are not measured.

    .venv/bin/python benchmarks/kill.py            # every point
    .venv/bin/python benchmarks/kill.py --quick    # one count per point
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hostile"))

from killing import FILES, checksums, corpus, kill_at, memuse, survivors  # noqa: E402

from memuse_core.store import connect  # noqa: E402
from memuse_core.store.build_state import build_state  # noqa: E402


def plan(quick: bool) -> list[tuple[str, list[str], str]]:
    """(crash point, command template, rerun command) for every kill tried."""
    n = len(FILES)
    counts = [1] if quick else list(range(1, n + 1))
    out = []
    for workers in ([], ["--workers", "2"]):
        ingest = ["ingest", "{corpus}", "--db", "{db}", *workers]
        for point in ("ingest.parse", "ingest.write", "ingest.commit"):
            out += [(f"{point}:{k}", ingest, "ingest") for k in counts]
        if not workers:
            out += [("build.start", ingest, "ingest"), ("build.batch:1", ingest, "ingest")]
    for workers in ([], ["--workers", "2"]):
        build = ["build", "--db", "{db}", *workers]
        out += [("build.start", build, "build"), ("build.batch:1", build, "build")]
    return out


def complete(db: Path) -> bool:
    con = connect(db, read_only=True)
    try:
        return build_state(con).complete
    finally:
        con.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="memuse-kill-"))
    try:
        src = corpus(d / "corpus")
        ref = d / "reference.duckdb"
        assert memuse("ingest", str(src), "--db", str(ref)).returncode == 0
        want = checksums(ref)
        tried = recovered = children = survived = 0
        for i, (point, template, rerun) in enumerate(plan(args.quick)):
            db = d / f"s{i}.duckdb"
            cmd = [a.format(corpus=src, db=db) for a in template]
            if cmd[0] == "build":
                assert memuse("ingest", str(src), "--db", str(db), "--no-build").returncode == 0
            kids = kill_at(point, cmd, d / "stopped.pid")
            left = survivors(kids)
            again = [*cmd] if rerun == "ingest" else ["ingest", str(src), "--db", str(db)]
            r = memuse(*[a for a in again if a not in ("--workers", "2")])
            ok = r.returncode == 0 and checksums(db) == want and complete(db)
            tried += 1
            recovered += ok
            children += len(kids)
            survived += len(left)
            print(
                f"{' '.join(cmd[:1] + cmd[4:] if cmd[0] == 'ingest' else cmd[:1] + cmd[3:]):<22} {point:<16} "
                f"children {len(kids)}  survivors {len(left)}  {'recovered' if ok else 'NOT RECOVERED'}"
            )
        print(
            f"\nkill -9 points tried {tried}, recovered with identical table checksums {recovered}; "
            f"child processes at the kills {children}, survivors {survived}"
        )
        return 0 if recovered == tried and survived == 0 else 1
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
