"""Importing many files at once: parsing in worker processes, writing in this one.

Validating events (pydantic) and turning them into rows is pure Python and dominates an import;
DuckDB's inserts and commits are the rest. `ingest_files` runs the first part for each file in a
worker process (files in parallel; `ingest.parse_worker`, which imports neither duckdb nor pandas)
and streams the rows back as Arrow tables (files in a spool folder, `ingest.spool`), while this process
owns the single DuckDB connection and writes each file in its own transaction, in the order given.
Without worker processes, one thread of this process can take the workers' part (`ParseThread`)
while this thread writes: DuckDB works without the GIL, so the writing overlaps the parsing.
Workers are spawned, or forked when a caller starts them before it opens the store
(`start_workers`: `memuse ingest` and the benchmark do), so they need not import the parser again;
a process that holds DuckDB is never forked.
The store ends up exactly as a sequential `ingest_path` loop would leave it (the same tables, rows,
file ids, errors and skips); only `blobs` texts that several files share are offered more than once
(the insert ignores known hashes).

Semantics kept from `ingest_path` (DESIGN.md "Bad input"): each file is all or nothing; a bad file
is reported with file, line and field and the others still land; a file whose content was already
imported is skipped; an episode or run id already stored (or stored by an earlier file of the same
call) rejects the file. Workers stream rows in batches (`EventWriter.FLUSH_ROWS`), so a large file
is never held whole, and at most `workers + 1` files are in flight. A worker that dies stops the
import with an error instead of hanging (the files committed before it stay).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..crash import point
from ..store import Connection, DatabaseError
from ..store.files import begin_file, commit_file, imported_from, known_files, rollback
from ..store.tables import DuplicateKey, existing_ids, insert_arrow
from ..store.writer import duplicate_error
from .base import IngestError, IngestResult, importers, ingest_path
from .checks import resolve
from .grouped import grouping_helps, ingest_grouped
from .grown import grown_prefix
from .parse_worker import observer_state, parse_files, worker
from .spool import make_spool, remove_spool

PARALLEL_MIN_BYTES = 32 << 20
"""Below this much input, starting worker processes (~0.5 s) costs more than it saves."""


def default_workers(n_files: int) -> int:
    return max(1, min(n_files, os.cpu_count() or 1))


def ingest_files(
    con: Connection,
    paths: list[Path],
    *,
    workers: int | None = None,
    known_blobs: set[int] | None = None,
    on_event: Callable[[int], None] | None = None,
    min_bytes: int = PARALLEL_MIN_BYTES,
    grouped: bool = False,
    pool: Workers | None = None,
    thread: bool | None = None,
) -> Iterator[tuple[Path, IngestResult | IngestError]]:
    """Import `paths` (each in its own transaction) and yield (path, result or error) in order.

    Uses worker processes when `workers` asks for them (> 0), or by default (None) when the input
    is large enough (`min_bytes`); otherwise the plain `ingest_path` loop, or with `grouped` (a
    batch folder of small files) the same files committed a group at a time (`ingest.grouped`:
    same store, fewer statements). Without worker processes, several files that are large enough
    together (`PIPELINE_MIN_BYTES`) are parsed by one thread of this process while this thread
    writes (`ParseThread`: DuckDB releases the GIL while it inserts and commits, so writing file k
    overlaps parsing file k+1); `thread` True or False forces that choice. `pool`: the workers
    `start_workers` started for this call (before `con` was opened); without one they are spawned
    here. Bugs (not bad input) raise."""
    n = _parallel_workers(paths, workers, min_bytes)
    if n <= 0:
        if pool is not None:
            pool.close()
        known = known_blobs if known_blobs is not None else set()
        if grouped and grouping_helps(paths):
            yield from ingest_grouped(con, paths, known_blobs=known, on_event=on_event)
            return
        if thread if thread is not None else _thread_helps(paths):
            yield from _Parallel(con, paths, 1, on_event, ParseThread()).run()
            return
        for p in paths:
            try:
                yield p, ingest_path(con, p, known_blobs=known, on_event=on_event)
            except IngestError as e:
                yield p, e
        return
    yield from _Parallel(con, paths, n, on_event, pool).run()


PIPELINE_MIN_BYTES = 8 << 20
"""From this much input in two or more files, an import without worker processes parses in a
thread of its own (`ParseThread`); below it the plain loop (nothing worth overlapping)."""


def _input_bytes(paths: list[Path]) -> int:
    """The size of the files among `paths` (what the worker and thread thresholds compare)."""
    return sum(p.stat().st_size for p in paths if p.is_file())


def _thread_helps(paths: list[Path]) -> bool:
    return len(paths) >= 2 and _input_bytes(paths) >= PIPELINE_MIN_BYTES


def _parallel_workers(paths: list[Path], workers: int | None, min_bytes: int) -> int:
    """How many parse workers `ingest_files(paths, workers=..., min_bytes=...)` uses (0: none)."""
    if not paths or not _spawn_safe():
        return 0
    n = default_workers(len(paths)) if workers is None else workers
    if workers is None and _input_bytes(paths) < min_bytes:
        return 0
    return max(0, min(n, len(paths)))


class Workers:
    """Parse worker processes (`parse_worker.worker`) and their queues, started for one import.

    Each worker first waits for the import's settings on its own pipe (`begin`), so the workers
    can be started before the store is opened (`start_workers`) and told what it holds later."""

    spools = True
    """Batches come through spool files (`ingest.spool`)."""

    def __init__(self, n: int, method: str) -> None:
        ctx = mp.get_context("fork") if method == "fork" else mp.get_context("spawn")
        self.method = method
        self.tasks, self.out = ctx.Queue(), ctx.Queue(maxsize=64)
        pipes = [ctx.Pipe(duplex=False) for _ in range(n)]
        self.setups = [w for _, w in pipes]
        self.procs = [
            ctx.Process(target=worker, args=(self.tasks, self.out, r), daemon=True) for r, _ in pipes
        ]
        for pr in self.procs:
            pr.start()
        for r, _ in pipes:
            r.close()  # each child has its own copy (forked, or passed at spawn)

    def begin(self, settings: tuple[Any, ...]) -> None:
        """Send every worker the import's settings (see `parse_worker.worker`)."""
        for s in self.setups:
            s.send(settings)
            s.close()
        self.setups = []

    def close(self) -> None:
        """End the workers: an unused one is told so, a running one gets None as its next task;
        whichever does not exit within 5 s is terminated."""
        for s in self.setups:
            try:
                s.send(None)
                s.close()
            except (ValueError, OSError):
                pass
        self.setups = []
        for _ in self.procs:
            try:
                self.tasks.put(None)
            except (ValueError, OSError):
                pass
        for pr in self.procs:
            pr.join(timeout=5)
            if pr.is_alive():
                pr.terminate()
                pr.join()

    def terminate(self) -> None:
        for pr in self.procs:
            if pr.is_alive():
                pr.terminate()


