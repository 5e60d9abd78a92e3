"""The worker side of `ingest.parallel`: a spawned process that parses files into Arrow tables.

A worker reads, validates and checks each file it is given and turns its events into rows
(`store.writer.EventWriter`), which it ships to the parent as Arrow tables (through files of a
spool folder, `ingest.spool`) instead of writing them; the parent owns the DuckDB connection. So this module and everything it imports stay free of
duckdb (and of pandas): a spawned worker pays only for what parsing needs
(`tests/test_ingest_worker_imports.py` checks it in a fresh interpreter).
"""

from __future__ import annotations

import functools
import gc
import sys
import traceback
from pathlib import Path
from typing import Any

from ..crash import die_with_parent
from ..store.arrow_rows import rows_to_arrow
from ..store.writer import EventWriter
from .base import IngestError, detect, file_sha256, write_events
from .common import _CONFIG
from .members import member_state, set_member_state
from .observers.builtin import _ENABLED, _EXTRA
from .spool import Held, spool


class ShippingWriter(EventWriter):
    """An EventWriter whose rows go to the parent as Arrow tables instead of into DuckDB: each
    batch is written to a file of the spool folder and its name sent (`ingest.spool`), or, with
    no folder (a parse thread of the writing process, `ingest.parallel.ParseThread`), sent as the
    tables themselves."""

    def __init__(self, idx: int, out: Any, existing: tuple[set[str], set[str]], folder: str | None) -> None:
        super().__init__(None, 0, existing=existing)  # file id 0: the parent sets the real one
        self.idx, self.out, self.folder = idx, out, folder
        self.n_batches = 0

    def flush(self) -> None:
        batch: list[tuple[str, Any]] = []
        if self.blob_rows:
            batch.append(("blobs", rows_to_arrow("blobs", self.blob_rows)))
            self.blob_rows = []
        for table, rows in self.rows.items():
            if rows:
                batch.append((table, rows_to_arrow(table, rows)))
                self.rows[table] = []
        self.n_rows = 0
        if batch:
            self.n_batches += 1  # file indexes are unique in an import: so are the names
            held = (
                Held(batch)
                if self.folder is None
                else spool(self.folder, f"{self.idx}-{self.n_batches}", batch)
            )
            self.out.put((self.idx, "rows", held))


def observer_state() -> tuple[Any, ...]:
    """The parent's process-wide import settings that a worker needs (observers, config, batch plan)."""
    return list(_EXTRA), _ENABLED[0], _CONFIG[0], member_state()


def set_observer_state(state: tuple[Any, ...]) -> None:
    _EXTRA[:], _ENABLED[0], _CONFIG[0], members = state
    set_member_state(members)


def _progress(out: Any, idx: int, k: int) -> None:
    out.put((idx, "progress", k))


class _NoPandas:
    """An import finder that refuses pandas (see `block_pandas`)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (not used by an import worker)", name=name)


def block_pandas() -> None:
    """Refuse pandas in this worker process (a finder first on `sys.meta_path`). Nothing a worker
    runs uses pandas, but pyarrow's first conversion of a Python list imports it to check whether
    the list is a pandas object, which costs ~0.4 s of CPU per worker; with the import refused,
    pyarrow converts lists exactly as it does where pandas is not installed. Only ever called in
    a spawned worker, never in the parent."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())  # type: ignore[arg-type]


def worker(tasks: Any, out: Any, setup: Any) -> None:
    """A worker process's loop: receive this import's settings from `setup` (the read end of a
    pipe: stored ids, imported files, observer state, spool folder; None ends the worker unused),
    then parse the files it is sent until it receives None (rows go through files in the spool
    folder). Started forked (`ingest.parallel.start_workers`, everything already imported) or
    spawned; the loop is the same."""
    die_with_parent()  # a killed parent leaves no worker waiting on the task queue
    gc.freeze()  # a forked worker's inherited objects: never walked by this process's collections
    block_pandas()
    try:
        got = setup.recv()
    except EOFError:  # the parent closed the pipe without an import (it ended early)
        got = None
    setup.close()
    if got is None:
        return
    existing, known_files, state, folder = got
    set_observer_state(state)
    parse_files(tasks, out, existing, known_files, folder)


def parse_files(
    tasks: Any,
    out: Any,
    existing: tuple[set[str], set[str]],
    known_files: dict[str, str],
    folder: str | None,
) -> None:
    """Parse the files sent on `tasks` until None arrives, putting each file's messages on `out`
    (start or skipped, rows batches, progress, then done or error; a bug: crash with its
    traceback). The loop of a worker process (`worker`) and of a parse thread (`folder` None:
    batches are sent as Arrow tables, `ingest.parallel.ParseThread`)."""
    while True:
        task = tasks.get()
        if task is None:
            return
        idx, path = task
        p = Path(path)
        try:
            if not p.exists():
                raise IngestError(p, None, None, "file does not exist")
            imp = detect(p)
            sha = file_sha256(p)
            if sha in known_files:
                out.put((idx, "skipped", (imp.name, f"already imported from {known_files[sha]}")))
                continue
            out.put((idx, "start", (imp.name, sha, p.stat().st_size)))
            w = ShippingWriter(idx, out, existing, folder)
            n, pending = write_events(w, imp, p, functools.partial(_progress, out, idx))
            out.put((idx, "progress", n % 1000))
            out.put((idx, "done", (n, len(w.episodes_written), pending)))
        except IngestError as e:
            out.put((idx, "error", (e.path, e.line, e.field, e.reason)))
        except BaseException:
            out.put((idx, "crash", traceback.format_exc()))
