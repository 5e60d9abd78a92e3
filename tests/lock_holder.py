"""Another process holding a DuckDB file read-write, as `memuse ingest` or a judge batch does.

DuckDB lets one process hold a file read-write; every other process then fails to open it at all
(notes/STACK.md). Tests use this to check what the app does while the database is busy.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def held(db: Path, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process holding `db` read-write until the block ends (then it is stopped)."""
    flag = tmp_path / f"locked-{db.name}"
    flag.unlink(missing_ok=True)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, pathlib, sys, time; con = duckdb.connect(sys.argv[1]); "
            "pathlib.Path(sys.argv[2]).write_text('1'); time.sleep(120)",
            str(db),
            str(flag),
        ]
    )
    try:
        for _ in range(600):
            if flag.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert flag.exists(), "the lock holder did not start"
        yield proc
    finally:
        proc.terminate()
        proc.wait()
