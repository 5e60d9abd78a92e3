"""Generate the demo corpus and ingest it into a store, then load the planted truth."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..build import build_store
from ..ingest import IngestError
from ..ingest.base import file_sha256
from ..ingest.parallel import ingest_files
from ..store import Connection, connect, db_path
from ..store.demo import bulk_load, load_truth_file
from ..store.files import known_files, stored_run_ids
from .generate import DemoFiles, DemoPlan, generate

BULK_CHECKPOINT = "1GB"
"""DuckDB checkpoint threshold while the demo is ingested (the WAL stays on disk until then)."""


@dataclass
class DemoResult:
    """What `build_demo` did."""

    db: Path
    files: DemoFiles
    episodes: int = 0
    events: int = 0
    truth_rows: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def _refuse_other_demo(con: Connection, files: DemoFiles) -> None:
    """Stop before importing anything when the store already holds demo runs of another seed or
    size (their ids would collide); the same demo again is recognised file by file and skipped."""
    stored = stored_run_ids(con)
    known = set(known_files(con))
    for run, path in zip(files.runs, files.event_files[-len(files.runs) :]):
        if run.run_id in stored and file_sha256(path) not in known:
            raise IngestError(
                path,
                None,
                "run_id",
                f"run {run.run_id!r} of a different demo is already stored in "
                "this database; use another --db (or the same --seed/--episodes/--runs/--steps)",
            )


def build_demo(
    db: str | os.PathLike[str] | None,
    plan: DemoPlan | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    progress: Callable[[str, int], None] | None = None,
    build_context: bool = False,
    workers: int | None = 0,
) -> DemoResult:
    """Write the demo event logs (into `out`, or a temporary folder removed afterwards), ingest
    them (one transaction per file; `workers` as in `ingest_files`: 0 parses in this process, as
    the app does, None uses one process per core for large corpora) and load the planted truth."""
    plan = plan or DemoPlan()
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix="memuse-demo-")
        out = tmp
    try:
        t = time.perf_counter()
        files = generate(plan, Path(out), progress=(lambda n: progress("generate", n)) if progress else None)
        res = DemoResult(db_path(db), files)
        res.seconds["generate"] = time.perf_counter() - t
        t = time.perf_counter()
        con = connect(db)
        try:
            bulk_load(con, BULK_CHECKPOINT)
            _refuse_other_demo(con, files)
            for _, r in ingest_files(
                con,
                list(files.event_files),
                workers=workers,
                on_event=(lambda n: progress("ingest", n)) if progress else None,
            ):
                if isinstance(r, Exception):
                    raise r
                res.episodes += r.episodes
                res.events += r.events
            res.seconds["ingest"] = time.perf_counter() - t
            t = time.perf_counter()
            res.truth_rows = load_truth_file(con, files.truth_file)  # type: ignore[arg-type]
            res.seconds["truth"] = time.perf_counter() - t
        finally:
            con.close()
        if build_context:
            t = time.perf_counter()
            build_store(db)
            res.seconds["build"] = time.perf_counter() - t
        return res
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
