"""Action kinds for the timeline (issue 17): a short, legible name for what a step did, read
robustly from recorded commands of any agent (mini-swe-agent's raw shell, SWE-agent, OpenHands
tool calls), never a fragment of code or quoting."""

from __future__ import annotations

import re
import shlex

OTHER_KIND = "other"
NO_TOOL_KIND = "no tool call"
"""A step whose response called no tool (the recorded action is free text, e.g. a format error)."""

SHELL_TOOLS = frozenset(
    {"bash", "sh", "shell", "zsh", "exec", "execute_bash", "run", "run_command", "terminal", "cmd"}
)
"""Tools whose argument is a shell command: the step is named by the command that runs."""
_WRAPPERS = frozenset({"sudo", "env", "nohup", "time", "timeout", "xargs", "exec", "command", "stdbuf"})
_SHELLS = frozenset({"bash", "sh", "zsh"})
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})
_PREFIXES = frozenset({"cd", "pushd", "set", "source", ".", "export", "ulimit"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_.+-]{0,23}$")


def _tokens(line: str) -> list[str]:
    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        return list(lex)
    except ValueError:  # an unbalanced quote on the first line of a multi-line command
        return line.split()


def command_name(command: str, _depth: int = 0) -> str | None:
    """The program a shell command runs: its first real word.

    Reads the first line only (a heredoc or a multi-line script follows it), skips variable
    assignments, `cd DIR &&` prefixes and wrappers (sudo, env, timeout N, ...), looks inside
    `bash -c "..."`, and drops a path (`/usr/bin/python3` -> `python3`). None when no word
    qualifies (punctuation, quotes, code fragments)."""
    line = command.strip().split("\n", 1)[0]
    toks = _tokens(line)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in _SEPARATORS or _ASSIGNMENT.match(t):
            i += 1
            continue
        if t in _PREFIXES:  # `cd DIR && cmd`, `set -e; cmd`: the command is what follows
            i += 1
            while i < len(toks) and toks[i] not in _SEPARATORS:
                i += 1
            continue
        name = t.rsplit("/", 1)[-1]
        if name in _WRAPPERS:
            i += 1
            while i < len(toks) and (toks[i].startswith("-") or toks[i].replace(".", "").isdigit()):
                i += 1
            continue
        if name in _SHELLS and _depth < 2:
            rest = toks[i + 1 :]
            if "-c" in rest or "-lc" in rest:
                flag = rest.index("-c") if "-c" in rest else rest.index("-lc")
                if flag + 1 < len(rest):
                    inner = command_name(rest[flag + 1].strip("'\""), _depth + 1)
                    if inner:
                        return inner
        return name if _WORD.match(name) else None
    return None


def action_kind(tools: str | None, action: str | None) -> str:
    """A coarse, legible kind for colouring a step: the command a shell tool ran, else the tool's
    name; `NO_TOOL_KIND` for a step that called no tool; `OTHER_KIND` when nothing legible is
    recorded. Never a fragment of code or quoting."""
    tool = (tools or "").split(",")[0].strip()
    text = "" if action is None else str(action)
    if tool and text.startswith(f"{tool}:"):
        text = text[len(tool) + 1 :]
    if not tool:
        return NO_TOOL_KIND if text.strip() else OTHER_KIND
    if tool.lower() in SHELL_TOOLS:
        return command_name(text) or OTHER_KIND
    return tool if _WORD.match(tool) else OTHER_KIND
