"""A recording that grew after it was imported.

The recorder appends to its output file, also after a restart. When a native event log is
imported, then grows, and is imported again, its content digest is new but its first bytes are
exactly the earlier import. Importing it whole would repeat every run and episode of the earlier
part. Instead, only the lines after the earlier part are imported, as the rest of the same file:
a repeated `run` event identical to the stored one is dropped, an episode id the earlier part used
is renamed (`<id>~2`, as within one file), and the file row records the whole grown file, so the
next import of the same content is skipped. An event that continues an episode of the earlier part
is refused (that episode was stored as it ended); import recordings once they are finished.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..events import RunEvent, dump_event
from ..store.batches import file_ids_stored, imports_of_path

if TYPE_CHECKING:
    from ..store import Connection


@dataclass(frozen=True)
class Prefix:
    """The earlier import a grown file starts with."""

    lines: int
    """Lines of the earlier part (events after them are new)."""
    episodes: frozenset[str]
    """Episode ids the earlier part stored."""
    runs: tuple[tuple[str, str], ...]
    """(run id, its run event serialised) of the runs the earlier part stored."""


_PREFIX: dict[str, Prefix] = {}


def _key(path: Path) -> str:
    return str(Path(path).resolve())


def _head_digest(path: Path, size: int) -> tuple[str, int, bytes]:
    h = hashlib.sha256()
    left, newlines, last = size, 0, b""
    with open(path, "rb") as f:
        while left > 0:
            chunk = f.read(min(left, 1 << 20))
            if not chunk:
                break
            h.update(chunk)
            newlines += chunk.count(b"\n")
            left -= len(chunk)
            last = chunk[-1:]
    return h.hexdigest(), newlines, last


def grown_prefix(con: Connection, path: Path) -> Prefix | None:
    """The earlier import this file grew from (same file, its first bytes identical), or None."""
    size = path.stat().st_size
    here = path.resolve()
    for file_id, stored_path, sha, stored_size in reversed(imports_of_path(con, path.name)):
        if not 0 < stored_size < size or Path(stored_path).resolve() != here:
            continue
        digest, lines, last = _head_digest(path, stored_size)
        if digest != sha or last != b"\n":
            continue
        eps, runs = file_ids_stored(con, file_id)
        events = []
        for run_id, config, label, agent, model, meta in runs:
            ev = RunEvent(
                run_id=str(run_id),
                config=str(config),
                label=label,  # type: ignore[arg-type]
                agent=agent,  # type: ignore[arg-type]
                model=model,  # type: ignore[arg-type]
                meta=json.loads(meta) if isinstance(meta, str) else {},
            )
            events.append((ev.run_id, dump_event(ev)))
        return Prefix(lines=lines, episodes=frozenset(eps), runs=tuple(events))
    return None


def prefix_of(path: Path) -> Prefix | None:
    return _PREFIX.get(_key(path)) if _PREFIX else None


@contextmanager
def continuing(path: Path, prefix: Prefix | None) -> Iterator[None]:
    """Within the block, `path` imports as the continuation of `prefix` (when given)."""
    if prefix is None:
        yield
        return
    _PREFIX[_key(path)] = prefix
    try:
        yield
    finally:
        _PREFIX.pop(_key(path), None)
