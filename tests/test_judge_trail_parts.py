"""The step parser keeps what it reads from each part of a record per distinct part (MemUse A.2.1
step records as the rules judge reads them): the commands of a "Tool calls" section, the exit codes,
text and missing names of a "Results" section, what a command list does, a result's outcome and a
changing step's words. A record parses to the same `StepView` as reading every part afresh (the
parser before the per-part caches, kept here as the reference), in any order of records that share
parts, and lowercasing a joined text part by part gives the same text."""

from __future__ import annotations

import json
import random

from memuse_core.judge import trail
from memuse_core.judge.lexicon import sentences
from memuse_core.judge.trail import (
    _CALL,
    _EDIT_TOOL,
    _EXIT,
    _RETRIEVE_CMD,
    _SECTIONS,
    MEMORY_REF,
    StepView,
    _cut,
    _dedupe,
    _edit_targets,
    _line_matches,
    _missing,
    _read_targets,
    _revert_targets,
    _strings,
)


def _reference(t: int, text: str) -> StepView:
    """The parser as it was before the per-part caches: every part read afresh."""
    sec: dict[str, str] = {}
    heads = _line_matches(_SECTIONS, text, "## ")
    for k, m in enumerate(heads):
        name, end = m.group(1), heads[k + 1].start() if k + 1 < len(heads) else len(text)
        sec[name] = sec.get(name, "") + text[m.end() : end]
    said = (sec.get("Reasoning", "") + "\n" + sec.get("Response", "")).strip()
    commands: list[str] = []
    tool_edits: list[str] = []
    for m in _CALL.finditer(sec.get("Tool calls", "")):
        name, raw = m.group(1), m.group(2)
        try:
            args = json.loads(raw)
        except ValueError:
            args = raw
        vals = _strings(args)
        commands.append("\n".join(vals) if vals else raw)
        if _EDIT_TOOL.search(name) and isinstance(args, dict):
            p = args.get("path") or args.get("file") or args.get("filename")
            if isinstance(p, str):
                tool_edits.append(p)
    saw = sec.get("Results", "")
    exits = _line_matches(_EXIT, saw, "### Result ")
    codes = tuple(int(m.group(1)) for m in exits)
    body = _cut(saw, exits) if codes else saw
    did = "\n".join(commands)
    edits = _dedupe([*tool_edits, *_edit_targets(did)])
    reverts = _revert_targets(did)
    reads = tuple(p for p in _read_targets(did) if p not in edits)
    outcome, errors = trail._outcome.__wrapped__(body, codes) if commands else (None, frozenset())
    sents = sentences(said)
    changes = bool(edits or reverts)
    return StepView(
        t=t,
        said=said,
        commands=tuple(commands),
        saw=body,
        exit_codes=codes,
        outcome=outcome,
        errors=errors,
        edits=tuple(p for p in edits if p not in reverts),
        reverts=reverts,
        reads=reads,
        retrieves=("⟦memory delivery " in saw and bool(MEMORY_REF.search(saw)))
        or bool(_RETRIEVE_CMD.search(did)),
        missing=_missing(body),
        test=trail.runs_tests.__wrapped__(did),
        sentences=sents,
        change_words=trail._change_words.__wrapped__(sents, did) if changes else frozenset(),
    )


