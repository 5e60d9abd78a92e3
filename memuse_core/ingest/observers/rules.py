"""Observer rules: what a memory wrapper looks like and how its block splits into entries
(MemUse 3.1, A.1.1). See the package docstring for the rules every observer follows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ...events import Entry, Message, Route, text_digest


class ObserverSpec(BaseModel):
    """One observer rule (built in, or a table of a user config file)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$")
    """Short unique name; part of delivery ids and rendered item ids."""
    start: str | None = None
    """Literal text that opens a block (kept in the placement)."""
    start_regex: str | None = None
    """Regex alternative to `start` (multiline mode)."""
    end: str | None = None
    """Literal text that closes a block (kept in the placement); None: the block ends after its
    last entry (at the first blank line not followed by another entry)."""
    end_regex: str | None = None
    """Regex alternative to `end`."""
    regex: str | None = None
    """Instead of markers: a regex (multiline, dot matches newline) whose every match is a block;
    its named group `body`, when present, holds the entries."""
    entries: Literal["lines", "paragraphs", "whole", "xml_children", "regex", "separator"] = "lines"
    """How the block splits into entries: bullet lines, blank-line separated paragraphs, the whole
    body as one entry, top-level XML elements (Letta blocks), `entry_regex` headers, or pieces
    between occurrences of `separator`."""
    bullet: str = "- "
    """Line prefix of an entry for `entries = "lines"`."""
    separator: str | None = None
    """Literal text between entries for `entries = "separator"` (e.g. `"\n---\n"`)."""
    entry_regex: str | None = None
    """For `entries = "regex"`: a header regex (multiline) that starts each entry."""
    entry_pattern: str | None = None
    """Optional regex applied to each entry text with named groups `value`, `id`, `type`,
    `scene`: `value` becomes the entry value, `id` an exposed item id, the others labels."""
    id_scheme: str | None = None
    """Name of the exposed-id scheme (e.g. `mem0-short`) when `entry_pattern` has an `id` group."""
    form: str = "block"
    """Delivered form recorded on the delivery (e.g. `task_recall`, `persona`, `skill_catalog`)."""
    route: Route | None = None
    """Delivery route; default `agent` inside tool messages, else `host`."""
    namespace: str = "observed"
    """Namespace of the entries' items."""

    @field_validator("start_regex", "end_regex", "regex", "entry_regex", "entry_pattern")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as e:
                raise ValueError(f"invalid regex: {e}") from None
        return v

    @model_validator(mode="after")
    def _consistent(self) -> ObserverSpec:
        if sum(x is not None for x in (self.start, self.start_regex, self.regex)) != 1:
            raise ValueError("give exactly one of `start`, `start_regex` or `regex`")
        if self.entries == "separator" and not self.separator:
            raise ValueError('`entries = "separator"` needs `separator`')
        if self.entries == "regex" and not self.entry_regex:
            raise ValueError('`entries = "regex"` needs `entry_regex`')
        if (
            self.entries not in ("lines", "regex")
            and self.end is None
            and self.end_regex is None
            and self.regex is None
        ):
            raise ValueError(f'`entries = "{self.entries}"` needs an `end` marker')
        return self


@dataclass
class Observer:
    """A compiled observer."""

    spec: ObserverSpec

    def __post_init__(self) -> None:
        s = self.spec
        self.block_re = re.compile(s.regex, re.M | re.S) if s.regex else None
        self.start_re = re.compile(s.start_regex if s.start_regex else re.escape(s.start or ""), re.M)
        self.end_re = (
            re.compile(s.end_regex, re.M)
            if s.end_regex
            else re.compile(re.escape(s.end), re.M)
            if s.end
            else None
        )
        self.entry_re = re.compile(s.entry_regex, re.M) if s.entry_regex else None
        self.pattern = re.compile(s.entry_pattern, re.S) if s.entry_pattern else None
        # A cheap literal pre-check keeps the scan of long transcripts fast.
        self.probe = s.start if s.start else _literal_prefix(s.start_regex or s.regex or "")

    @property
    def name(self) -> str:
        return self.spec.name


def _literal_prefix(rx: str) -> str:
    out = []
    for ch in rx:
        if ch in ".^$*+?{}[]\\|()":
            break
        out.append(ch)
    return "".join(out[:-1]) if len(out) > 1 else ""


@dataclass
class Found:
    """A block found in one message."""

    observer: Observer
    start: int
    end: int
    text: str
    entries: list[Entry]


# ------------------------------------------------------------------------------------------------
# Finding blocks
# ------------------------------------------------------------------------------------------------


def find_blocks(text: str, obs: Observer) -> list[Found]:
    """Every block of `obs` in a message text (blocks whose text is not unique are dropped)."""
    if obs.probe and obs.probe not in text:
        return []
    out: list[Found] = []
    if obs.block_re is not None:
        for bm in obs.block_re.finditer(text):
            body = (
                bm.group("body")
                if "body" in obs.block_re.groupindex and bm.group("body") is not None
                else bm.group(0)
            )
            entries = split_entries(body, obs)
            if entries and bm.group(0) and text.count(bm.group(0)) == 1:
                out.append(Found(obs, bm.start(), bm.end(), bm.group(0), entries))
        return out
    pos = 0
    while True:
        m = obs.start_re.search(text, pos)
        if m is None:
            break
        body_start = m.end()
        if obs.end_re is not None:
            e = obs.end_re.search(text, body_start)
            if e is None:
                pos = m.end()
                continue
            body_end, end = e.start(), e.end()
        else:
            body_end = end = _open_end(text, body_start, obs)
        body = text[body_start:body_end]
        entries = split_entries(body, obs)
        block = text[m.start() : end]
        if entries and block and text.count(block) == 1:
            out.append(Found(obs, m.start(), m.start() + len(block), block, entries))
        pos = max(end, m.end() + 1)
    return out


