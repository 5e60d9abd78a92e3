"""What a forwarded body becomes in the log (record/calls.py): the depth limit's boundary.

A body nested up to MAX_BODY_DEPTH levels is recorded as structure; one level more, or a body too
deep for the JSON parser itself, is recorded unparsed with the reason, never dropped.
"""

from __future__ import annotations

import json

from memuse_core.record.calls import MAX_BODY_DEPTH, parse_request
from memuse_core.record.wire import CHAT


def chat_with_meta(levels: int) -> bytes:
    """A chat body whose nesting is `levels` deep: body > messages > message > meta arrays."""
    meta = b"[" * (levels - 3) + b"]" * (levels - 3)
    return b'{"model": "m", "messages": [{"role": "user", "content": "hi", "meta": %s}]}' % meta


def test_depth_at_the_limit_is_recorded_as_structure() -> None:
    req = parse_request(CHAT, chat_with_meta(MAX_BODY_DEPTH))
    assert req.obj is not None and req.request["messages"][0]["content"] == "hi"
    assert "unparsed_reason" not in req.request


def test_one_level_more_is_recorded_unparsed_with_the_reason() -> None:
    body = chat_with_meta(MAX_BODY_DEPTH + 1)
    req = parse_request(CHAT, body)
    assert req.obj is None and req.request["messages"] == []
    assert req.request["unparsed_reason"] == f"request body nested deeper than {MAX_BODY_DEPTH} levels"
    assert req.request["unparsed_body"] == body.decode()[:4000]
    json.dumps(req.request)  # what is written is plain, shallow JSON


def test_too_deep_for_the_parser_and_not_json() -> None:
    deep = parse_request(CHAT, b"[" * 100_000 + b"]" * 100_000)
    assert "too deep for the JSON parser" in deep.request["unparsed_reason"]
    assert len(deep.request["unparsed_body"]) == 4000
    bad = parse_request(CHAT, b"{not json")
    assert bad.request["unparsed_reason"].startswith("request body is not JSON")
    assert parse_request(CHAT, b"").request["messages"] == []
