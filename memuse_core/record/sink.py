"""Append-only JSON Lines event file that stays valid after a crash or `kill -9`.

Every batch of events is encoded first and then handed to the kernel with `os.write` on an
`O_APPEND` descriptor, whole lines only, under a lock; nothing is buffered in the process, so a
killed recorder leaves every completed line on disk. Opening an existing file first cuts off a
trailing partial line (from a crash of some other writer), so appending never glues two events.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any


def _repair_tail(path: Path) -> None:
    """Truncate a partial last line, if the file does not end with a newline."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with open(path, "rb+") as f:
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        # Walk back to the last newline (blocks of 64 KiB).
        pos = size
        while pos > 0:
            start = max(0, pos - 65536)
            f.seek(start)
            block = f.read(pos - start)
            cut = block.rfind(b"\n")
            if cut >= 0:
                f.truncate(start + cut + 1)
                return
            pos = start
        f.truncate(0)


def encode(event: dict[str, Any]) -> bytes:
    """One event as a compact JSON line with its newline."""
    return (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


class EventSink:
    """Thread-safe writer of whole event lines to one file."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _repair_tail(self.path)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()
        self.lines = 0

    def write(self, events: list[dict[str, Any]]) -> None:
        """Append events as whole lines in one write (order preserved)."""
        if not events:
            return
        data = b"".join(encode(e) for e in events)
        with self._lock:
            if self._fd is None:
                raise ValueError(f"{self.path}: event file is closed")
            view = memoryview(data)
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
            self.lines += len(events)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
