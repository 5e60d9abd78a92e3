"""A step's action summary reads a tool call's arguments as `json.loads` does (`store.steps`):
the faster decoder it tries first never changes the result, and text that is not JSON stays text."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from memuse_core.store.steps import _arguments


def _reference(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


CASES = [
    '{"command": "ls -la"}',
    '{"command": "grep -rn \\"def f\\" src/ | head"}',
    '{"a": 1, "a": 2}',
    '{"a": 1, "b": 2, "a": 3}',
    '{"n": 123456789012345678901234567890}',
    '{"n": -9223372036854775809}',
    "[0.1, 1e-320, 5e-324, 1.7976931348623157e308, 1e400, -0.0, -0]",
    '{"x": NaN, "y": -Infinity}',
    '"\\ud800"',
    '{"\\ud83d\\ude00": "\\u00e9\\u2028"}',
    ' \t{"a": true, "b": null}\r\n',
    '{"a": 1,}',
    "not json at all",
    '{"a": "line\nbreak"}',
    "01",
    "[" * 400 + "]" * 400,
]


@pytest.mark.parametrize("text", CASES)
def test_arguments_read_as_json_loads_reads_them(text: str) -> None:
    got, want = _arguments(text), _reference(text)
    assert type(got) is type(want)
    assert repr(got) == repr(want)


def test_the_same_values_not_only_the_same_text() -> None:
    got = _arguments("[1e400, 2]")
    assert math.isinf(got[0]) and type(got[1]) is int
