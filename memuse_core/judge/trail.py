"""The recorded trajectory as the rules judge reads it (MemUse A.2.1 step records): each step's
agent text, executed commands and results, split into what the step changed, restored and read,
and whether its result passed or failed.

Pure functions over the text of `steps/S<t>.md` files (`judge.evidence` renders them); the rules
judge reads those files through the evidence tools, so everything used here is read and covered.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from .lexicon import deferred, sentences, words

Outcome = Literal["pass", "fail", "mixed"]

_SECTIONS = re.compile(r"^## (Reasoning|Response|Tool calls|Results)\s*$", re.M)
_CALL = re.compile(r"^- ([\w.:-]+): (.*)$", re.M)
_EXIT = re.compile(r"^### Result \d+ \((?:[^)]*?, )?exit code (-?\d+)\)", re.M)
MEMORY_REF = re.compile(r"⟦memory delivery [^⟧]*⟧")
_FAIL_LINE = re.compile(
    r"\b\d+ (?:failed|errors?)\b|\bFAILED\b|^E {2,}|Traceback \(most recent|^\w*(?:Error|Exception)\b|"
    r"\*\*\* \[|No rule to make target|command not found|No such file or directory|\bRefused\b|"
    r"\brefused\b|^error\b|\berror:",
    re.M,
)
_PASS_LINE = re.compile(
    r"\b\d+ passed\b|\bPASSED\b|^OK\b|\ball checks passed|build succeeded|\bsucceeded\b|\bconnected\b",
    re.I,
)
_ERROR_NAME = re.compile(r"\b([A-Z][A-Za-z]*(?:Error|Exception|Warning)|FAILED|Error \d+)\b")
NOT_FOUND = re.compile(
    r"No rule to make target [`'\"]?([\w./-]+)|([\w./-]+): command not found|command not found: ([\w./-]+)|"
    r"No such file or directory: [`'\"]?([\w./-]+)|[`'\"]([\w./-]+)[`'\"]? does not exist"
)
_TEST_CMD = re.compile(
    r"^(?:py\.?test|pytest|tox|nox|python\d?(?:\.\d+)? -m (?:pytest|unittest|tox)|nosetests|"
    r"\S*runtests(?:\.py)?|npm (?:run )?test|yarn test|go test|cargo test|make (?:test|check|lint)|"
    r"ctest|phpunit|rspec)\b"
)
_SEGMENT = re.compile(r"&&|\|\||[;|\n]|\bdo\b|\bthen\b")
_ENV = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+")
_PATHWORD = re.compile(r"(?<![\w./-])(?!-)[\w.~-]*[\w-](?:/[\w.-]*)+/?|(?<![\w./-])[\w-]+\.[A-Za-z]{1,5}\b")
_REDIRECT = re.compile(r"(?<![0-9&>])>>?\s*(?![&>])([\w./~-]+)")
_SED_I = re.compile(
    r"\b(?:sed|perl)\s+-(?:i|pi)\S*\s+(?:-e\s+)?('[^']*'|\"(?:[^\"\\]|\\.)*\"|\S+)\s+([^;&|\n]+)"
)
_MODIFY = re.compile(r"\b(?:rm|tee|touch|truncate|mv|cp)\s+((?:-\S+\s+)*)([^;&|\n<>]+)")
_REVERT = re.compile(
    r"\bgit\s+(?:checkout(?:\s+HEAD)?\s+--\s+|checkout\s+(?!-b)|restore\s+(?:--\S+\s+)*)([^;&|\n]+)|"
    r"\bgit\s+stash(?:\s+push)?((?:\s+(?:-u|--include-untracked|-m\s+'[^']*'|-m\s+\"[^\"]*\"|--\S+))*)"
    r"((?:\s+[^\s;&|-][^\s;&|]*)*)|\bgit\s+reset\s+--hard|\bgit\s+clean\b"
)
_READ = re.compile(r"\b(?:cat|head|tail|less|more|nl|grep|rg|awk|wc|diff|ls|sed\s+-n)\b([^;&|\n]*)")
_EDIT_TOOL = re.compile(r"(?:str_replace|write|edit|create|apply_patch|insert)", re.I)
_RETRIEVE_CMD = re.compile(r"\b(?:memory[ _]\w+|exp_\w+|mem0|recall)\b", re.I)


@dataclass(frozen=True)
class StepView:
    """One step as text parts and as what its commands did."""

    t: int
    said: str
    """Reasoning and response."""
    commands: tuple[str, ...]
    """Executed commands (the string arguments of each tool call)."""
    saw: str
    """Results (memory text referenced, not repeated)."""
    exit_codes: tuple[int, ...] = ()
    outcome: Outcome | None = None
    errors: frozenset[str] = frozenset()
    edits: tuple[str, ...] = ()
    """Paths the commands change (sed -i, redirections, rm/mv/cp/tee, edit tools)."""
    reverts: tuple[str, ...] = ()
    """Paths the commands restore (git checkout/restore/stash); "*" for the whole tree."""
    reads: tuple[str, ...] = ()
    """Paths the commands only read."""
    retrieves: bool = False
    """A memory retrieval: its result carries a memory delivery."""
    missing: tuple[str, ...] = ()
    """Names the results report as not existing (no make target, command not found...)."""
    test: bool = False
    """Runs a test runner or a lint/check target."""
    sentences: tuple[str, ...] = field(default=())
    change_words: frozenset[str] = frozenset()
    """For a step that changes files: the words (5+ letters) of its commands and of the sentences
    that do not put anything off (what the change is described as doing)."""

    @property
    def saw_low(self) -> str:
        return lower(self.saw)

    @property
    def did(self) -> str:
        return "\n".join(self.commands)

    @property
    def changes(self) -> bool:
        return bool(self.edits or self.reverts)


@lru_cache(maxsize=16384)
def lower(text: str) -> str:
    """`text.lower()`, kept per distinct text (results and tasks are lowercased for every span)."""
    return text.lower()


@lru_cache(maxsize=16384)
def parse_step(t: int, text: str) -> StepView:
    """A step record split into text, commands and results, with what its commands did.

    The parts of a record recur across the records of a demo far more than whole records do (its
    20,846 distinct records hold 8,688 distinct command lists, 14,357 distinct results and 516
    distinct texts of the agent), so what is read from each part is kept per distinct part
    (`_calls`, `_results`, `_command_facts`, `_change_words`): the same functions of the same
    text, each computed once."""
    sec: dict[str, str] = {}
    heads = _line_matches(_SECTIONS, text, "## ")
    for k, m in enumerate(heads):
        name, end = m.group(1), heads[k + 1].start() if k + 1 < len(heads) else len(text)
        sec[name] = sec.get(name, "") + text[m.end() : end]
    said = (sec.get("Reasoning", "") + "\n" + sec.get("Response", "")).strip()
    commands, tool_edits = _calls(sec.get("Tool calls", ""))
    codes, body, mem_ref, missing = _results(sec.get("Results", ""))
    did = "\n".join(commands)
    cmd_edits, reverts, cmd_reads, cmd_retrieves, test = _command_facts(did)
    edits = _dedupe([*tool_edits, *cmd_edits]) if tool_edits else cmd_edits
    reads = tuple(p for p in cmd_reads if p not in edits)
    outcome, errors = _outcome(body, codes) if commands else (None, frozenset())
    sents = sentences(said)
    changes = bool(edits or reverts)
    return StepView(
        t=t,
        said=said,
        commands=commands,
        saw=body,
        exit_codes=codes,
        outcome=outcome,
        errors=errors,
        edits=tuple(p for p in edits if p not in reverts),
        reverts=reverts,
        reads=reads,
        retrieves=mem_ref or cmd_retrieves,
        missing=missing,
        test=test,
        sentences=sents,
        change_words=_change_words(sents, did) if changes else frozenset(),
    )


@lru_cache(maxsize=16384)
def _calls(section: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The executed commands of a "Tool calls" section (the string arguments of each call) and the
    paths its edit tools name."""
    commands: list[str] = []
    tool_edits: list[str] = []
    for m in _CALL.finditer(section):
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
    return tuple(commands), tuple(tool_edits)


