"""Step rows of an episode as the writer stores them (MemUse 3.1): the completed agent calls in
order, with a one-line action summary, the tools used, the observations and the last exit code."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..events import ModelCall
from .blobs import blob_hash

_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_FENCED_SHELL = re.compile(r"```(?:bash|sh|shell)?\s*\n(.*?)```", re.S)
_DECODE = msgspec.json.decode


@dataclass
class CallState:
    call_id: str
    role: str
    status: str
    n: int
    """Input messages of the call: the first `n` items of `hashes`, `roles` and `contents`."""
    hashes: list[int]
    roles: list[str]
    contents: list[str | None]
    """Content text of each input message (shared references, not copies). The three lists may be
    shared with earlier and later calls of the episode (a call that extends its base's whole input
    appends to the base's lists), and are only ever appended to, so `[:n]` stays this call's."""
    response_hash: int | None
    action: str
    tools: str
    tool_rows: list[tuple[int | None, int | None, int]] = field(default_factory=list)
    """(output hash, exit code, output chars) per tool result."""


@dataclass
class EpisodeState:
    episode_id: str
    calls: list[CallState] = field(default_factory=list)
    by_id: dict[str, CallState] = field(default_factory=dict)


def common_prefix(a: list[int], b: list[int], a_len: int | None = None) -> int:
    """Length of the common prefix of `a[:a_len]` (all of `a` when None) and `b`."""
    n = min(len(a) if a_len is None else a_len, len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _arguments(text: str) -> Any:
    """A tool call's arguments as `json.loads` reads them, or the text when it is not JSON.

    msgspec first (~6x faster on the short argument objects of a tool call): wherever it returns
    a value, the value equals `json.loads`'s (same numbers, big ints, last of duplicate keys); what
    it refuses and `json.loads` takes (NaN, lone surrogates, floats out of range) or neither takes
    goes to `json.loads`, which decides as before."""
    try:
        return _DECODE(text)
    except (msgspec.DecodeError, RecursionError):
        pass
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def action_summary(ev: ModelCall) -> tuple[str, str]:
    """A one-line summary of what a call's response did, and the tool names it used."""
    r = ev.response
    if r is None:
        return "", ""
    if r.tool_calls:
        acts = []
        for tc in r.tool_calls:
            args = _arguments(tc.arguments) if tc.arguments else {}
            if isinstance(args, dict) and len(args) == 1:
                args = next(iter(args.values()))
            acts.append(f"{tc.name}: {args}" if not isinstance(args, str) else f"{tc.name}: {args}")
        return " | ".join(acts)[:400], ",".join(tc.name for tc in r.tool_calls)
    text = r.content or ""
    m = _FENCED_SHELL.search(text)
    if m:
        return m.group(1).strip()[:400], "bash"
    return text.strip().split("\n")[-1][:400], ""


def step_rows(st: EpisodeState) -> list[tuple[Any, ...]]:
    """Step rows for an episode: completed agent calls in order with their observations (3.1)."""
    agent = [c for c in st.calls if c.role == "agent" and c.status == "ok"]
    rows = []
    for i, cs in enumerate(agent):
        exit_code = None
        obs_chars = 0
        if cs.tool_rows:
            obs = [h for h, _, _ in cs.tool_rows if h is not None]
            codes = [c for _, c, _ in cs.tool_rows if c is not None]
            exit_code = codes[-1] if codes else None
            obs_chars = sum(n for _, _, n in cs.tool_rows)
        else:
            obs = []
            nxt = agent[i + 1] if i + 1 < len(agent) else None
            if nxt is not None:
                j = cs.n
                if j < nxt.n and nxt.roles[j] == "assistant":
                    j += 1
                while j < nxt.n and nxt.roles[j] in ("user", "tool"):
                    text = nxt.contents[j] or ""
                    obs.append(blob_hash(text))
                    obs_chars += len(text)
                    m = _RETURNCODE.search(text)
                    if m:
                        exit_code = int(m.group(1))
                    j += 1
        rows.append((i + 1, cs.call_id, cs.response_hash, cs.action, cs.tools, exit_code, obs, obs_chars))
    return rows