_REASONING = [
    "",
    "Maybe the cache is stale.",
    "I will edit `src/app.py` to retry, not now.",
    "The test fails because of KeyError.",
    "Follow the memory: pin urllib3 later.",
]
_CALLS = [
    '- bash: {"command": "pytest -q tests/test_app.py"}',
    '- bash: {"command": "sed -i \'s/a/b/\' src/app.py && cat src/app.py"}',
    '- str_replace_editor: {"command": "str_replace", "path": "src/app.py", "old_str": "a"}',
    '- write_file: {"file": "notes.txt", "content": "x"}',
    '- bash: {"command": "git checkout -- src/app.py; git stash -u"}',
    '- bash: {"command": "echo hi > out.log; rm -f build/x.o"}',
    "- bash: not json at all",
    '- memory_search: {"query": "retry policy"}',
    '- bash: {"command": "make test"}',
    '- bash: {"command": "grep -n foo src/a.py | head"}',
    '- edit: {"path": "src/app.py", "filename": "ignored.py"}',
    '- bash: {"command": ["ls", "-la", "docs/"]}',
]
_RESULTS = [
    "### Result 1 (bash, exit code 0)\n3 passed in 0.1s\n",
    "### Result 1 (bash, exit code 1)\nE   KeyError: 'a'\n1 failed, 2 passed\nFAILED tests/test_app.py::t\n",
    "### Result 1 (exit code 0)\n1 failed, 4 passed\nok\n",
    "### Result 2 (bash, exit code 2)\nmake: *** No rule to make target `check'.  Stop.\n",
    "bash: frobnicate: command not found\n",
    "### Result 1 (memory_search, exit code 0)\n⟦memory delivery d1 at memory/d1.md⟧\n",
    "Traceback (most recent call last):\nValueError: bad\n",
    "connection refused\nbuild succeeded\n",
    "",
    "### Result 1 (bash,\nmulti, exit code 3)\nerror: cannot open 'x': No such file or directory: src/x.py\n",
]


def _record(rnd: random.Random) -> tuple[int, str]:
    t = rnd.randint(1, 9)
    parts = [f"# Step S{t}", ""]
    if rnd.random() < 0.8:
        parts += ["## Reasoning", rnd.choice(_REASONING), ""]
    if rnd.random() < 0.3:
        parts += ["## Response", rnd.choice(_REASONING), ""]
    if rnd.random() < 0.9:
        parts += ["## Tool calls", *rnd.sample(_CALLS, rnd.randint(0, 3)), ""]
    if rnd.random() < 0.9:
        parts += ["## Results", *rnd.sample(_RESULTS, rnd.randint(0, 2))]
    if rnd.random() < 0.1:
        parts += ["## Results", rnd.choice(_RESULTS)]  # a repeated section is appended
    return t, "\n".join(parts)


def _clear() -> None:
    for f in (trail.parse_step, trail._calls, trail._results, trail._command_facts, trail._outcome):
        f.cache_clear()


def test_records_parse_as_the_reference_parser_reads_them() -> None:
    rnd = random.Random(13)
    recs = [_record(rnd) for _ in range(1500)]  # parts repeat across records
    _clear()
    for t, text in recs:
        assert trail.parse_step(t, text) == _reference(t, text), text
    _clear()
    for t, text in reversed(recs):  # another order: other parts are read first
        assert trail.parse_step(t, text) == _reference(t, text), text


def test_edge_records_parse_as_the_reference_parser_reads_them() -> None:
    edge = [
        "",
        "## Results",
        "## Tool calls\n- bash: {}\n## Results\n### Result 1 (bash, exit code 1)\nValueError: x\n",
        '## Tool calls\n- edit: {"path": "a.py"}\n- bash: {"command": "cp a.py b.py"}\n',  # tool + command edits
        '## Tool calls\n- edit: {"path": ""}\n- bash: {"command": "touch  a.py a.py"}\n',  # empty and repeated
        '## Tool calls\n- bash: {"command": "git checkout -- a.py"}\n- edit: {"path": "a.py"}\n',  # edit + revert
        '## Reasoning\nx\n## Reasoning\ny\n## Tool calls\n- bash: {"command": "pytest"}\n',
        '## Tool calls\n- bash: {"command": "cat <<EOF > f.py\\nprint(1)\\nEOF"}\n## Results\nok\n',
    ]
    _clear()
    for text in edge:
        assert trail.parse_step(2, text) == _reference(2, text), text


def test_lowercasing_part_by_part_equals_lowercasing_the_joined_text() -> None:
    """`SpanFacts.nonmem_low` lowercases its parts one by one and joins them with line breaks."""
    parts = ["ΟΔΟΣ", "Σ", "ΣΑ", "İstanbul", "ΑΣ Σ", "", "ß ẞ", "x Σ.", "-Σ-", "ΌΣΟΣ\u0301"]
    rnd = random.Random(5)
    for _ in range(500):
        ps = rnd.choices(parts, k=rnd.randint(1, 5))
        assert "\n".join(p.lower() for p in ps) == "\n".join(ps).lower(), ps
