"""The native MemUse event log: JSON Lines (optionally gzip), one event per line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from ..events import EVENT_ADAPTER, EVENT_SCHEMA_VERSION, Event
from .base import IngestError, open_text, register, validation_reason


class NativeImporter:
    """Reads `.jsonl` / `.jsonl.gz` event logs line by line (streamed, never loaded whole)."""

    name = "memuse-events"

    def sniff(self, path: Path, head: bytes) -> bool:
        first = head.lstrip().split(b"\n", 1)[0]
        if not first.startswith(b"{"):
            return False
        try:
            obj = json.loads(first)
        except json.JSONDecodeError:
            # A truncated first line of a .jsonl file is still our format (reported per line) when
            # it opens like an event; other JSON Lines formats (OpenHands outputs) do not.
            return path.name.endswith((".jsonl", ".jsonl.gz")) and re.match(rb'\{\s*"(?:type|v)"\s*:', first) is not None
        return isinstance(obj, dict) and isinstance(obj.get("type"), str) and (
            "v" in obj or obj.get("type") in ("run", "episode_start", "model_call", "memory_change")
        )

    def events(self, path: Path) -> Iterator[tuple[int | None, Event]]:
        with open_text(path) as f:
            for n, raw in enumerate(f, start=1):
                if not raw.strip():
                    continue
                try:
                    ev = EVENT_ADAPTER.validate_json(raw)
                except ValidationError as e:
                    field, reason = validation_reason(e)
                    raise IngestError(path, n, field, reason) from None
                except UnicodeDecodeError as e:
                    raise IngestError(path, n, None, f"not UTF-8 text ({e.reason})") from None
                if ev.v > EVENT_SCHEMA_VERSION:
                    raise IngestError(path, n, "v", f"event schema version {ev.v} is newer than "
                                      f"this MemUse ({EVENT_SCHEMA_VERSION})")
                yield n, ev


NATIVE = register(NativeImporter())
