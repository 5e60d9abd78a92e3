"""The native MemUse event log: JSON Lines (optionally gzip), one event per line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..events import EVENT_ADAPTER, EVENT_SCHEMA_VERSION, Event, MemoryDelivery
from ..events.fast import FAST_CALL, FAST_DELIVERY, FAST_ERRORS, FAST_TOOL_RESULT
from ..events.fast import decode as fast_decode
from ..vocab import MAX_EVENT_DEPTH, MAX_LINE_BYTES
from .base import IngestError, open_binary, register, validation_reason
from .limits import depth_reason, line_depth, nonfinite_line, nonfinite_reason, size_text


class NativeImporter:
    """Reads `.jsonl` / `.jsonl.gz` event logs line by line (streamed, never loaded whole)."""

    name = "memuse-events"

    def sniff(self, path: Path, head: bytes) -> bool:
        first = head.lstrip().split(b"\n", 1)[0]
        if not first.startswith(b"{"):
            return False
        try:
            obj = json.loads(first)
        except (json.JSONDecodeError, RecursionError):
            # A truncated first line of a .jsonl file is still our format (reported per line) when
            # it opens like an event; other JSON Lines formats (OpenHands outputs) do not.
            return (
                path.name.endswith((".jsonl", ".jsonl.gz"))
                and re.match(rb'\{\s*"(?:type|v)"\s*:', first) is not None
            )
        return (
            isinstance(obj, dict)
            and isinstance(obj.get("type"), str)
            and ("v" in obj or obj.get("type") in ("run", "episode_start", "model_call", "memory_change"))
        )

    def events(self, path: Path) -> Iterator[tuple[int | None, Event]]:
        """The file's events as pydantic models."""
        return self._events(path, fast=False)

    def store_events(self, path: Path) -> Iterator[tuple[int | None, Event]]:
        """The file's events as the store reads them: the three hot event types decoded by
        `events.fast` (structs that read like the models), every line it does not take validated
        by pydantic as in `events` (so the same events and the same errors; only the writer and
        the in-file checks see the structs)."""
        return self._events(path, fast=True)

    def _events(self, path: Path, *, fast: bool) -> Iterator[tuple[int | None, Event]]:
        # Lines are read as bytes and validated as bytes (no decode to str first: ~20% faster);
        # line numbers and blank-line skipping match reading the file as text with newline="".
        # The adapter's core validator directly (what TypeAdapter.validate_json calls with defaults).
        validate = getattr(EVENT_ADAPTER, "validator", EVENT_ADAPTER).validate_json
        restated = _RestatedDeliveries(fast_decode, FAST_DELIVERY) if fast else _RestatedDeliveries(validate)
        n = 0
        with open_binary(path) as f:
            readline = f.readline
            # at most MAX_LINE_BYTES per read: a file with no newline is never held whole
            while chunk := readline(MAX_LINE_BYTES + 1):
                if len(chunk) > MAX_LINE_BYTES:
                    raise IngestError(path, n + 1, None, f"line longer than {size_text(MAX_LINE_BYTES)}")
                for raw in chunk.splitlines(keepends=True) if b"\r" in chunk else (chunk,):
                    n += 1
                    if raw[:1] != b"{" and not raw.decode("utf-8", "replace").strip():
                        continue
                    depth = line_depth(raw)
                    if depth > MAX_EVENT_DEPTH:
                        raise IngestError(path, n, None, depth_reason(depth))
                    try:
                        ev: Event | None = restated.get(raw) if raw.startswith(_DELIVERY_HEAD) else None
                        if ev is None:
                            if fast:
                                try:
                                    ev = fast_decode(raw)
                                except FAST_ERRORS:
                                    ev = None  # pydantic decides (result or error) as without it
                            if ev is None:
                                ev = validate(raw)
                            if type(ev) is restated.cls:
                                restated.remember(raw, ev)
                        assert ev is not None
                    except ValidationError as e:
                        try:
                            raw.decode("utf-8")
                        except UnicodeDecodeError as u:
                            raise IngestError(path, n, None, f"not UTF-8 text ({u.reason})") from None
                        field, reason = validation_reason(e)
                        raise IngestError(path, n, field, reason) from None
                    # A line the fast decoder took is strict JSON (msgspec refuses NaN and
                    # Infinity tokens; a restated delivery's tail was decoded the same way once),
                    # so only lines pydantic read can hold such a token outside a string.
                    bad = None if type(ev) in _FAST_TYPES else nonfinite_line(raw)
                    if bad is not None:  # in a free-form field (typed numbers refuse it above)
                        raise IngestError(path, n, bad[0] or None, nonfinite_reason(bad[1]))
                    if ev.v > EVENT_SCHEMA_VERSION:
                        raise IngestError(
                            path,
                            n,
                            "v",
                            f"event schema version {ev.v} is newer than this MemUse ({EVENT_SCHEMA_VERSION})",
                        )
                    yield n, ev


