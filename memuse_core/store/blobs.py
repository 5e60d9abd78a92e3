"""Content-addressed text in the store (DESIGN.md "Store"): the `blobs` table, keyed by a 64-bit
hash of the text, and the JSON *shell* of a message, whose string content is replaced by a
reference to its blob (`{"$b": <hash>}`), so a tool output that also reaches the next request as a
`tool` message is stored once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..events import Message

if TYPE_CHECKING:
    import duckdb

BLOB_REF = "$b"


def blob_hash(text: str) -> int:
    """64-bit signed content hash of a text (blake2b); the key of `blobs`."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


_SHELL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
_js = json.encoder.encode_basestring  # type: ignore[attr-defined]
"""A JSON string literal exactly as `_SHELL_JSON` writes it (ensure_ascii=False)."""
"""Same output as json.dumps(..., sort_keys=True, ensure_ascii=False), without building an encoder per call."""


def message_shell(msg: Message, hasher: Callable[[str], int] = blob_hash) -> tuple[str, str | None]:
    """(shell JSON, content text or None) of a message; the shell references the content blob.

    `hasher` must return `blob_hash` (the writer passes its memoised, blob-recording `text`)."""
    content = msg.content
    if isinstance(content, str) and not msg.__pydantic_extra__:
        return _shell_of(msg, hasher(content)), content
    d = msg.model_dump(exclude_none=True)
    content = d.get("content")
    if isinstance(content, str):
        d["content"] = {BLOB_REF: hasher(content)}
        return _SHELL_JSON(d), content
    return _SHELL_JSON(d), None


def _shell_of(msg: Message, content_hash: int) -> str:
    """The shell JSON of a message with string content and no extra fields, written directly:
    the same text as `_SHELL_JSON(msg.model_dump(exclude_none=True))` with the content replaced by
    its blob reference (keys sorted, default separators), without building dicts per message."""
    head = f'{{"content": {{"{BLOB_REF}": {content_hash}}}'
    if msg.name is None and msg.tool_call_id is None and msg.tool_calls is None:
        return f'{head}, "role": {_js(msg.role)}}}'
    parts = [head]
    if msg.name is not None:
        parts.append(f'"name": {_js(msg.name)}')
    parts.append(f'"role": {_js(msg.role)}')
    if msg.tool_call_id is not None:
        parts.append(f'"tool_call_id": {_js(msg.tool_call_id)}')
    if msg.tool_calls is not None:
        calls = ", ".join(
            f'{{"arguments": {_js(tc.arguments)}, "name": {_js(tc.name)}}}'
            if tc.id is None
            else f'{{"arguments": {_js(tc.arguments)}, "id": {_js(tc.id)}, "name": {_js(tc.name)}}}'
            for tc in msg.tool_calls
        )
        parts.append(f'"tool_calls": [{calls}]')
    return ", ".join(parts) + "}"


def iter_blob_texts(con: duckdb.DuckDBPyConnection, hashes: Iterable[int]) -> dict[int, str]:
    """Fetch blob texts by hash in one query."""
    hs = sorted({h for h in hashes if h is not None})
    if not hs:
        return {}
    rows = con.execute(
        "SELECT hash, text FROM blobs WHERE hash IN (SELECT unnest(?::BIGINT[]))", [hs]
    ).fetchall()
    return dict(rows)