@lru_cache(maxsize=16384)
def _results(saw: str) -> tuple[tuple[int, ...], str, bool, tuple[str, ...]]:
    """A "Results" section: its exit codes, its text without the exit-code headers, whether it
    carries a memory delivery, and the names it reports as not existing."""
    exits = _line_matches(_EXIT, saw, "### Result ")
    codes = tuple(int(m.group(1)) for m in exits)
    body = _cut(saw, exits) if codes else saw  # no exit-code header: nothing to remove
    mem_ref = "⟦memory delivery " in saw and MEMORY_REF.search(saw) is not None
    return codes, body, mem_ref, _missing(body)


@lru_cache(maxsize=16384)
def _command_facts(
    did: str,
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], bool, bool]:
    """What a step's commands (joined by line breaks) do: the paths they change (deduplicated),
    restore and read, whether they retrieve memory, and whether they run tests."""
    return (
        _dedupe(_edit_targets(did)),
        _revert_targets(did),
        tuple(_read_targets(did)),
        _RETRIEVE_CMD.search(did) is not None,
        runs_tests(did),
    )


def _line_matches(rx: re.Pattern[str], text: str, head: str) -> list[re.Match[str]]:
    """`list(rx.finditer(text))` for a MULTILINE pattern that starts with `^` and the literal
    `head`: it can match only where a line starts with `head`, so only those places are tried
    (found with `str.find`, instead of the pattern trying every position of the text)."""
    out: list[re.Match[str]] = []
    q = 0 if text.startswith(head) else -1
    nl = "\n" + head
    if q < 0:
        q = text.find(nl)
        q = q + 1 if q >= 0 else -1
    while q >= 0:
        m = rx.match(text, q)
        if m is not None:
            out.append(m)
        start = max(q + 1, m.end() if m is not None else 0)  # matches do not overlap
        q = text.find(nl, start - 1)
        q = q + 1 if q >= 0 else -1
    return out