class _Stopped(Exception):
    """The import ended: a parse thread stops at its next message (`ParseThread.terminate`)."""


class _ThreadOut:
    """The message queue of a parse thread: unbounded (the writer drains it into its per-file
    buffers anyway, and at most two files are in flight), and closed by `stop`, after which the
    thread's next message ends it."""

    def __init__(self) -> None:
        self.q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.stopped = threading.Event()

    def put(self, item: Any) -> None:
        if self.stopped.is_set():
            raise _Stopped
        self.q.put(item)

    def get(self, timeout: float | None = None) -> Any:
        return self.q.get(timeout=timeout)


class ParseThread:
    """One parse thread in the writing process, in place of worker processes (`Workers`' interface
    for `_Parallel`): the same loop as a worker (`parse_worker.parse_files`), batches handed over
    as Arrow tables in memory (no spool files). Python runs one thread at a time, but DuckDB
    releases the GIL while it inserts and commits, so the store's writing of one file
    overlaps the parsing of the next; the store ends up as the plain loop leaves it (the
    `_Parallel` rules). The thread sees this import's settings directly (same process)."""

    spools = False

    def __init__(self) -> None:
        self.tasks: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.out = _ThreadOut()
        self.thread: threading.Thread | None = None
        self.procs = [self]
        self.exitcode: int | None = None  # a failure is a "crash" message; 1 if the thread died anyway

    SWITCH_INTERVAL = 0.001
    """Seconds the parse thread may hold the GIL while the writer waits for it (Python's default
    is 0.005): the writer takes the GIL back after every DuckDB statement, and at 5 ms those
    waits added up to a third of the overlap (measured on 1,000 demo episodes: 5.9-6.0 s at the
    default, 5.3-5.5 s at 1 ms; 0.2-2 ms alike). Set while any parse thread runs (`_Switch`)."""

    def begin(self, settings: tuple[Any, ...]) -> None:
        (eps, runs), known, _state, _folder = settings
        # copies: the writer adds each committed file's ids to its own sets while this thread runs
        args = (self.tasks, self.out, (set(eps), set(runs)), dict(known), None)
        self.thread = threading.Thread(target=self._run, args=args, name="memuse-parse", daemon=True)
        _SWITCH.enter(self.SWITCH_INTERVAL)
        try:
            self.thread.start()
        except BaseException:
            _SWITCH.leave()
            self.thread = None
            raise

    def _run(self, *args: Any) -> None:
        try:
            parse_files(*args)
        except _Stopped:
            pass
        except BaseException:  # not reported as a "crash" message: the writer stops waiting (exit code)
            self.exitcode = 1
            raise

    def is_alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def terminate(self) -> None:
        self.out.stopped.set()

    def close(self) -> None:
        """End the thread: None as its next task; an import that ended early has stopped its
        messages (`terminate`), so a thread in the middle of a file ends at its next one."""
        self.tasks.put(None)
        if self.thread is not None:
            self.thread.join()
            self.thread = None
            _SWITCH.leave()