_DELIVERY_HEAD = b'{"type":"memory_delivery"'
_FAST_TYPES = frozenset((FAST_CALL, FAST_DELIVERY, FAST_TOOL_RESULT))
_ENTRIES_AT = b',"entries":['


class _RestatedDeliveries:
    """Validate a restated delivery's entries and placements once per file.

    A host block restated on every call gives delivery lines that differ only in their ids; the
    entries and placements (most of the bytes) repeat word for word. A line written in the compact
    form (`{"type":"memory_delivery",...,"entries":[...],"placements":[...]}`, as `dump_event` and
    the recorder write it) is split before `"entries"`: the short head is validated on every line,
    the tail only the first time its exact bytes are seen. The result equals validating the whole
    line: the tail's top-level members (entries, placements, and whatever follows them) are taken
    from the cached event, the head's from its own validation, and a head that does not validate on
    its own (the split point was not at the top level, a required field sits in the tail, or a
    field is bad) falls back to validating the whole line, so results and errors are unchanged.
    Entry and placement objects are shared between the events (read-only downstream)."""

    MAX_BYTES = 64 << 20

    def __init__(self, validate: Any, cls: Any = MemoryDelivery) -> None:
        """`validate` decodes a line into `cls` (the model, or its `events.fast` struct)."""
        self.validate = validate
        self.cls = cls
        self.errors = (ValidationError,) if cls is MemoryDelivery else FAST_ERRORS
        self.tails: dict[bytes, tuple[Any, tuple[str, ...]]] = {}
        self.size = 0

    def get(self, raw: bytes) -> Any:
        i = raw.find(_ENTRIES_AT)
        if i < 0:
            return None
        hit = self.tails.get(raw[i:].rstrip())
        if hit is None:
            return None
        try:
            head = self.validate(raw[:i] + b"}")
        except self.errors:
            return None  # validate the whole line: same error (or result) as without the cache
        if type(head) is not self.cls:
            return None
        ev, keys = hit
        if self.cls is not MemoryDelivery:  # a struct: no pydantic bookkeeping
            for k in keys:
                setattr(head, k, getattr(ev, k))
            return head  # type: ignore[no-any-return]
        # the tail's members come last, so their values win over any repeated in the head; `head`
        # is a fresh object of ours, so its fields are set in place (what model_copy would do)
        head.__dict__.update({k: ev.__dict__[k] for k in keys})
        head.__pydantic_fields_set__.update(keys)
        return head

    def remember(self, raw: bytes, ev: Any) -> None:
        i = raw.find(_ENTRIES_AT)
        if i < 0 or not ev.entries:
            return
        tail = raw[i:].rstrip()
        if tail in self.tails:
            return
        try:
            keys = json.loads(b"{" + tail[1:])
        except json.JSONDecodeError:
            return
        if not isinstance(keys, dict) or not set(keys) <= set(MemoryDelivery.model_fields):
            return
        if self.size + len(tail) > self.MAX_BYTES:
            self.tails.clear()
            self.size = 0
        self.tails[tail] = (ev, tuple(keys))
        self.size += len(tail)


NATIVE = register(NativeImporter())
