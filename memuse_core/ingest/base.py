"""Importer plumbing: the importer protocol, format detection, errors, and the per-file transaction.

An importer turns one source file into events, yielding `(line, event)` pairs so that every error
can name the source line. `ingest_path` imports one file in one transaction: a file either lands
whole or not at all (DESIGN.md "Bad input").
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from pydantic import ValidationError

from ..crash import point
from ..events import EVENT_TYPES, Event
from ..store.decode import gc_paused
from ..store.files import begin_file, commit_file, imported_from, rollback
from ..store.writer import DuplicateError, EventWriter
from .checks import FileChecks, Pending, resolve
from .errors import IngestError
from .limits import check_regular

if TYPE_CHECKING:
    from ..store import Connection


def validation_reason(err: ValidationError) -> tuple[str | None, str]:
    """The first problem of a pydantic error as (dotted field path, reason)."""
    first = err.errors()[0]
    loc = [str(x) for x in first.get("loc", ())]
    # Drop the discriminator tag pydantic puts first for tagged unions.
    if loc and loc[0] in EVENT_TYPES:
        loc = loc[1:]
    msg = first.get("msg", "invalid value")
    if first.get("type") == "json_invalid":
        return None, f"invalid JSON ({first.get('ctx', {}).get('error', msg)})"
    if first.get("type") == "union_tag_invalid":
        tag = first.get("input", {}).get("type") if isinstance(first.get("input"), dict) else None
        return "type", f"unknown event type {tag!r}"
    if first.get("type") == "union_tag_not_found":
        return "type", "missing event type"
    return ".".join(loc) or None, msg


class Importer(Protocol):
    """One source format."""

    name: str
    """Format name shown by `memuse info` and stored in `files.format`."""

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when the file looks like this format (`head`: the first 64 KiB, decompressed)."""

    def events(self, path: Path) -> Iterator[tuple[int | None, Event]]:
        """Events of the file with their source line (None when not line-based).

        Raise IngestError for bad input.
        """


_REGISTRY: list[Importer] = []


def register(importer: Importer) -> Importer:
    """Add an importer to format detection (earlier registrations win)."""
    _REGISTRY.append(importer)
    return importer


def importers() -> list[Importer]:
    """The registered importers in detection order (`ingest.formats` registers the built-in ones
    when the package is imported)."""
    return list(_REGISTRY)


def open_text(path: Path) -> io.TextIOBase:
    """Open a text file, transparently decompressing `.gz`."""
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def open_binary(path: Path) -> io.BufferedIOBase:
    """Open a file for reading bytes, transparently decompressing `.gz`."""
    if path.suffix == ".gz":
        return io.BufferedReader(gzip.open(path, "rb"), buffer_size=1 << 20)  # type: ignore[arg-type]
    return cast(io.BufferedIOBase, open(path, "rb", buffering=1 << 20))  # a BufferedReader at runtime


def read_head(path: Path, n: int = 65536) -> bytes:
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as f:
            return f.read(n)
    with open(path, "rb") as f:
        return f.read(n)


def detect(path: Path) -> Importer:
    """The importer for a file, or IngestError naming the file."""
    check_regular(path)
    try:
        head = read_head(path)
    except (OSError, EOFError, zlib.error) as e:
        raise unreadable(path, None, e) from e
    if not head.strip():
        raise IngestError(path, None, None, "file is empty")
    if b"\x00" in head[:4096]:
        raise IngestError(path, None, None, "binary file, not a trajectory or event log")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        # A multi-byte character may be cut at the end of the head; only earlier errors count.
        if e.start < len(head) - 4:
            raise IngestError(path, None, None, f"not UTF-8 text (byte {e.start})") from e
    for imp in importers():
        if imp.sniff(path, head):
            return imp
    raise IngestError(path, 1, None, f"unknown format ({_not_a_recording(head)})")


_KNOWN_OTHERS: tuple[tuple[tuple[bytes, ...], str], ...] = (
    ((b'"resolved_ids"',), "a SWE-bench harness report: set outcomes with `memuse outcomes FILE --run RUN`"),
    ((b'"given_info"', b'"question'), "CLADDER question data, for `memuse trim-eval`, not a recording"),
    ((b'"model_id"', b'"background"'), "CLADDER model meta, for `memuse trim-eval`, not a recording"),
    ((b'"model_patch"', b'"instance_id"'), "agent predictions (preds.json), not a trajectory"),
)
"""Files often found beside recordings, told apart by keys in their first 64 KiB, so that the
refusal says what the file is and where it belongs."""


def _not_a_recording(head: bytes) -> str:
    return _known_other(head) or "not a MemUse event log or a supported trajectory"


def _known_other(head: bytes) -> str | None:
    for keys, what in _KNOWN_OTHERS:
        if all(k in head for k in keys):
            return what
    return None