class _Switch:
    """Python's thread switch interval (`sys.setswitchinterval`), shortened while at least one
    parse thread runs in this process and restored when the last one ends."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.saved = 0.0

    def enter(self, seconds: float) -> None:
        with self.lock:
            if self.users == 0:
                self.saved = sys.getswitchinterval()
                sys.setswitchinterval(min(seconds, self.saved))
            self.users += 1

    def leave(self) -> None:
        with self.lock:
            self.users -= 1
            if self.users == 0:
                sys.setswitchinterval(self.saved)


_SWITCH = _Switch()


def start_workers(
    paths: list[Path], *, workers: int | None = None, min_bytes: int = PARALLEL_MIN_BYTES
) -> Workers | None:
    """The parse workers of a coming `ingest_files(con, paths, workers=workers, ...)` call, started
    now, before this process opens the store, or None when that call would use none (pass the
    result as its `pool`).

    On Linux, in a process that has never opened a DuckDB database (`store.connection.OPENED`) and
    runs no other Python thread, the workers are forked: they start with everything this process
    has imported (a spawned worker imports the parser again, ~0.5 s of CPU each) and are still
    this process's children (their CPU counts as its children's). Otherwise they are spawned, as
    `ingest_files` does without a pool. A process holding DuckDB is never forked."""
    n = _parallel_workers(paths, workers, min_bytes)
    if n <= 0:
        return None
    return Workers(n, "fork" if _fork_safe() else "spawn")


def _fork_safe() -> bool:
    """No DuckDB database was ever opened here and no other Python thread runs (a fork copies
    only the calling thread: a lock another thread holds would stay held in the child)."""
    con_mod = sys.modules.get("memuse_core.store.connection")
    opened = bool(getattr(con_mod, "OPENED", [False])[0]) if con_mod is not None else False
    return sys.platform.startswith("linux") and not opened and threading.active_count() == 1


def _spawn_safe() -> bool:
    """Spawned workers re-import the parent's main script; a main read from stdin or `-c` has no
    file to import, so such a parent imports sequentially instead."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return main_file is None or os.path.exists(main_file)