def _cut(text: str, spans: list[re.Match[str]]) -> str:
    """`text` without the matched spans (`rx.sub("", text)` for the matches `spans`)."""
    parts, at = [], 0
    for m in spans:
        parts.append(text[at : m.start()])
        at = m.end()
    parts.append(text[at:])
    return "".join(parts)


@lru_cache(maxsize=16384)
def _change_words(sents: tuple[str, ...], did: str) -> frozenset[str]:
    """The words of a changing step's commands and of its sentences that put nothing off."""
    live = " ".join(z for z in sents if not deferred(z))
    return words(live + "\n" + did, 5)


_NOT_FOUND_HINTS = ("No rule to make target", "command not found", "No such file", "does not exist")


def _missing(body: str) -> tuple[str, ...]:
    if not any(h in body for h in _NOT_FOUND_HINTS):
        return ()
    return tuple(next(g for g in m.groups() if g) for m in NOT_FOUND.finditer(body))


def step_view(t: int, text: str) -> StepView:
    """`parse_step` of a step record whose memory references may name a span-specific file (the
    span's own delivery is referenced as target/placements.md): they are made alike first, so the
    spans of an episode share one parse of each step."""
    return parse_step(t, _alike(text))


@lru_cache(maxsize=16384)
def _alike(text: str) -> str:
    """The step record with its memory references made alike (one object per distinct text: every
    span of an episode reads the same record, so the scan, the substitution and the hashing of the
    new text happen once, not once per span)."""
    return MEMORY_REF.sub("⟦memory delivery⟧", text) if "⟦memory delivery" in text else text


@lru_cache(maxsize=65536)
def runs_tests(cmd: str) -> bool:
    """A command runs a test runner (or a test/check/lint target) in one of its segments."""
    if "<<" in cmd:
        cmd = cmd.split("<<", 1)[0]  # a here-document is file content, not commands
    for seg in _SEGMENT.split(cmd):
        seg = _ENV.sub("", seg.strip())
        if seg and _TEST_CMD.match(seg):
            return True
    return False


def _strings(x: object) -> list[str]:
    if isinstance(x, str):
        return [x]
    if isinstance(x, dict):
        return [s for v in x.values() for s in _strings(v)]
    if isinstance(x, list):
        return [s for v in x for s in _strings(v)]
    return []


def _dedupe(xs: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(x for x in xs if x))


def _paths(s: str) -> list[str]:
    return [m.group(0) for m in _PATHWORD.finditer(s) if not m.group(0).startswith(("http", "-"))]


def _args(s: str) -> list[str]:
    """The non-option words of an argument list (file names without a path or extension too)."""
    return [w.strip("'\"") for w in s.split() if not w.startswith("-") and w not in ("&&", "||")]


def _edit_targets(cmd: str) -> list[str]:
    head = cmd.split("<<", 1)[0] if "<<" in cmd else cmd
    out = [m.group(1) for m in _REDIRECT.finditer(head) if not m.group(1).startswith("/dev/")]
    for m in _SED_I.finditer(cmd):
        out += _args(m.group(2))
    for m in _MODIFY.finditer(head):
        out += _args(m.group(2))
    return out


