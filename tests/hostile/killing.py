"""Killing `memuse` with SIGKILL at a named crash point (memuse_core.crash) and checking what
survives: shared by `test_kill.py` and `benchmarks/kill.py`.

`kill_at` starts the real CLI in a subprocess with `MEMUSE_FAULT=<point>`; the process stops
itself there (no sleeps decide where), its descendants are listed from /proc, and it is killed
with SIGKILL. `survivors` says which of those descendants (parse workers, build workers, the
multiprocessing resource tracker) are still running afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import RunEvent, dump_event
from memuse_core.store import connect
from memuse_core.store.checksums import table_checksums

ROOT = Path(__file__).resolve().parents[2]
FILES = {"a.jsonl": 50, "b.jsonl": 40, "c.jsonl": 20}
"""The corpus: 110 small episodes in three files, so the build after ingest has two batches (of
100 episodes) and a kill between them leaves the store half built."""
WAIT = 120.0
"""Upper bound for a step that normally takes a second (a hang fails, nothing waits it out)."""


def _episode(run: str, k: int) -> list:
    b = EpisodeBuilder(f"{run}-e{k}", run_id=run, task=f"Fix bug {k}")
    note = f"Note {k}: the parser rejects a trailing Z before Python 3.11."
    b.host_block("recall", "Memories:\n- " + note, [entry(f"n{k}", note)])
    b.step("look", f"grep -rn bug{k} .", f"src/m{k}.py:1: bug")
    b.step("fix", f"sed -i s/a/b/ src/m{k}.py", "")
    return b.finish(resolved=k % 2 == 0)


def corpus(d: Path) -> Path:
    """Write the corpus (native event logs, one run per file) into `d`."""
    d.mkdir(parents=True, exist_ok=True)
    for name, n in FILES.items():
        run = name.split(".")[0]
        events = [RunEvent(run_id=run, config="kill"), *(e for k in range(n) for e in _episode(run, k))]
        (d / name).write_text("".join(dump_event(e) + "\n" for e in events))
    return d


def memuse(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI to the end (no crash point)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMUSE_FAULT")}
    return subprocess.run(
        [sys.executable, "-m", "memuse_core", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=WAIT,
        env={**env, "MEMUSE_PROGRESS": ""},
    )


def checksums(db: Path) -> dict[str, str]:
    con = connect(db, read_only=True)
    try:
        return table_checksums(con)
    finally:
        con.close()


# -- processes -----------------------------------------------------------------------------------
def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1]), int(fields[19])


def descendants(pid: int) -> dict[int, int]:
    """pid -> start time of every descendant of `pid` (start times tell a reused pid apart)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                children.setdefault(st[1], []).append(int(name))
    out, todo = {}, [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            st = _stat(c)
            if st is not None:
                out[c] = st[2]
                todo.append(c)
    return out


def _alive(pid: int, started: int) -> bool:
    st = _stat(pid)
    return st is not None and st[2] == started and st[0] not in ("Z", "X")


def wait_for(cond: Callable[[], bool], what: str, limit: float = WAIT) -> None:
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.02)


def kill_at(point: str, args: list[str], flag: Path) -> dict[int, int]:
    """Run `memuse <args>` until it stops at crash point `point`, kill -9 it there; returns its
    descendants as they were at the kill. RuntimeError when it ended without reaching the point."""
    env = {**os.environ, "MEMUSE_PROGRESS": "", "MEMUSE_FAULT": point, "MEMUSE_FAULT_FILE": str(flag)}
    flag.unlink(missing_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memuse_core", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: flag.exists() or proc.poll() is not None, f"crash point {point}")
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(
                f"memuse {' '.join(args)} ended (code {proc.returncode}) before {point}: {err}"
            )
        if int(flag.read_text()) != proc.pid:
            raise RuntimeError(f"{point} was reached by another process than memuse")
        wait_for(lambda: (_stat(proc.pid) or ("T",))[0] == "T", "the process to stop")
        kids = descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()
    return kids


def survivors(kids: dict[int, int], limit: float = 30.0) -> list[int]:
    """Those of `kids` still running once they had `limit` seconds to notice their parent died."""
    try:
        wait_for(lambda: not any(_alive(p, t) for p, t in kids.items()), "children to exit", limit)
    except TimeoutError:
        pass
    return [p for p, t in kids.items() if _alive(p, t)]
