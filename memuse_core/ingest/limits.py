"""Limits checked while a file is read, before anything recursive or large touches it.

A pathological file must cost one error line, never a hang, a traceback or gigabytes:

* only regular files are opened (a FIFO argument would block `open` until a writer appears);
* JSON nesting is measured before a recursive parser sees it: an event line by counting brackets
  outside strings (`MAX_EVENT_DEPTH`, the recorder's body limit plus the event envelope), a
  trajectory document by a walk bounded by the same limit after the (iterative-safe) parse;
* NaN and Infinity, which Python's and pydantic's JSON readers accept but JSON does not, are
  refused where they occur (they would break sums and reports later);
* an event line is read at most `MAX_LINE_BYTES` at a time and a trajectory document at most
  `MAX_DOCUMENT_BYTES` after decompression, so a decompression bomb stops at the limit.

Every limit lives in `vocab.py`.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import numpy as np

from ..vocab import MAX_DOCUMENT_BYTES, MAX_EVENT_DEPTH, nests_deeper
from .errors import IngestError

_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a directory",
}


def check_regular(path: Path) -> None:
    """IngestError unless `path` is a regular file (symlinks followed); never opens it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise IngestError(path, None, None, "file does not exist") from None
    except OSError as e:
        raise IngestError(path, None, None, f"cannot read file ({e.strerror or e})") from None
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise IngestError(path, None, None, f"not a regular file ({kind}); only files are imported")


# ---- depth ------------------------------------------------------------------------------------

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_NOT_OPENER = bytes(b for b in range(256) if b not in b"[{")
_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def line_depth(raw: bytes, limit: int = MAX_EVENT_DEPTH) -> int:
    """Nesting depth of the JSON text `raw` (a top-level object is 1), exact when it exceeds
    `limit`; a cheaper bound (<= limit) otherwise. Strings are skipped, so brackets inside text
    do not count; an unterminated string ends the scan (the parser reports that line anyway)."""
    if len(raw.translate(None, _NOT_OPENER)) <= limit:
        # fewer openers than the limit: cannot be deeper (the common case, C speed; one pass that
        # keeps only `[` and `{`, ~30% cheaper than two `bytes.count` passes)
        return 0
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKET)
    if len(brackets) <= limit:
        return 0
    steps = np.frombuffer(brackets.translate(_STEP), dtype=np.int8)
    return int(np.cumsum(steps, dtype=np.int64).max())


def too_deep(obj: Any, limit: int = MAX_EVENT_DEPTH) -> bool:
    """True when a parsed JSON value nests arrays/objects more than `limit` levels (recursion is
    bounded by `limit`; a walk over containers only, so cheap even for a large document)."""
    return nests_deeper(obj, limit)


def depth_reason(depth: int | None = None) -> str:
    deeper = f"nested {depth} levels deep" if depth else "nested too deeply"
    return f"JSON {deeper}; at most {MAX_EVENT_DEPTH} levels are accepted"


# ---- non-finite numbers -----------------------------------------------------------------------

_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


class _NonFinite(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


def nonfinite_line(raw: bytes) -> tuple[str, str] | None:
    """(field path, constant) of the first NaN/Infinity outside strings of one JSON line, or None.
    Only lines that contain such a word at all are parsed here (a substring test first)."""
    if b"NaN" not in raw and b"Infinity" not in raw:
        return None
    try:
        obj = json.loads(raw, parse_constant=lambda c: _Marker(c))
    except (ValueError, RecursionError):
        return None  # not JSON: the validator reports it
    found = _find_marker(obj, "")
    return found


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _find_marker(obj: Any, path: str) -> tuple[str, str] | None:
    if isinstance(obj, _Marker):
        return path, obj.name
    if isinstance(obj, dict):
        for k, v in obj.items():
            hit = _find_marker(v, f"{path}.{k}" if path else str(k))
            if hit:
                return hit
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            hit = _find_marker(v, f"{path}[{i}]")
            if hit:
                return hit
    return None


def nonfinite_reason(constant: str) -> str:
    return f"{constant} is not a number JSON allows (only finite numbers are accepted)"


def parse_document(path: Path, text: str, line: int | None = None) -> Any:
    """`json.loads` of a JSON text (a whole trajectory document, or one line `line` of a JSON Lines
    trajectory) with NaN/Infinity refused at their line and the nesting checked; raises
    IngestError. Syntax errors are left to the caller (json.JSONDecodeError)."""
    try:
        obj = json.loads(text, parse_constant=_refuse_constant)
    except _NonFinite as e:
        if line is None:
            m = next((m for m in _CONSTANT.finditer(text) if m.group(1)), None)
            line = text.count("\n", 0, m.start()) + 1 if m else None
        raise IngestError(path, line, None, nonfinite_reason(str(e))) from None
    except RecursionError:
        raise IngestError(path, line, None, depth_reason()) from None
    if too_deep(obj):
        raise IngestError(path, line, None, depth_reason())
    return obj


def size_text(n: int) -> str:
    """`256 MiB`, or a byte count below one MiB."""
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n:,} bytes"


def read_document(path: Path, f: Any) -> str:
    """The whole text of an open trajectory file, refused past `MAX_DOCUMENT_BYTES` characters."""
    text: str = f.read(MAX_DOCUMENT_BYTES + 1)
    if len(text) > MAX_DOCUMENT_BYTES:
        raise IngestError(
            path,
            None,
            None,
            f"document larger than {size_text(MAX_DOCUMENT_BYTES)} (decompressed); split it or "
            "convert it to an event log",
        )
    return text