def _revert_targets(cmd: str) -> tuple[str, ...]:
    out: list[str] = []
    for m in _REVERT.finditer(cmd):
        if m.group(1) is not None:
            out += _paths(m.group(1)) or ["*"]
        elif m.group(0).lstrip().startswith(("git stash", "git  stash")) or "stash" in m.group(0):
            out += _paths(m.group(3) or "") or ["*"]
        else:
            out.append("*")
    return _dedupe(out)


def _read_targets(cmd: str) -> list[str]:
    out: list[str] = []
    for m in _READ.finditer(cmd):
        out += _paths(m.group(1))
    return out


_FAIL_HINTS = ("fail", "FAIL", "rror", "Traceback", "E  ", "***", "No rule", "not found", "No such", "efused")
_ERROR_HINTS = ("Error", "Exception", "Warning", "FAILED")
"""Every match of _ERROR_NAME contains one of these."""
_PASS_HINTS = ("passed", "PASSED", "OK", "ucceeded", "onnected", "Passed")


def _hinted_lines(body: str, hints: tuple[str, ...]) -> set[str]:
    """The lines of `body` that contain one of `hints` (found with `str.find`, not line by line)."""
    out: set[tuple[int, int]] = set()
    for h in hints:
        i = body.find(h)
        while i >= 0:
            a = body.rfind("\n", 0, i) + 1
            b = body.find("\n", i)
            b = len(body) if b < 0 else b
            out.add((a, b))
            i = body.find(h, b)
    return {body[a:b] for a, b in out}


@lru_cache(maxsize=16384)
def _outcome(body: str, codes: tuple[int, ...]) -> tuple[Outcome, frozenset[str]]:
    """pass, fail, or mixed (some lines report passes, others failures, and the exit code does not
    say the whole command failed: a loop of runs), with the error names the failure shows."""
    bad_exit = any(c != 0 for c in codes)
    if not any(h in body for h in _FAIL_HINTS):  # most results: no failure marker at all
        return ("fail" if bad_exit else "pass"), frozenset()
    # an error name lies within one line and holds one of _ERROR_HINTS: only those lines are read
    errors = frozenset(
        m.group(1) for ln in _hinted_lines(body, _ERROR_HINTS) for m in _ERROR_NAME.finditer(ln)
    )
    fail_lines = {ln for ln in _hinted_lines(body, _FAIL_HINTS) if _FAIL_LINE.search(ln)}
    # a passing line matters only for a failure the exit code does not confirm (one is enough)
    if (
        fail_lines
        and not bad_exit
        and any(ln not in fail_lines and _PASS_LINE.search(ln) for ln in _hinted_lines(body, _PASS_HINTS))
    ):
        return "mixed", errors
    fail = len(fail_lines)
    if fail or bad_exit:
        return "fail", errors
    return "pass", errors


def covers(changed: str, restored: str) -> bool:
    """A restore of `restored` ("*" = the whole tree, a directory, or the file) covers `changed`."""
    if restored == "*" or restored in (".", "./"):
        return True
    a, b = _norm(changed), _norm(restored)
    return a == b or a.startswith(b.rstrip("/") + "/")


def _norm(p: str) -> str:
    return p[2:] if p.startswith("./") else p


@lru_cache(maxsize=65536)
def command_key(cmd: str) -> str:
    """A command with its whitespace collapsed (re-runs of one command compare equal)."""
    return " ".join(cmd.split())


_TEST_TARGET = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*test[\w.-]*\.py|(?:[\w.-]+/)*tests?/)(?:::[\w\[\]-]+)?")


@lru_cache(maxsize=65536)
def test_targets(cmd: str) -> frozenset[str]:
    """Test files or folders a command runs (`tests/test_x.py::test_y` -> `tests/test_x.py`)."""
    return frozenset(m.group(1) for m in _TEST_TARGET.finditer(cmd))


def same_check(a: str, b: str) -> bool:
    """Two commands run the same check: one contains the other (a re-run, perhaps with extra
    setup around it), or both run the same test file."""
    ka, kb = command_key(a), command_key(b)
    if ka and kb and (ka in kb or kb in ka):
        return True
    ta, tb = test_targets(a), test_targets(b)
    return bool((ta & tb) - {"tests/", "test/"})
