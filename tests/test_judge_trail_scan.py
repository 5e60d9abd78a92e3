"""The step parser's shortcuts find what its patterns find (MemUse A.2.1 step records as the rules
judge reads them): section headings and result headers are looked for only where a line starts
with their literal head, and error names only on lines that hold an error word; both must give the
pattern's own matches, so a step's text, commands, results, exit codes and error names are unchanged."""

from __future__ import annotations

import random

from memuse_core.judge import trail
from memuse_core.judge.trail import (
    _ERROR_HINTS,
    _ERROR_NAME,
    _EXIT,
    _SECTIONS,
    _cut,
    _hinted_lines,
    _line_matches,
)

TRICKY = [
    "",
    "## Results",
    "## Results\n\n\n## Results  \nx",
    "text ## Results\n## Reasoning\nok",  # a heading inside a line is no heading
    "### Result 1 (bash, exit code 0)\nfine\n### Result 2 (exit code -1)",
    "### Result 1 (bash,\nmulti, exit code 3)\n### Result 2 (x, exit code 4)",  # a header over two lines
    "x### Result 1 (exit code 2)\n### Result 3 (exit code)\n### Result 9 (a, b, exit code 7)",
    "## Tool calls\n- bash: {}\n## Results\n### Result 1 (bash, exit code 1)\nValueError: x\n",
]


def _check(text: str) -> None:
    assert [m.span() for m in _line_matches(_SECTIONS, text, "## ")] == [
        m.span() for m in _SECTIONS.finditer(text)
    ]
    exits = _line_matches(_EXIT, text, "### Result ")
    assert [m.span() for m in exits] == [m.span() for m in _EXIT.finditer(text)]
    assert _cut(text, exits) == _EXIT.sub("", text)
    names = frozenset(
        m.group(1) for ln in _hinted_lines(text, _ERROR_HINTS) for m in _ERROR_NAME.finditer(ln)
    )
    assert names == frozenset(m.group(1) for m in _ERROR_NAME.finditer(text))


def test_shortcuts_find_the_patterns_matches() -> None:
    for text in TRICKY:
        _check(text)
    rnd = random.Random(7)
    pieces = [
        "## ",
        "Results",
        "Reasoning",
        "Tool calls",
        "\n",
        " ",
        "x",
        "### Result 1 (",
        "bash, ",
        "exit code ",
        "-2",
        ")",
        "ValueError",
        "Error 2",
        "FAILED",
        "Warning",
        "É",
        "_",
    ]
    for _ in range(3000):
        _check("".join(rnd.choices(pieces, k=rnd.randint(0, 24))))


def test_a_step_record_parses_into_its_parts() -> None:
    s = trail.parse_step.__wrapped__(
        3,
        '# Step S3\n\n## Reasoning\nMaybe retry.\n\n## Tool calls\n- bash: {"command":"pytest -q"}\n\n'
        "## Results\n### Result 1 (bash, exit code 1)\nE   KeyError: 'a'\n1 failed, 2 passed\n",
    )
    assert s.said == "Maybe retry."
    assert s.commands == ("pytest -q",)
    assert s.exit_codes == (1,)
    assert "### Result" not in s.saw and "1 failed" in s.saw
    assert s.outcome == "fail" and s.errors == frozenset({"KeyError"}) and s.test
