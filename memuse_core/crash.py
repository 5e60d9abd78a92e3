"""What a crash must not break: named crash points for the kill -9 tests, and
child processes that exit with their parent.

Crash points. `ingest` and `build` call `point("<name>")` at the moments a crash matters. With
the environment variable `MEMUSE_FAULT=<name>[:<n>]`, the n-th time (default the first) the main
process reaches that point it writes its PID to `MEMUSE_FAULT_FILE` (when set) and stops itself
with SIGSTOP, so a test can list its children and `kill -9` it exactly there (no sleeps);
`MEMUSE_FAULT_ACTION=kill` makes it SIGKILL itself instead. Child processes never stop at a point.
Without `MEMUSE_FAULT` a point costs one environment lookup.

| point | where |
|---|---|
| `ingest.parse` | a file is being parsed: none of it committed (sequential: rows buffered) |
| `ingest.write` | a file's rows are in the open transaction, not committed |
| `ingest.commit` | a file was committed, the next not started |
| `build.start` | the build marker is set, no batch written |
| `build.batch` | a build batch was committed, more may follow |
| `judge.worker` | a judge worker process got its share of spans, none judged (`worker_point`) |

Children. A worker process started with the `spawn` method blocks on its task queue; when its
parent is killed (kill -9, the OOM killer) nothing tells it to stop, so it would wait forever and
keep the multiprocessing resource tracker alive. `die_with_parent` (run first in every worker)
watches the pipe the parent holds open for each spawned child and exits when it closes.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import threading

ENV = "MEMUSE_FAULT"
FILE_ENV = "MEMUSE_FAULT_FILE"
ACTION_ENV = "MEMUSE_FAULT_ACTION"
POINTS = ("ingest.parse", "ingest.write", "ingest.commit", "build.start", "build.batch", "judge.worker")

_seen: dict[str, int] = {}


def point(name: str) -> None:
    """Stop (or kill) this process here when `MEMUSE_FAULT` names this point and count."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    want, _, nth = spec.partition(":")
    if want != name or multiprocessing.parent_process() is not None:
        return
    _seen[name] = _seen.get(name, 0) + 1
    if _seen[name] != (int(nth) if nth else 1):
        return
    target = os.environ.get(FILE_ENV)
    if target:  # written whole, then renamed: a reader never sees a partial PID
        with open(target + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(target + ".tmp", target)
    sig = signal.SIGKILL if os.environ.get(ACTION_ENV) == "kill" else signal.SIGSTOP
    os.kill(os.getpid(), sig)


def worker_point(name: str) -> None:
    """In a worker process: SIGKILL itself here when `MEMUSE_FAULT` names this point (as the OOM
    killer would end it), so a test can check that the parent notices a worker that died."""
    if os.environ.get(ENV) == name and multiprocessing.parent_process() is not None:
        os.kill(os.getpid(), signal.SIGKILL)


def die_with_parent() -> None:
    """In a spawned child: exit as soon as the parent process is gone, however it ended.

    The parent keeps the write end of a pipe to each spawned child; the child's `parent_process()`
    sentinel is the read end, which becomes readable only when that write end closes, i.e. when
    the parent exits or is killed. A daemon thread waits on it and ends the process."""
    parent = multiprocessing.parent_process()
    sentinel = getattr(parent, "sentinel", None)
    if sentinel is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([sentinel])
        os._exit(70)  # EX_SOFTWARE: nothing of this worker's is committed without the parent

    threading.Thread(target=watch, name="memuse-parent-watch", daemon=True).start()
