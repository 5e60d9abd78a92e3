"""Many small files imported sequentially in few transactions (a batch folder: `ingest.batch`).

Every statement DuckDB runs costs a few milliseconds whatever its size, and a file costs about a
dozen (begin, id look-ups, one append per table, commit). For a batch folder of 50 trajectories
whose text parses in 0.03 s, those statements were most of the import. Here the files of a group
(up to `GROUP_FILES` files, `GROUP_BYTES` of input) are each parsed and checked on their own, as
`ingest_path` does, into a writer that keeps its rows; the group's rows are then appended with
one statement per table and committed once. The store ends up exactly as the one-transaction-per-
file loop leaves it: the same file ids (in order), rows in the same order, the same ids.

A file that is not plain (content imported before or earlier in the group, a recording that grew
since its import, a reference only the store can check other than the runs already stored, or
any error) ends the group: the group is written, then that file goes through `ingest_path` as
always, so its result and its refusal message are the ordinary ones. If writing a group fails in
the database, the group is rolled back and its files are imported one by one by `ingest_path`.
Each file still lands whole or not at all; a crash part way loses the uncommitted group, which
the same import run again completes (imported files are skipped).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..crash import point
from ..store import Connection, DatabaseError
from ..store.files import add_file_row, begin_file, commit, imported_from, next_file_id, rollback
from ..store.refs import missing_ids
from ..store.tables import TABLE_COLUMNS, existing_ids
from ..store.writer import EventWriter, append_group
from .base import Importer, IngestError, IngestResult, detect, file_sha256, ingest_path, write_events
from .checks import Pending
from .grown import grown_prefix
from .limits import check_regular

GROUP_FILES = 64
GROUP_BYTES = 32 << 20


class _KeptRows(EventWriter):
    """An EventWriter that keeps its rows for the group's append instead of writing them."""

    def __init__(self, file_id: int, known: set[int], existing: tuple[set[str], set[str]]) -> None:
        super().__init__(None, file_id, known_blobs=known, existing=existing)
        self.kept: dict[str, list[tuple[Any, ...]]] = {t: [] for t in TABLE_COLUMNS}

    def flush(self) -> None:
        self.kept["blobs"].extend(self.blob_rows)
        self.blob_rows = []
        for table, rows in self.rows.items():
            if rows:
                self.kept[table].extend(rows)
                self.rows[table] = []
        self.n_rows = 0


@dataclass
class _Parsed:
    path: Path
    imp: Importer
    sha: str
    size: int
    file_id: int
    events: int
    writer: _KeptRows


class _Group:
    def __init__(
        self, con: Connection, on_event: Callable[[int], None] | None, known_blobs: set[int] | None
    ) -> None:
        self.con, self.on_event = con, on_event
        self.files: list[_Parsed] = []
        self.bytes = 0
        self.committed: set[int] = set() if known_blobs is None else known_blobs
        """Blob hashes stored by this call (as `ingest_files` shares them between files)."""
        self.known: set[int] = set()
        """... and those of the group's files."""
        self.runs_present: set[str] = set()
        self.reset()

    def reset(self) -> None:
        """Start from the store as it is now (after a commit or a file imported on its own)."""
        self.files, self.bytes = [], 0
        self.known = set(self.committed)
        self.eps, self.runs = existing_ids(self.con)
        self.next_id = next_file_id(self.con)

    def full(self) -> bool:
        return len(self.files) >= GROUP_FILES or self.bytes >= GROUP_BYTES

    def parse(self, p: Path) -> bool:
        """Parse and check one file into the group; False when it must be imported on its own."""
        try:
            check_regular(p)
            imp = detect(p)
            sha = file_sha256(p)
            if any(f.sha == sha for f in self.files) or imported_from(self.con, sha) is not None:
                return False
            if not getattr(imp, "derived_ids", False) and grown_prefix(self.con, p) is not None:
                return False
            w = _KeptRows(self.next_id, set(self.known), (self.eps, self.runs))
            n, pending = write_events(w, imp, p, self.on_event)
            if not self._plain(pending):
                return False
        except (IngestError, DatabaseError):
            return False  # `ingest_path` imports it again and reports what it finds
        self.files.append(_Parsed(p, imp, sha, p.stat().st_size, self.next_id, n, w))
        self.bytes += self.files[-1].size
        self.next_id += 1
        self.known = w.known
        self.eps, self.runs = w.written_ids()
        return True

    def _plain(self, pending: Pending) -> bool:
        """Only references to runs stored before the group (what `checks.resolve` would pass)."""
        if pending.searches or pending.versions:
            return False
        want = [r for r in pending.runs if r not in self.runs_present]
        if want and missing_ids(self.con, "runs", want):
            return False
        self.runs_present.update(want)
        return True

    def write(self) -> Iterator[tuple[Path, IngestResult | IngestError]]:
        """Append and commit the group (or, if the database refuses, import its files one by one)."""
        files = self.files
        if not files:
            return
        try:
            first = begin_file(self.con)
        except DatabaseError:
            yield from self._one_by_one(files)
            return
        try:
            if first != files[0].file_id:
                raise _Stale()
            append_group(self.con, [f.writer.kept for f in files])
            for f in files:
                add_file_row(self.con, f.file_id, str(f.path), f.sha, f.size, f.imp.name, f.events)
            point("ingest.write")
            commit(self.con)
            point("ingest.commit")
        except (_Stale, DatabaseError, ValueError):
            rollback(self.con)
            yield from self._one_by_one(files)
            return
        except BaseException:
            rollback(self.con)
            raise
        self.committed |= self.known
        self.reset()
        for f in files:
            if self.on_event is not None:
                self.on_event(f.events % 1000)
            yield (
                f.path,
                IngestResult(str(f.path), f.imp.name, "imported", len(f.writer.episodes_written), f.events),
            )

    def _one_by_one(self, files: list[_Parsed]) -> Iterator[tuple[Path, IngestResult | IngestError]]:
        for f in files:
            yield f.path, _alone(self.con, f.path, self.committed, self.on_event)
        self.reset()


class _Stale(Exception):
    """The store changed since the group was planned."""


def _alone(
    con: Connection, p: Path, known: set[int], on_event: Callable[[int], None] | None
) -> IngestResult | IngestError:
    try:
        return ingest_path(con, p, known_blobs=known, on_event=on_event)
    except IngestError as e:
        return e


def ingest_grouped(
    con: Connection,
    paths: list[Path],
    *,
    known_blobs: set[int] | None = None,
    on_event: Callable[[int], None] | None = None,
) -> Iterator[tuple[Path, IngestResult | IngestError]]:
    """Import `paths` in order and yield (path, result or error), as the sequential
    `ingest_files` loop does, with few transactions (see module docstring)."""
    g = _Group(con, on_event, known_blobs)
    for p in paths:
        if g.parse(p):
            if g.full():
                yield from g.write()
            continue
        yield from g.write()
        yield p, _alone(con, p, g.committed, on_event)
        g.reset()
    yield from g.write()


def grouping_helps(paths: list[Path]) -> bool:
    """Several files, each small (grouping saves per-file statements, not parsing)."""
    return len(paths) > 1 and all(os.path.getsize(p) < GROUP_BYTES for p in paths if p.is_file())
