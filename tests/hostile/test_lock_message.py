"""DuckDB's lock-conflict message parsed into one sentence naming the file and the holder.

DuckDB says: 'Could not set lock on file "<file>": Conflicting lock is held in <program> (PID n)
[by user u]. See also <url>'. Both paths may contain dots, spaces, quotes, parentheses and any
unicode; the holder's command line comes from /proc when it is readable. The real two-process case
is `lock_held_by_another_process` in hostile_lock.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memuse_core.store.connection import StoreError, connect, lock_conflict

FILE = '/data/run.v1.2/my "best" db (copy) ünï.duckdb'
PROGRAM = "/opt/py 3.11.7/bin/python3.11"
DEAD_PID = 4_194_303  # above the default pid_max: no such process


def duckdb_message(file: str, holder: str) -> str:
    return (
        f'IO Error: Could not set lock on file "{file}": Conflicting lock is held in {holder}. '
        "See also https://duckdb.org/docs/current/connect/concurrency"
    )


@pytest.mark.parametrize("suffix", ["", " by user root"])
def test_file_and_program_are_named_whole(suffix: str) -> None:
    msg = duckdb_message(FILE, f"{PROGRAM} (PID {DEAD_PID}){suffix}")
    assert lock_conflict(msg, Path("ignored")) == (
        f'database "{FILE}" is locked by process {DEAD_PID} ({PROGRAM}); '
        "wait for it to finish or stop it, then retry"
    )


def test_a_live_holder_is_named_with_its_command_line() -> None:
    msg = duckdb_message(FILE, f"{PROGRAM} (PID {os.getpid()})")
    out = lock_conflict(msg, Path("ignored"))
    cmdline = Path(f"/proc/{os.getpid()}/cmdline").read_bytes().split(b"\0")[0].decode()
    assert f"process {os.getpid()} ({PROGRAM}; command: " in out and cmdline in out


def test_a_program_path_holding_pid_text_keeps_the_last_pid() -> None:
    msg = duckdb_message("a.duckdb", f"/tmp/odd (PID 1) dir.v2/python3.11 (PID {DEAD_PID})")
    assert f"process {DEAD_PID} (/tmp/odd (PID 1) dir.v2/python3.11)" in lock_conflict(msg, Path("a"))


def test_without_pid_or_without_anything_recognisable() -> None:
    assert "locked by another process (/usr/bin/python3.11)" in lock_conflict(
        duckdb_message("x.v1.duckdb", "/usr/bin/python3.11"), Path("x")
    )
    out = lock_conflict("IO Error: Could not set lock", Path("data/x.v1 2.duckdb"))
    assert out.startswith('database "data/x.v1 2.duckdb" is locked by another process;')


def test_a_bad_lock_timeout_setting_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMUSE_LOCK_TIMEOUT", "soon")
    with pytest.raises(StoreError, match=r"\$MEMUSE_LOCK_TIMEOUT='soon' is not a number of seconds"):
        connect(tmp_path / "x.duckdb")
    assert not (tmp_path / "x.duckdb").exists()
