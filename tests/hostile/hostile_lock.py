"""A database held by another process: the CLI names the file and the holder.

The generator writes a real DuckDB file and a holder script under paths with dots, spaces and
non-ASCII letters (a lock-message parser that stopped at the first dot named only part of a path).
The runner starts the holder as a second process, runs `memuse info` on the file with a short
`MEMUSE_LOCK_TIMEOUT`, and expects exit 1 with one line naming the file, the holder's PID, its
program and its command line; the database file is byte-for-byte unchanged, and once the holder
has stopped the same command succeeds.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from hostile_cases import RUNNERS, Case, Outcome, case, sha256_file

from memuse_core.store import connect

ROOT = Path(__file__).resolve().parents[2]
DIR = "hostile dir.v1.2/ünï côde"
DB = "my db.v1.2 (copy).duckdb"
HOLDER = "hold er.v1.py"
HOLDER_CODE = """import sys, time, pathlib, duckdb
con = duckdb.connect(sys.argv[1])
pathlib.Path(sys.argv[2]).write_text("held")
time.sleep(120)
"""


@case(
    "lock_held_by_another_process",
    "lock",
    code=1,
    message=(
        r'^error: database ".*/hostile dir\.v1\.2/ünï côde/my db\.v1\.2 \(copy\)\.duckdb" is locked by '
        r"process \d+ \(\S*python\S*; command: .*'.*hold er\.v1\.py' .*\); wait for it to finish"
    ),
)
def _(d: Path) -> Path:
    folder = d / DIR
    folder.mkdir(parents=True, exist_ok=True)
    (folder / HOLDER).write_text(HOLDER_CODE)
    db = folder / DB
    connect(db).close()  # an empty MemUse store
    return db


def _memuse(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMUSE_LOCK_TIMEOUT": "0.3"}
    return subprocess.run(
        [sys.executable, "-m", "memuse_core", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def run_lock(c: Case, db: Path, scratch: Path) -> Outcome:
    flag = scratch / "held"
    holder = subprocess.Popen([sys.executable, str(db.parent / HOLDER), str(db), str(flag)])
    try:
        for _ in range(600):
            if flag.exists() or holder.poll() is not None:
                break
            time.sleep(0.05)
        assert flag.exists(), "the holder process did not take the lock"
        before = sha256_file(db)
        r = _memuse("info", "--db", str(db))
        after = sha256_file(db)
        message = r.stderr.strip()
        # The line names this very holder: its PID.
        assert f"process {holder.pid} (" in message, message
    finally:
        holder.terminate()
        holder.wait(timeout=30)
    continued = _memuse("info", "--db", str(db)).returncode == 0
    assert len(message.splitlines()) == 1 and re.search(r"\S", message)
    return Outcome(r.returncode, message, before, after, [], continued)


RUNNERS["lock"] = run_lock