# ---------------------------------------------------------------------------------------------
# Parent side
# ---------------------------------------------------------------------------------------------


class _Renamed(IngestError):
    """The file's ids collide with a file of this call; it is imported again (`_Parallel._again`)."""


class _FileState:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.file_id: int | None = None
        self.format = ""
        self.sha = ""
        self.size = 0
        self.dead = False  # rolled back or skipped: later messages of the file are dropped
        self.ids: dict[str, list[str]] = {"episodes": [], "runs": []}
        """Episode and run ids this file stores (known to later files once it commits)."""


class _Parallel:
    def __init__(
        self,
        con: Connection,
        paths: list[Path],
        workers: int,
        on_event: Callable[[int], None] | None,
        pool: Workers | ParseThread | None = None,
    ) -> None:
        self.con, self.paths, self.on_event = con, paths, on_event
        self.pool = pool
        self.n_workers = len(pool.procs) if pool is not None else min(workers, len(paths))
        self.eps, self.runs = existing_ids(con)
        self.known_files = known_files(con)

    def run(self) -> Iterator[tuple[Path, IngestResult | IngestError]]:
        # never fork a process that holds a DuckDB connection: without a pool started before the
        # store was opened (`start_workers`), the workers are spawned
        pool = self.pool if self.pool is not None else Workers(self.n_workers, "spawn")
        tasks, out, procs = pool.tasks, pool.out, pool.procs
        folder = make_spool() if pool.spools else ""
        pool.begin(((self.eps, self.runs), self.known_files, observer_state(), folder))
        sent = 0
        buffered: dict[int, deque[tuple[str, Any]]] = {}
        self.in_tx = False
        try:
            for cur, path in enumerate(self.paths):
                while sent < len(self.paths) and sent <= cur + self.n_workers:
                    tasks.put((sent, str(self.paths[sent])))
                    sent += 1
                yield path, self._one(cur, _FileState(path), out, procs, buffered)
        except BaseException:
            self._rollback()
            pool.terminate()
            raise
        finally:
            pool.close()
            if folder:
                remove_spool(folder)  # batches never written (a failed file's, or after an error)

    def _rollback(self) -> None:
        if self.in_tx:
            rollback(self.con)
            self.in_tx = False

    def _one(
        self,
        idx: int,
        st: _FileState,
        out: Any,
        procs: list[Any],
        buffered: dict[int, deque[tuple[str, Any]]],
    ) -> IngestResult | IngestError:
        """Apply one file's messages, in order, up to its final one (done, error or skipped)."""
        pending: IngestResult | IngestError | None = None  # the outcome once the file is dead
        q = buffered.setdefault(idx, deque())
        try:
            while True:
                while not q:
                    self._receive(out, procs, buffered)
                kind, payload = q.popleft()
                if kind == "crash":
                    raise RuntimeError(f"importing {st.path} failed in a worker process:\n{payload}")
                if kind == "skipped":
                    return IngestResult(str(st.path), payload[0], "skipped", error=payload[1])
                if kind == "error":
                    self._rollback()
                    if isinstance(pending, _Renamed) or grown_prefix(self.con, st.path) is not None:
                        return self._again(st)  # the worker could not know the earlier import
                    err = IngestError(*payload)
                    if isinstance(pending, IngestError) and (pending.line or 1 << 62) <= (
                        err.line or 1 << 62
                    ):
                        return pending
                    return err
                if kind == "start":
                    st.format, st.sha, st.size = payload
                    earlier = imported_from(self.con, st.sha)
                    if earlier is not None:  # an earlier file of this call had the same content
                        st.dead = True
                        pending = IngestResult(
                            str(st.path), st.format, "skipped", error=f"already imported from {earlier}"
                        )
                    else:
                        st.file_id = begin_file(self.con)
                        self.in_tx = True
                        point("ingest.parse")
                elif kind == "rows" and st.dead:
                    payload.discard()
                elif kind == "rows":
                    bad = self._insert(st, payload.load())
                    if bad is not None:
                        self._rollback()
                        st.dead = True
                        pending = bad
                elif kind == "done":
                    if isinstance(pending, _Renamed):
                        return self._again(st)
                    if pending is not None:
                        return pending
                    n, episodes, refs = payload
                    assert st.file_id is not None
                    try:
                        resolve(self.con, st.path, refs, st.file_id)
                    except IngestError as e:
                        self._rollback()
                        return e
                    point("ingest.write")
                    commit_file(self.con, st.file_id, str(st.path), st.sha, st.size, st.format, n)
                    self.in_tx = False
                    point("ingest.commit")
                    self.eps.update(st.ids["episodes"])
                    self.runs.update(st.ids["runs"])
                    return IngestResult(str(st.path), st.format, "imported", episodes, n)
        finally:
            buffered.pop(idx, None)

    def _receive(self, out: Any, procs: list[Any], buffered: dict[int, deque[tuple[str, Any]]]) -> None:
        while True:
            try:
                idx, kind, payload = out.get(timeout=1.0)
            except queue.Empty:
                dead = [pr for pr in procs if not pr.is_alive() and pr.exitcode not in (0, None)]
                if dead:
                    raise RuntimeError(
                        f"an import worker process died (exit code {dead[0].exitcode}); the files committed before "
                        "it are kept: run the same import again (a script that calls ingest_files needs an "
                        "`if __name__ == '__main__':` guard, or pass workers=0)"
                    ) from None
                continue
            if kind == "progress":
                if self.on_event is not None and payload:
                    self.on_event(payload)
                continue
            buffered.setdefault(idx, deque()).append((kind, payload))
            return

    def _insert(self, st: _FileState, batch: list[tuple[str, Any]]) -> IngestError | None:
        for table, tbl in batch:
            if table in ("episodes", "runs"):
                err = self._duplicate(st, table, tbl)
                if err is not None:
                    return err
            try:
                insert_arrow(self.con, table, tbl, or_ignore=table == "blobs", file_id=st.file_id)
            except DuplicateKey as e:
                has = e.column in tbl.column_names and "seq" in tbl.column_names
                keys = tbl.column(e.column).to_pylist() if has else []
                d = duplicate_error(e, keys, tbl.column("seq").to_pylist() if has else [])
                return IngestError(st.path, d.line, d.field, f"{d} (import each recording once)")
            except DatabaseError as e:
                return IngestError(st.path, None, None, f"database error: {str(e).splitlines()[0]}")
        return None

    def _again(self, st: _FileState) -> IngestResult | IngestError:
        """Import a file here, in this process: its derived ids collided with a file of this call
        that committed after the worker started, and the sequential path renames them
        (`ingest.ids`), so the store ends up as the sequential loop leaves it."""
        try:
            res = ingest_path(self.con, st.path)
        except IngestError as e:
            return e
        self.eps, self.runs = existing_ids(self.con)
        return res

    def _duplicate(self, st: _FileState, table: str, tbl: Any) -> IngestError | None:
        """An id stored by an earlier file of this call (the worker knew only the ids stored
        before the call began); same message as the sequential writer. A trajectory format
        (derived ids) or a recording that grew since its import (`ingest.grown`) is imported again
        in this process instead (`_again`)."""
        key, seen = ("episode_id", self.eps) if table == "episodes" else ("run_id", self.runs)
        for value, seq in zip(tbl.column(key).to_pylist(), tbl.column("seq").to_pylist(), strict=True):
            if value in seen:
                derived = any(i.name == st.format and getattr(i, "derived_ids", False) for i in importers())
                if derived or grown_prefix(self.con, st.path) is not None:
                    return _Renamed(st.path, seq, None, f"{key} {value!r} is taken: ids renamed")
                return IngestError(
                    st.path, seq, None, f"{key} {value!r} is already stored (import each recording once)"
                )
        st.ids[table].extend(tbl.column(key).to_pylist())
        return None
