"""The `--parts` table of `benchmarks/ingest.py`: CPU seconds of the sequential ingest by stage.

.venv/bin/python benchmarks/ingest.py 1000 --keep /tmp/bench --parts
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from ingest import _child, _parse_files


def phase_parts(files: list[str], db: str) -> dict:
    """CPU seconds of the sequential ingest in cumulative stages, each stage a separate pass over
    the files in this process: json.loads; read + validate (`NativeImporter.store_events`: the
    msgspec fast path, pydantic for the lines it does not take, line checks); + in-file checks and id handling; + the writer's rows (discarded);
    + their Arrow batches (the first pyarrow conversion imports pandas); the whole ingest into
    a fresh store (inserts, commits, final checkpoint). Shows where the time goes."""
    from memuse_core.demo.build import BULK_CHECKPOINT
    from memuse_core.ingest.checks import FileChecks
    from memuse_core.ingest.members import prepared_events
    from memuse_core.ingest.native import NATIVE
    from memuse_core.ingest.parallel import ingest_files
    from memuse_core.store import connect
    from memuse_core.store.decode import gc_paused
    from memuse_core.store.tables import rows_to_arrow
    from memuse_core.store.writer import EventWriter

    paths = [Path(f) for f in files]

    class Dropping(EventWriter):
        arrow = False

        def flush(self) -> None:
            for table, rows in [("blobs", self.blob_rows), *self.rows.items()]:
                if rows and self.arrow:
                    rows_to_arrow(table, rows)
            self.blob_rows, self.rows = [], {t: [] for t in self.rows}

    def stage(events: bool, checks: bool, writer: bool, arrow: bool) -> None:
        with gc_paused():
            for p in paths:
                Dropping.arrow = arrow
                w = Dropping(None, 1, existing=(set(), set()))
                see = FileChecks(p, format=NATIVE.name).see
                pairs = prepared_events(NATIVE, p, w) if checks else NATIVE.store_events(p)
                for line, ev in pairs:
                    if checks:
                        see(ev, line)
                    if writer:
                        w.add(ev, line or 0)
                if writer:
                    w.finish()

    def whole() -> None:
        con = connect(db)
        con.execute(f"SET checkpoint_threshold = '{BULK_CHECKPOINT}'")
        for _, r in ingest_files(con, paths, workers=0, min_bytes=1 << 62):
            if isinstance(r, Exception):
                raise r
        con.execute("CHECKPOINT")
        con.close()

    out = {}
    for name, fn in (
        ("json.loads", lambda: _parse_files(files)),
        ("read + validate", lambda: stage(True, False, False, False)),
        ("+ checks, ids", lambda: stage(True, True, False, False)),
        ("+ writer rows", lambda: stage(True, True, True, False)),
        ("+ Arrow batches", lambda: stage(True, True, True, True)),
        ("whole ingest", whole),
    ):
        c = time.process_time()
        fn()
        out[name] = time.process_time() - c
    return out


def parts_main(n: int, steps: int, keep: str | None) -> None:
    """The `--parts` table (see `phase_parts`)."""
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix=f"memuse-bench-{n}-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        corpus = base / "corpus"
        files = sorted(str(p) for p in (corpus / "events").glob("*.jsonl")) if corpus.exists() else []
        if not files:
            files = _child("generate", str(n), str(corpus), str(steps))["files"]
        db = base / "bench-parts.duckdb"
        db.unlink(missing_ok=True)
        load = os.getloadavg()
        r = _child("parts", json.dumps(files), str(db))
        db.unlink(missing_ok=True)
        print(
            f"CPU seconds of the sequential ingest of {n} demo episodes by stage (load average {load[0]:.1f})"
        )
        prev = 0.0
        for name, sec in r.items():
            step = sec if name in ("json.loads", "read + validate", "whole ingest") else sec - prev
            print(
                f"{name:<18} {sec:>7.2f} s  {sec / r['json.loads']:>5.2f}x json.loads  (this stage {step:>6.2f} s)"
            )
            prev = sec
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