def known_non_recording(path: Path) -> str | None:
    """What a file is when no importer claims it and it is one of the files often kept beside
    recordings (`_KNOWN_OTHERS`), else None (a recording, or an unknown file `detect` refuses)."""
    try:
        head = read_head(path)
    except (OSError, EOFError, zlib.error):
        return None
    if any(imp.sniff(path, head) for imp in importers()):
        return None
    return _known_other(head)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class IngestResult:
    """What importing one file did."""

    path: str
    format: str
    status: str
    """`imported`, `skipped` (same file already imported) or `failed`."""
    episodes: int = 0
    events: int = 0
    error: str | None = None


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files to import: files as given, folders walked recursively in sorted order. Entries of a
    folder that are not directories are all listed, so a FIFO or socket there is reported (and
    refused) rather than silently left out."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if not q.is_dir() and not q.name.startswith(".")))
        else:
            out.append(p)
    return out


def write_events(
    w: EventWriter, imp: Importer, p: Path, on_event: Callable[[int], None] | None = None
) -> tuple[int, Pending]:
    """Feed every event of a file to a writer (after the file's referential checks) and finish it;
    returns the number of events and the references only the store can check (`checks.resolve`).
    Raises IngestError naming the line for bad input (the caller rolls back).

    The cyclic garbage collector is paused meanwhile (`store.decode.gc_paused`): every event
    allocates dozens of small acyclic objects (models, rows, hashes), and the collections they
    would trigger walk the writer's growing buffers (~15-30% of the import's CPU time). Reference
    counting frees everything as before; collection resumes when the file is done."""
    with gc_paused():
        return _write_events(w, imp, p, on_event)


def _write_events(
    w: EventWriter, imp: Importer, p: Path, on_event: Callable[[int], None] | None
) -> tuple[int, Pending]:
    from .members import prepared_events

    n = 0
    line: int | None = None
    checks = FileChecks(p, format=imp.name)
    see = checks.see
    try:
        for line, ev in prepared_events(imp, p, w):
            see(ev, line)
            try:
                w.add(ev, line if line is not None else n + 1)
            except DuplicateError as e:
                raise IngestError(p, e.line or line, e.field, f"{e} (import each recording once)") from e
            except ValueError as e:
                raise IngestError(p, line, None, str(e)) from e
            n += 1
            if n == 1:
                point("ingest.parse")
            if on_event is not None and n % 1000 == 0:
                on_event(1000)
    except (OSError, EOFError, zlib.error) as e:
        raise unreadable(p, line, e) from None
    if n == 0:
        raise IngestError(p, None, None, "no events in file")
    pending = checks.finish()
    try:
        w.finish()
    except DuplicateError as e:
        raise IngestError(p, e.line or line, e.field, f"{e} (import each recording once)") from e
    return n, pending


def unreadable(p: Path, line: int | None, e: BaseException) -> IngestError:
    """The error for a file that stops reading part way (a corrupt or truncated `.gz`, an I/O
    error); `line` is the last line read whole."""
    after = line + 1 if line is not None else None
    what = str(e).splitlines()[0] if str(e) else type(e).__name__
    if p.suffix == ".gz":
        return IngestError(p, after, None, f"corrupt or truncated gzip data ({what})")
    return IngestError(p, after, None, f"cannot read file ({what})")


def ingest_path(
    con: Connection,
    path: str | os.PathLike[str],
    *,
    importer: Importer | None = None,
    known_blobs: set[int] | None = None,
    on_event: Callable[[int], None] | None = None,
) -> IngestResult:
    """Import one file in one transaction; raises IngestError (store unchanged) on bad input."""
    p = Path(path)
    check_regular(p)
    imp = importer or detect(p)
    sha = file_sha256(p)
    earlier = imported_from(con, sha)
    if earlier is not None:
        return IngestResult(str(p), imp.name, "skipped", error=f"already imported from {earlier}")
    from ..store import DatabaseError  # duckdb's error: not imported by parse workers (`parse_worker`)
    from .grown import continuing, grown_prefix

    grown = None if getattr(imp, "derived_ids", False) else grown_prefix(con, p)
    file_id = begin_file(con)
    line: int | None = None
    try:
        w = EventWriter(con, file_id, known_blobs=set(known_blobs) if known_blobs is not None else None)
        with continuing(p, grown):  # a recording that grew since its import: only its new lines
            n, pending = write_events(w, imp, p, on_event)
        resolve(con, p, pending, file_id)
        point("ingest.write")
        commit_file(con, file_id, str(p), sha, p.stat().st_size, imp.name, n)
        point("ingest.commit")
        if known_blobs is not None:
            known_blobs |= w.known
        if on_event is not None:
            on_event(n % 1000)
        return IngestResult(str(p), imp.name, "imported", len(w.episodes_written), n)
    except IngestError:
        rollback(con)
        raise
    except DatabaseError as e:
        rollback(con)
        raise IngestError(p, line, None, f"database error: {str(e).splitlines()[0]}") from e
    except BaseException:
        rollback(con)
        raise
