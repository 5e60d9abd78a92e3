"""Handing Arrow tables from a parse worker to the writing process through files (`ingest.parallel`).

A worker of the parallel ingest writes each batch of rows (one Arrow table per store table) as
consecutive Arrow IPC streams into one file of a spool folder and sends only the file's name and
the streams' offsets through the queue. The writing process memory-maps the file, reads the tables
without copying them (the arrays point into the mapping), removes the file at once and appends the
tables to the store. Pickling the tables through a pipe instead copied every byte four times
(pickle, pipe write, pipe read in 64 KiB chunks, unpickle) and woke the writer for every chunk.

The spool folder lives in /dev/shm when it is usable and has room (memory, never written back to disk), else
in the system's temporary folder; the writing process removes it when the import ends, however it
ends. A folder left behind by a killed import (its process id is gone) is removed by the next
parallel import. Nothing here touches the store: the files hold rows not yet written, and the
store's all-or-nothing rule per file is kept by the writer's transactions as before.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

_PREFIX = "memuse-ingest-"
_SHM = "/dev/shm"


_SHM_FREE = 1 << 30
"""/dev/shm is used only with at least this much free (containers often mount 64 MB there)."""


def spool_root() -> str:
    """Where spool folders are made: /dev/shm when it is a writable folder with room, else the
    temporary folder."""
    try:
        st = os.statvfs(_SHM)
        if os.access(_SHM, os.W_OK | os.X_OK) and st.f_bavail * st.f_frsize >= _SHM_FREE:
            return _SHM
    except OSError:
        pass
    return tempfile.gettempdir()


def make_spool() -> str:
    """A new, empty spool folder for one import (folders of dead imports are removed first)."""
    root = spool_root()
    _remove_stale(root)
    return tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=root)


def remove_spool(folder: str) -> None:
    """Remove a spool folder and whatever it still holds (rows of files never written)."""
    shutil.rmtree(folder, ignore_errors=True)


def _remove_stale(root: str) -> None:
    try:
        names = [n for n in os.listdir(root) if n.startswith(_PREFIX)]
    except OSError:
        return
    for name in names:
        pid = name[len(_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


@dataclass(frozen=True)
class Spooled:
    """One batch of tables in a spool file: (table name, byte offset, byte length) per stream."""

    path: str
    parts: tuple[tuple[str, int, int], ...]

    def load(self) -> list[tuple[str, pa.Table]]:
        """The batch's tables, read from a memory map of the file (no copy); the file is removed
        (the mapping keeps its pages until the tables are dropped)."""
        try:
            buf = pa.memory_map(self.path).read_buffer()
        finally:
            self.discard()
        return [(t, pa.ipc.open_stream(buf.slice(off, n)).read_all()) for t, off, n in self.parts]

    def discard(self) -> None:
        """Remove the file without reading it (rows of a file that will not be written)."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


@dataclass(frozen=True)
class Held:
    """One batch of tables kept in memory: what a parse thread of the writing process sends
    (`ingest.parallel.ParseThread`) in place of a `Spooled` file, read the same way."""

    tables: list[tuple[str, Any]]

    def load(self) -> list[tuple[str, Any]]:
        return self.tables

    def discard(self) -> None:
        """Nothing to remove: the tables go when the message is dropped."""


def spool(folder: str, name: str, tables: list[tuple[str, Any]]) -> Spooled:
    """Write (table name, Arrow table) pairs as consecutive IPC streams into `folder/name`."""
    path = str(Path(folder) / name)
    parts = []
    with pa.OSFile(path, "wb") as f:
        for table, tbl in tables:
            start = f.tell()
            with pa.ipc.new_stream(f, tbl.schema) as w:
                w.write_table(tbl)
            parts.append((table, start, f.tell() - start))
    return Spooled(path, tuple(parts))
