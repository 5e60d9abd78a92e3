"""The native MemUse event log: JSON Lines (optionally gzip), one event per line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
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
                    if not fast:
                        depth = line_depth(raw)
                        if depth > MAX_EVENT_DEPTH:
                            raise IngestError(path, n, None, depth_reason(depth))
                    try:
                        # fast: a restated delivery's depth is its remembered line's (see `_fast_bounded`)
                        ev: Event | None = restated.get(raw) if raw.startswith(_DELIVERY_HEAD) else None
                        if ev is None:
                            if fast:
                                try:
                                    ev = fast_decode(raw)
                                except _FAST_REFUSED:
                                    ev = None  # pydantic decides (result or error) as without it
                                if ev is None or not _fast_bounded(ev):
                                    # the depth check before pydantic (or for free-form values)
                                    depth = line_depth(raw)
                                    if depth > MAX_EVENT_DEPTH:
                                        raise IngestError(path, n, None, depth_reason(depth))
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
_FAST_REFUSED = (*FAST_ERRORS, RecursionError)
"""What the fast decoder raises for a line it does not take (msgspec stops nesting past Python's
recursion limit with RecursionError, before any limit of ours is checked)."""


def _free_form_paths(cls: Any) -> list[tuple[str, ...]]:
    """Attribute paths of a fast struct under which free-form JSON (`Any`) can sit; `""` steps
    into each item of a list. Everything else a struct decodes is typed, so it nests as deep as
    the struct's own fields, far below `MAX_EVENT_DEPTH`."""
    out: list[tuple[str, ...]] = []

    def walk(t: Any, path: tuple[str, ...], seen: tuple[Any, ...]) -> None:
        if isinstance(t, msgspec.inspect.Metadata):
            t = t.type
        if isinstance(t, msgspec.inspect.UnionType):
            for x in t.types:
                walk(x, path, seen)
        elif isinstance(t, msgspec.inspect.StructType):
            if t.cls in seen:  # a recursive struct nests without bound
                out.append(path)
                return
            for f in t.fields:
                walk(f.type, (*path, f.name), (*seen, t.cls))
        elif isinstance(t, msgspec.inspect.ListType):
            walk(t.item_type, (*path, ""), seen)
        elif isinstance(t, msgspec.inspect.DictType):
            if not isinstance(t.value_type, _SCALARS):
                out.append(path)  # values of any other kind: the whole dict counts
        elif isinstance(t, msgspec.inspect.AnyType):
            out.append(path)
        elif not isinstance(t, _SCALARS):
            raise TypeError(f"ingest.native cannot bound the depth of {t!r} in {cls.__name__}")

    walk(msgspec.inspect.type_info(cls), (), ())
    return out


_SCALARS = (
    msgspec.inspect.StrType,
    msgspec.inspect.IntType,
    msgspec.inspect.FloatType,
    msgspec.inspect.BoolType,
    msgspec.inspect.NoneType,
    msgspec.inspect.LiteralType,
)
_FREE_FORM = {cls: _free_form_paths(cls) for cls in _FAST_TYPES}
"""Per fast struct: where free-form values can sit; `_fast_bounded` reads exactly these."""
if _FREE_FORM != {
    FAST_CALL: [("request", "tools", "")],
    FAST_DELIVERY: [("entries", "", "labels")],
    FAST_TOOL_RESULT: [],
}:  # the event models changed: `_fast_bounded` must read the new places (until then, no import)
    raise TypeError(f"ingest.native._fast_bounded does not cover the free-form fields {_FREE_FORM}")


def _fast_bounded(ev: Any) -> bool:
    """True when a fast-decoded event holds no free-form value (`_FREE_FORM`), so its line nests
    no deeper than its struct's typed fields and the depth pre-check could only pass: it is
    skipped (one pass over every line's bytes, the largest single cost of reading a log). A line
    msgspec refuses, or one with a free-form value, is measured as before, so a line too deep is
    refused with the same message. A restated delivery (`_RestatedDeliveries.get`) repeats the
    tail of a line that was accepted, after a head without entries, so it is bounded too."""
    t = type(ev)
    if t is FAST_CALL:
        return not ev.request.tools
    if t is FAST_DELIVERY:
        for e in ev.entries:
            if e.labels:
                return False
    return True


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
        self.errors = (ValidationError,) if cls is MemoryDelivery else _FAST_REFUSED
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
        if type(head) is not self.cls or head.entries:
            return None  # a head with entries of its own: the whole line decides (and is measured)
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
