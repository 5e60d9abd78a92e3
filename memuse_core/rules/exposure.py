"""Exposure matching (MemUse A.1.2): what part of an entry's recorded value the agent received.

An entry's value is matched against each placement separately (never across slots). Full
matching runs three stages in order:

1. verbatim containment;
2. lossless decoding: JSON string literals (up to four nested levels), runs of consecutive
   numbered lines in tool results (`cat -n`, `nl`), and one character-entity decoding per XML
   text node; each decoded string, line run or node is searched on its own;
3. restricted normalization (whitespace collapse, Markdown-escape removal), only for values with
   no quotes, backslashes, tabs or line breaks.

If no placement contains the whole value, the longest prefix found in the original or decoded
texts (never the normalized ones) gives a *clipped* exposure when it has at least eight
characters. Everything else is *unknown*, including a missing value or missing placement text.
The matched value or prefix is the exposed text ε.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..vocab import MAX_JSON_LEVELS, MIN_CLIPPED_PREFIX, Exposure

_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_NUMBERED = re.compile(r"^\s*(\d+)(?:\t|: |\s\|\s?|\s{2,})(.*)$")
_TAG = re.compile(r"<[^<>]*>")
_WS = re.compile(r"\s+")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~<])")
_NORMALIZABLE_BAD = ('"', "'", "\\", "\t", "\n", "\r")


@dataclass(frozen=True)
class PlacementText:
    """The text of one placement as the matcher sees it."""

    pos: int
    """Placement position in its delivery."""
    text: str | None
    """Placement text (None when redacted)."""
    tool_result: bool = False
    """True when the placement sits in a tool result (numbered-line views are decoded there)."""


@dataclass(frozen=True)
class ExposureMatch:
    """Result of matching one entry (A.1.2)."""

    exposure: Exposure
    """`full`, `clipped` or `unknown`."""
    exposed_text: str | None = None
    """ε: the whole value (full), the matched prefix (clipped), or None (unknown)."""
    placement_pos: int | None = None
    """Placement whose text gave the match."""
    stage: str | None = None
    """`verbatim`, `json`, `numbered`, `xml`, `normalized` or `prefix`."""


UNKNOWN = ExposureMatch("unknown")


def json_decoded(text: str, levels: int = MAX_JSON_LEVELS) -> Iterator[str]:
    """Decoded JSON string literals of `text`, up to `levels` nested levels (A.1.2).

    Only literals with an escape are yielded: without one, decoding changes nothing and the
    verbatim stage already searched that text.
    """
    frontier = [text]
    for _ in range(levels):
        nxt: list[str] = []
        for t in frontier:
            if "\\" not in t:
                continue
            for m in _JSON_STRING.finditer(t):
                lit = m.group(0)
                if "\\" not in lit:
                    continue
                try:
                    s = json.loads(lit)
                except ValueError:
                    continue
                if isinstance(s, str):
                    yield s
                    nxt.append(s)
        if not nxt:
            return
        frontier = nxt


def numbered_runs(text: str) -> Iterator[str]:
    """Runs of consecutively numbered lines with their numbers removed (`cat -n`, `nl`) (A.1.2).

    Blank unnumbered lines inside a run (as `nl` prints them) are kept as empty lines when the
    numbering continues after them. Runs of a single line are yielded too.
    """
    if not any(ch.isdigit() for ch in text[:64]) and "\n" not in text:
        return
    run: list[str] = []
    blanks: list[str] = []
    last: int | None = None
    for line in text.split("\n"):
        m = _NUMBERED.match(line)
        if m:
            n = int(m.group(1))
            if last is not None and n in (last + 1, last + 1 + len(blanks)):
                run.extend(blanks)
                run.append(m.group(2))
            else:
                if run:
                    yield "\n".join(run)
                run = [m.group(2)]
            blanks = []
            last = n
        elif not line.strip() and run:
            blanks.append("")
        else:
            if run:
                yield "\n".join(run)
            run, blanks, last = [], [], None
    if run:
        yield "\n".join(run)


def xml_text_nodes(text: str) -> Iterator[str]:
    """Text nodes with one character-entity decoding each (A.1.2); only nodes with an entity."""
    if "&" not in text:
        return
    for node in _TAG.split(text):
        if "&" in node:
            dec = html.unescape(node)
            if dec != node:
                yield dec


def decoded_texts(text: str, *, tool_result: bool) -> Iterator[tuple[str, str]]:
    """(stage, text) of every lossless decoding of a placement text, each searched separately."""
    for s in json_decoded(text):
        yield "json", s
    if tool_result:
        for s in numbered_runs(text):
            yield "numbered", s
    for s in xml_text_nodes(text):
        yield "xml", s


def normalizable(value: str) -> bool:
    """Whether restricted normalization may be used for this value (A.1.2)."""
    return not any(c in value for c in _NORMALIZABLE_BAD)


def normalize(text: str) -> str:
    """Collapse whitespace and remove Markdown escapes (A.1.2 restricted normalization)."""
    return _WS.sub(" ", _MD_ESCAPE.sub(r"\1", text)).strip()


def longest_prefix(value: str, text: str) -> int:
    """Length of the longest prefix of `value` that occurs in `text` (binary search: occurrence
    of a prefix implies occurrence of every shorter one)."""
    lo, hi = 0, min(len(value), len(text))
    if hi == 0 or value[0] not in text:
        return 0
    lo = 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if value[:mid] in text:
            lo = mid
        else:
            hi = mid - 1
    return lo


def match_exposure(value: str | None, placements: list[PlacementText]) -> ExposureMatch:
    """Exposure of one entry against a delivery's placements (A.1.2), each placement separately.

    Full exposure from any placement wins (earliest stage, then earliest placement); otherwise
    the longest clipped prefix over original and decoded texts; otherwise unknown.
    """
    if not value:
        return UNKNOWN
    texts = [p for p in placements if p.text]
    if not texts:
        return UNKNOWN
    # Stage 1: verbatim.
    for p in texts:
        if value in p.text:  # type: ignore[operator]
            return ExposureMatch("full", value, p.pos, "verbatim")
    # Stage 2: lossless decoding.
    decoded: list[tuple[int, str, str]] = []
    for p in texts:
        for stage, d in decoded_texts(p.text, tool_result=p.tool_result):  # type: ignore[arg-type]
            if value in d:
                return ExposureMatch("full", value, p.pos, stage)
            decoded.append((p.pos, stage, d))
    # Stage 3: restricted normalization (original and decoded texts).
    if normalizable(value):
        nv = normalize(value)
        if nv:
            for p in texts:
                if nv in normalize(p.text):  # type: ignore[arg-type]
                    return ExposureMatch("full", value, p.pos, "normalized")
            for pos, _stage, d in decoded:
                if nv in normalize(d):
                    return ExposureMatch("full", value, pos, "normalized")
    # Prefix matching: original and decoded texts only.
    best, best_pos = 0, None
    for p in texts:
        n = longest_prefix(value, p.text)  # type: ignore[arg-type]
        if n > best:
            best, best_pos = n, p.pos
    for pos, _stage, d in decoded:
        n = longest_prefix(value, d)
        if n > best:
            best, best_pos = n, pos
    if best >= MIN_CLIPPED_PREFIX:
        return ExposureMatch("clipped", value[:best], best_pos, "prefix")
    return UNKNOWN


def contains_exposed(text: str | None, exposed: str | None, *, tool_result: bool = False) -> bool:
    """Whether `exposed` matches in full within `text` (verbatim or decoded), as used by the
    visibility and credit-window rules (A.1.4, A.1.5)."""
    if not text or not exposed:
        return False
    return match_exposure(exposed, [PlacementText(0, text, tool_result)]).exposure == "full"
