"""The judge's two read-only tools and the coverage ledger (MemUse 3.4, A.2.1 "Evidence access",
A.3.1 "Coverage certification").

* `search_evidence` returns short excerpts to locate text; excerpts give no coverage.
* `read_evidence` returns a page of one file (path, offset, limit); the ledger records the exact
  character range returned and the round (model call) that returned it. Paged ranges combine.
* A rolled-back round (A.3.2) removes its ranges again: only text still in the judge's context
  counts.
* Paths are resolved inside the package only; anything else (absolute paths, `..`) is an error
  tool result, never a file read.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .contract import READ_TOOL, SEARCH_TOOL, answer_tool_schema
from .package import EvidencePackage, package_name, quoted

DEFAULT_PAGE = 12000
"""Default characters per read page."""
MAX_PAGE = 40000
"""Largest page a single read returns."""


class ToolError(ValueError):
    """A tool call the package refuses (bad path, bad arguments): returned as the tool result."""


@dataclass
class CoverageLedger:
    """Character ranges of package files returned by reads, with the round that returned them."""

    sizes: dict[str, int]
    ranges: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)
    _done: set[str] = field(default_factory=set)

    def add(self, path: str, start: int, end: int, round_no: int) -> None:
        self.ranges.setdefault(path, []).append((start, end, round_no))

    def rollback(self, round_no: int) -> None:
        """Forget everything a rolled-back round returned."""
        self._done.clear()
        for path in list(self.ranges):
            kept = [r for r in self.ranges[path] if r[2] != round_no]
            if kept:
                self.ranges[path] = kept
            else:
                del self.ranges[path]

    def covered(self, path: str) -> int:
        """Characters of `path` covered by the union of retained ranges."""
        got = self.ranges.get(path, [])
        if len(got) == 1:  # one read (most files): no union to form
            return got[0][1] - got[0][0]
        rs = sorted((a, b) for a, b, _ in got)
        total, cur_a, cur_b = 0, None, None
        for a, b in rs:
            if cur_b is None or a > cur_b:
                if cur_b is not None and cur_a is not None:
                    total += cur_b - cur_a
                cur_a, cur_b = a, b
            else:
                cur_b = max(cur_b, b)
        if cur_b is not None and cur_a is not None:
            total += cur_b - cur_a
        return total

    def complete(self, path: str) -> bool:
        """True when every character of the file was returned by retained reads."""
        if path in self._done:
            return True
        n = self.sizes.get(path)
        if n is None or path not in self.ranges:
            return False
        ok = n == 0 or self.covered(path) >= n
        if ok:
            self._done.add(path)
        return ok

    def snapshot(self) -> dict[str, list[list[int]]]:
        return {p: [list(r) for r in rs] for p, rs in self.ranges.items()}


def resolve_path(pkg: EvidencePackage, raw: Any) -> str:
    """Normalise a requested path; refuse anything that is not a file of the package."""
    if isinstance(raw, str) and raw in pkg.files:
        return raw
    if not isinstance(raw, str) or not raw.strip():
        raise ToolError("`path` must be a non-empty string naming a package file")
    p = raw.strip().replace("\\", "/")
    if p.startswith("/") or ".." in p.split("/") or "\x00" in p:
        raise ToolError(f"path {raw!r} is outside the evidence package; only package files can be read")
    p = posixpath.normpath(p)
    if p.startswith("../") or p == "..":
        raise ToolError(f"path {raw!r} is outside the evidence package; only package files can be read")
    if p not in pkg.files:
        near = [f for f in pkg.files if f.startswith(p.split("/")[0])][:8]
        hint = f" (files there: {', '.join(near)})" if near else ""
        raise ToolError(f"no file {p!r} in the evidence package{hint}")
    return p


class EvidenceTools:
    """The read/search tools over one package, recording coverage in a ledger."""

    def __init__(self, pkg: EvidencePackage) -> None:
        self.pkg = pkg
        self.ledger = CoverageLedger({p: len(t) for p, t in pkg.files.items()})
        self.reads = 0
        self.searches = 0

    def mark_inline(self, paths: list[str]) -> None:
        """Files shown in full in the first message count as read (round 0, never rolled back)."""
        for p in paths:
            self.ledger.add(p, 0, len(self.pkg.files[p]), 0)

    # -- read ------------------------------------------------------------------------------
    def read(self, path: Any, offset: Any = 0, limit: Any = None, *, round_no: int = 1) -> str:
        p = resolve_path(self.pkg, path)
        text = self.pkg.files[p]
        try:
            off = int(offset or 0)
            lim = DEFAULT_PAGE if limit in (None, "") else int(limit)
        except (TypeError, ValueError):
            raise ToolError("`offset` and `limit` must be integers") from None
        if off < 0 or lim <= 0:
            raise ToolError("`offset` must be >= 0 and `limit` > 0")
        lim = min(lim, MAX_PAGE)
        if off > len(text):
            raise ToolError(f"offset {off} is past the end of {p} ({len(text)} chars)")
        end = min(len(text), off + lim)
        self.ledger.add(p, off, end, round_no)
        self.reads += 1
        done = "complete" if self.ledger.complete(p) else "partly read"
        name = package_name(p)
        head = f"[{name}: chars {off}-{end} of {len(text)}; file {done}]"
        tail = f"\n[more: read_evidence path={name} offset={end}]" if end < len(text) else ""
        refs = self.pkg.refs.get(p)
        if refs and end >= len(text):
            tail += "\n[this step references memory text in: " + ", ".join(map(package_name, refs)) + "]"
        return f"{head}\n{text[off:end]}{tail}"

    def read_whole(self, path: str, *, round_no: int) -> list[int]:
        """Read a package file from its start to its end in `MAX_PAGE` pages: the ledger ranges and
        the read count are exactly those of successive `read(path, offset, MAX_PAGE)` calls from
        offset 0, without rendering each page's text for a caller that holds the package (the
        rules judge). Returns the page offsets."""
        p = resolve_path(self.pkg, path)
        n = len(self.pkg.files[p])
        offsets = list(range(0, n, MAX_PAGE)) or [0]
        for off in offsets:
            self.ledger.add(p, off, min(n, off + MAX_PAGE), round_no)
        self.reads += len(offsets)
        return offsets

    # -- search ----------------------------------------------------------------------------
    def search(self, query: Any, path_prefix: Any = None, max_results: Any = 20) -> str:
        if not isinstance(query, str) or not query.strip():
            raise ToolError("`query` must be a non-empty string")
        try:
            k = max(1, min(50, int(max_results or 20)))
        except (TypeError, ValueError):
            raise ToolError("`max_results` must be an integer") from None
        prefix = path_prefix if isinstance(path_prefix, str) else ""
        pat = re.compile(re.escape(query.strip()), re.I)
        hits = []
        for path, text in self.pkg.files.items():
            if prefix and not path.startswith(prefix):
                continue
            for m in pat.finditer(text):
                a, b = max(0, m.start() - 80), min(len(text), m.end() + 80)
                hits.append(f"- {package_name(path)} @ {m.start()}: {quoted('…' + text[a:b] + '…')}")
                if len(hits) >= k:
                    break
            if len(hits) >= k:
                break
        self.searches += 1
        if not hits:
            return f"no match for {query!r} (search excerpts never count as read)"
        return "search excerpts (they do not count as read):\n" + "\n".join(hits)

    # -- dispatch --------------------------------------------------------------------------
    def call(self, name: str, arguments: str, *, round_no: int) -> str:
        """Run a read/search tool call; errors come back as the tool result text."""
        try:
            args = json.loads(arguments or "{}")
            if not isinstance(args, dict):
                raise ToolError("arguments must be a JSON object")
        except json.JSONDecodeError as e:
            return f"error: arguments are not valid JSON ({e.msg})"
        except ToolError as e:
            return f"error: {e}"
        try:
            if name == READ_TOOL:
                return self.read(
                    args.get("path"), args.get("offset", 0), args.get("limit"), round_no=round_no
                )
            if name == SEARCH_TOOL:
                return self.search(args.get("query"), args.get("path_prefix"), args.get("max_results", 20))
            return f"error: unknown tool {name!r}; use read_evidence, search_evidence or answer"
        except ToolError as e:
            return f"error: {e}"

    # -- coverage helpers ------------------------------------------------------------------
    def file_complete(self, path: str) -> bool:
        return self.ledger.complete(path)

    def step_complete(self, t: int) -> bool:
        """A step counts as read only with its file and every memory file it references (A.3.1)."""
        return all(self.ledger.complete(p) for p in self.pkg.step_files(t))


def tool_schemas() -> list[dict[str, Any]]:
    """OpenAI function schemas of the three judge tools (static: part of the cacheable prefix).

    The list is built once and shared: callers must not mutate it."""
    return _schemas()


@lru_cache(maxsize=1)
def _schemas() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": SEARCH_TOOL,
                "description": "Find text in the evidence package. Returns short excerpts with file and "
                "offset; excerpts never count as read.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "Text to find (case-insensitive)."},
                        "path_prefix": {
                            "type": "string",
                            "description": "Only files under this prefix, e.g. steps/.",
                        },
                        "max_results": {
                            "type": "integer",
                            "description": "At most this many excerpts (default 20).",
                        },
                    },
                    "required": ["query"],
                    "additionalProperties": False,
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": READ_TOOL,
                "description": "Read one file of the evidence package, page by page. Only text returned "
                "here counts as read; continue with the offset given at the end of a page.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {
                            "type": "string",
                            "description": "Package path, e.g. steps/S7.md or prior/P2.md.",
                        },
                        "offset": {
                            "type": "integer",
                            "description": "First character to return (default 0).",
                        },
                        "limit": {
                            "type": "integer",
                            "description": f"Characters to return (default {DEFAULT_PAGE}, max {MAX_PAGE}).",
                        },
                    },
                    "required": ["path"],
                    "additionalProperties": False,
                },
            },
        },
        answer_tool_schema(),
    ]