def _is_entry_line(line: str, obs: Observer) -> bool:
    s = obs.spec
    if s.entries == "lines":
        return line.startswith(s.bullet)
    if s.entries == "regex" and obs.entry_re is not None:
        return obs.entry_re.match(line) is not None
    return bool(line.strip())


def _open_end(text: str, start: int, obs: Observer) -> int:
    """End of a block without an end marker: the rest of the start line, then entry lines and
    their continuation lines; a blank line ends the block unless an entry line follows it
    directly (blank lines before the first entry are allowed)."""
    nl = text.find("\n", start)
    if nl == -1:
        return len(text)
    end, pos, seen = nl, nl + 1, False
    lines = text[pos:].split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and _is_entry_line(lines[j], obs) and (not seen or j == i + 1):
                pos += sum(len(x) + 1 for x in lines[i:j])
                i = j
                continue
            break
        if _is_entry_line(line, obs):
            seen = True
        elif not seen or (obs.spec.entries == "lines" and not line.startswith((" ", "\t"))):
            break
        pos += len(line) + 1
        end = min(pos - 1, len(text))
        i += 1
    return end


def split_entries(body: str, obs: Observer) -> list[Entry]:
    """The entries of one block body."""
    s = obs.spec
    texts: list[tuple[str, str | None]] = []  # (entry text, exposed key)
    if s.entries == "lines":
        cur: list[str] | None = None
        for line in body.split("\n"):
            if line.startswith(s.bullet):
                if cur is not None:
                    texts.append(("\n".join(cur).strip(), None))
                cur = [line[len(s.bullet) :]]
            elif cur is not None and line.startswith((" ", "\t")) and line.strip():
                cur.append(line.strip())
            elif cur is not None:
                texts.append(("\n".join(cur).strip(), None))
                cur = None
        if cur is not None:
            texts.append(("\n".join(cur).strip(), None))
    elif s.entries == "separator":
        texts = [(p.strip(), None) for p in body.split(s.separator or "") if p.strip()]
    elif s.entries == "paragraphs":
        texts = [(p.strip(), None) for p in re.split(r"\n\s*\n", body) if p.strip()]
    elif s.entries == "whole":
        if body.strip():
            texts = [(body.strip(), None)]
    elif s.entries == "regex":
        assert obs.entry_re is not None
        heads = list(obs.entry_re.finditer(body))
        for k, h in enumerate(heads):
            stop = heads[k + 1].start() if k + 1 < len(heads) else len(body)
            piece = body[h.end() : stop].strip()
            if piece:
                texts.append((piece, h.group(0).strip()))
    elif s.entries == "xml_children":
        for m in _XML_CHILD.finditer(body):
            label = m.group(1)
            inner = m.group(2)
            v = _XML_VALUE.search(inner)
            value = v.group(1).strip("\n") if v else inner.strip()
            texts.append((value, label))
    return [_entry(t, key, obs) for t, key in texts if t]


_XML_CHILD = re.compile(r"^<([A-Za-z_][\w.-]*)>\n(.*?)\n</\1>$", re.M | re.S)
_XML_VALUE = re.compile(r"<value>\n?(.*?)\n?</value>", re.S)


def _entry(text: str, key: str | None, obs: Observer) -> Entry:
    s = obs.spec
    value, item_id, labels = text, None, {}
    if obs.pattern is not None:
        m = obs.pattern.fullmatch(text) or obs.pattern.search(text)
        if m is not None:
            g = m.groupdict()
            if g.get("value"):
                value = g["value"].strip()
            if g.get("id"):
                item_id = g["id"]
            labels = {k: v for k, v in g.items() if k not in ("value", "id") and v}
    display_key = None
    scheme = "rendered"
    if item_id is not None:
        scheme = s.id_scheme or f"{s.name}-id"
        display_key = item_id
    elif s.entries == "xml_children" and key:
        item_id, scheme, display_key = key, s.id_scheme or "label", key
    if item_id is None:
        item_id = f"{s.name}:{text_digest(value)[:12]}"
    if key and s.entries == "regex":
        labels["header"] = key
    return Entry(
        namespace=s.namespace,
        item_id=item_id,
        id_scheme=scheme,
        value=value,
        digest=text_digest(value),
        display_key=display_key,
        labels=labels,
    )


_SCANNED_ROLES = ("system", "user", "tool", "developer")


def scan_message(msg: Message, observers: list[Observer]) -> list[Found]:
    """Non-overlapping blocks of all observers in one message (earlier observers win)."""
    if msg.role not in _SCANNED_ROLES:
        return []
    text = msg.text()
    if not text:
        return []
    found: list[Found] = []
    for obs in observers:
        for f in find_blocks(text, obs):
            if all(f.end <= g.start or f.start >= g.end for g in found):
                found.append(f)
    found.sort(key=lambda f: f.start)
    return found
