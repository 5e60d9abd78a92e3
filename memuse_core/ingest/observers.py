"""Observers: rules that find memory text inside recorded model inputs (MemUse 3.1, A.1.1).

A recorded trajectory often carries memory only as text the host pasted into a prompt (a
`User Memories:` list in the system message, `<memory_blocks>` of a Letta agent, an OpenHands
`<EXTRA_INFO>` block). An observer names such a wrapper; `observe` scans the input messages of
every model call and emits one `memory_delivery` per block found per consuming call, with one
`Entry` per entry of the block and a placement whose proof pins the host message (index +
`text_digest` of its text) and the block's start offset. A block restated unchanged on every call
therefore gives one delivery per call with identical entries, which the span builder groups.

Rules (kept deliberately strict so every proof resolves, A.1.3):
* only system, user and tool messages are scanned (assistant text is the agent's own output);
* a block whose exact text occurs more than once in its host message is skipped (its placement
  could not be proven unique);
* a block overlapping a placement that the importer already recorded for the same call is skipped
  (no double counting of e.g. an OpenHands recall the importer turned into a delivery);
* an entry with an exposed id (e.g. `[mem0:1a2b3c4d]`, a skill name, a Letta block label) keeps
  it; otherwise its id is rendered from its text (`id_scheme="rendered"`), stable across calls.

User-defined observers come from a TOML or JSON file (`memuse ingest --observers FILE`):

    [[observer]]
    name = "team-notes"
    start = "<team-notes>"
    end = "</team-notes>"
    entries = "lines"          # lines | paragraphs | whole | xml_children | regex | separator
    form = "task_recall"
    namespace = "notes"
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..episode import EpisodeError, resolve_messages
from ..events import (
    Entry,
    EpisodeEnd,
    Event,
    MemoryDelivery,
    Message,
    ModelCall,
    Placement,
    Proof,
    text_digest,
)
from .base import IngestError


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
    route: Literal["host", "agent"] | None = None
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
            raise ValueError("`entries = \"separator\"` needs `separator`")
        if self.entries == "regex" and not self.entry_regex:
            raise ValueError("`entries = \"regex\"` needs `entry_regex`")
        if (self.entries not in ("lines", "regex") and self.end is None and self.end_regex is None
                and self.regex is None):
            raise ValueError(f"`entries = \"{self.entries}\"` needs an `end` marker")
        return self


@dataclass
class Observer:
    """A compiled observer."""

    spec: ObserverSpec

    def __post_init__(self) -> None:
        s = self.spec
        self.block_re = re.compile(s.regex, re.M | re.S) if s.regex else None
        self.start_re = re.compile(s.start_regex if s.start_regex else re.escape(s.start or ""), re.M)
        self.end_re = (re.compile(s.end_regex, re.M) if s.end_regex else
                       re.compile(re.escape(s.end), re.M) if s.end else None)
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
            body = bm.group("body") if "body" in obs.block_re.groupindex and bm.group("body") is not None \
                else bm.group(0)
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
        block = text[m.start():end]
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
                cur = [line[len(s.bullet):]]
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
            piece = body[h.end():stop].strip()
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
    return Entry(namespace=s.namespace, item_id=item_id, id_scheme=scheme, value=value,
                 digest=text_digest(value), display_key=display_key, labels=labels)


# ------------------------------------------------------------------------------------------------
# Built-in observers (../shared/notes/MEMORY-FORMATS.md)
# ------------------------------------------------------------------------------------------------

BUILTIN_SPECS: list[ObserverSpec] = [
    ObserverSpec(name="mem0-relevant-memories", start="### Relevant memories", entries="lines",
                 entry_pattern=r"\[(?P<type>[^\]]+)\]\s+(?P<value>.*?)\s*\[mem0:(?P<id>[0-9A-Za-z-]+)\]",
                 id_scheme="mem0-short", form="task_recall", namespace="mem0"),
    ObserverSpec(name="mem0-user-memories", start="User Memories:", entries="lines",
                 form="task_recall", namespace="mem0"),
    ObserverSpec(name="relevant-memories", start="<relevant-memories>", end="</relevant-memories>",
                 entries="lines",
                 entry_pattern=r"(?:\[(?P<type>[^\]|]+)(?:\|(?P<scene>[^\]]+))?\]\s+)?(?P<value>.*?)"
                               r"(?:\s*\[mem0:(?P<id>[0-9A-Za-z-]+)\])?",
                 id_scheme="mem0-short", form="task_recall", namespace="recall"),
    ObserverSpec(name="tdai-user-persona", start="<user-persona>", end="</user-persona>",
                 entries="whole", form="persona", namespace="tencentdb"),
    ObserverSpec(name="tdai-scene-navigation", start="<scene-navigation>", end="</scene-navigation>",
                 entries="lines", form="scene_index", namespace="tencentdb"),
    ObserverSpec(name="tdai-available-skills", start="<available_skills>", end="</available_skills>",
                 entries="lines", entry_pattern=r"(?P<id>[^:\n]+?):\s+.*", id_scheme="skill-name",
                 form="skill_catalog", namespace="tencentdb"),
    ObserverSpec(name="tdai-profile-memory", start="<tdai_profile_memory>", end="</tdai_profile_memory>",
                 entries="lines", form="profile_memory", namespace="tencentdb"),
    ObserverSpec(name="letta-memory-blocks", start="<memory_blocks>", end="</memory_blocks>",
                 entries="xml_children", id_scheme="letta-label", form="core_memory", namespace="letta"),
    ObserverSpec(name="openhands-extra-info", start="<EXTRA_INFO>", end="</EXTRA_INFO>",
                 entries="whole",
                 entry_pattern=r"The following information has been included based on a keyword match "
                               r"for \"(?P<trigger>[^\"]*)\"\.\n.*?relevant to the user's request\.\n+"
                               r"(?P<value>.*)",
                 form="knowledge", namespace="openhands"),
    ObserverSpec(name="reflexion-memory", start="Your memory for the task below:", entries="regex",
                 entry_regex=r"^Trial \d+:", form="reflection", namespace="reflexion"),
    ObserverSpec(name="swe-exp-experiences", start="Here are some experiences you can refer to:",
                 entries="regex", entry_regex=r"^\*\*\*Experience \d+\*\*\*:", form="experience",
                 namespace="swe-exp"),
    ObserverSpec(name="swe-bench-cl-experiences", start_regex=r"^--- Relevant Past Experiences[^\n]*---",
                 end="--- End of Past Experiences ---", entries="paragraphs",
                 entry_pattern=r"(?s).*?(?:Task(?: ID)?|task_id|Instance)\s*[:=]\s*(?P<id>[\w./-]+).*",
                 id_scheme="task-id", form="experience", namespace="swe-bench-cl"),
]

BUILTIN: list[Observer] = [Observer(s) for s in BUILTIN_SPECS]
"""The built-in observers, most specific first (overlapping matches keep the first)."""


def load_observers(path: str | Path) -> list[Observer]:
    """User observers from a TOML (`[[observer]]` tables) or JSON (list or {"observer": [...]}) file."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise IngestError(p, None, None, f"cannot read observer config ({e.strerror})") from None
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(raw)
        else:
            import tomllib

            data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        line = getattr(e, "lineno", None)
        raise IngestError(p, line, None, f"not a valid observer config ({str(e).splitlines()[0]})") from None
    items = data.get("observer", data.get("observers")) if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise IngestError(p, None, "observer", "expected a non-empty list of observer tables")
    out: list[Observer] = []
    names = set()
    for i, item in enumerate(items):
        try:
            spec = ObserverSpec.model_validate(item)
        except ValidationError as e:
            first = e.errors()[0]
            loc = ".".join(str(x) for x in first.get("loc", ()))
            field = f"observer[{i}]" + (f".{loc}" if loc else "")
            raise IngestError(p, None, field, first.get("msg", "invalid value").removeprefix("Value error, ")) from None
        if spec.name in names:
            raise IngestError(p, None, f"observer[{i}].name", f"duplicate observer name {spec.name!r}")
        names.add(spec.name)
        out.append(Observer(spec))
    return out


# ------------------------------------------------------------------------------------------------
# Running observers over an event stream
# ------------------------------------------------------------------------------------------------

_SCANNED_ROLES = ("system", "user", "tool", "developer")
_SLOTS = {"system": "system", "developer": "system", "user": "user", "tool": "tool_result"}


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


Hit = tuple[int, Message, list[Found]]
"""(message index, message, blocks found in it) for the messages of one input that hold blocks."""


def scan_input(messages: list[Message], observers: list[Observer], cache: dict[int, list[Found]] | None = None,
               offset: int = 0) -> list[Hit]:
    """Hits of a list of messages (indices start at `offset`); `cache` maps message ids to blocks."""
    hits: list[Hit] = []
    for j, msg in enumerate(messages):
        if cache is not None and id(msg) in cache:
            found = cache[id(msg)]
        else:
            found = scan_message(msg, observers)
            if cache is not None:
                cache[id(msg)] = found
        if found:
            hits.append((offset + j, msg, found))
    return hits


def deliveries_for_call(call: ModelCall, messages: list[Message], observers: list[Observer],
                        cache: dict[int, list[Found]] | None = None,
                        taken: list[tuple[int, int, int]] | None = None) -> list[MemoryDelivery]:
    """The observed deliveries consumed by one call whose resolved input is `messages`.

    `taken` lists (message_index, start, end) intervals already covered by recorded deliveries.
    """
    return deliveries_from_hits(call, scan_input(messages, observers, cache), taken)


def deliveries_from_hits(call: ModelCall, hits: list[Hit],
                         taken: list[tuple[int, int, int]] | None = None) -> list[MemoryDelivery]:
    """One delivery per block found in the call's input, minus blocks overlapping `taken`."""
    out: list[MemoryDelivery] = []
    for idx, msg, found in hits:
        digest = None
        for f in found:
            if taken and any(i == idx and not (f.end <= s or f.start >= e) for i, s, e in taken):
                continue
            if digest is None:
                digest = text_digest(msg.text())
            spec = f.observer.spec
            route = spec.route or ("agent" if msg.role == "tool" else "host")
            out.append(MemoryDelivery(
                episode_id=call.episode_id,
                delivery_id=f"{call.call_id}/obs/{spec.name}/{idx}.{f.start}",
                route=route, form=spec.form, consuming_call_id=call.call_id,
                entries=[e.model_copy() for e in f.entries],
                placements=[Placement(slot=_SLOTS.get(msg.role, msg.role), kind="block", text=f.text,
                                      digest=text_digest(f.text),
                                      proof=Proof(message_index=idx, message_digest=digest, start=f.start))],
            ))
    return out


def observe(events: Iterable[Event], observers: list[Observer] | None = None) -> Iterator[Event]:
    """The events with observed `memory_delivery` events added after each consuming call."""
    for _line, ev in observe_lines(((None, e) for e in events), observers):
        yield ev


def observe_lines(pairs: Iterable[tuple[int | None, Event]], observers: list[Observer] | None = None
                  ) -> Iterator[tuple[int | None, Event]]:
    """`observe` over (source line, event) pairs as importers yield them; streamed."""
    obs = BUILTIN if observers is None else observers
    if not obs:
        yield from pairs
        return
    resolved: dict[str, dict[str, list[Message]]] = {}
    caches: dict[str, dict[int, list[Found]]] = {}
    hits_of: dict[str, dict[str, list[Hit]]] = {}
    """Per episode and call: the hits of its input. A delta-encoded call reuses its base's hits
    for the shared prefix and scans only the appended messages (linear in the episode)."""
    held: tuple[int | None, ModelCall, list[Hit]] | None = None
    recorded: list[tuple[int | None, MemoryDelivery]] = []

    def flush() -> Iterator[tuple[int | None, Event]]:
        nonlocal held, recorded
        if held is None:
            return
        line, call, hits = held
        yield line, call
        taken = [(p.proof.message_index, p.proof.start, p.proof.start + len(p.text))
                 for _, d in recorded for p in d.placements
                 if p.proof and p.proof.message_index is not None and p.proof.start is not None and p.text]
        yield from recorded
        for d in deliveries_from_hits(call, hits, taken):
            yield line, d
        held, recorded = None, []

    for line, ev in pairs:
        if held is not None:
            if isinstance(ev, MemoryDelivery) and ev.consuming_call_id == held[1].call_id:
                recorded.append((line, ev))
                continue
            yield from flush()
        if isinstance(ev, ModelCall) and ev.role == "agent":
            earlier = resolved.setdefault(ev.episode_id, {})
            try:
                msgs = resolve_messages(ev, earlier)
            except EpisodeError:
                yield line, ev  # the store reports the broken reference with its line
                continue
            earlier[ev.call_id] = msgs
            cache = caches.setdefault(ev.episode_id, {})
            ep_hits = hits_of.setdefault(ev.episode_id, {})
            base = ev.request.base_call_id
            if base is not None and base in ep_hits:
                n = len(msgs) - len(ev.request.messages)
                hits = [h for h in ep_hits[base] if h[0] < n] + scan_input(ev.request.messages, obs, cache, n)
            else:
                hits = scan_input(msgs, obs, cache)
            ep_hits[ev.call_id] = hits
            held = (line, ev, hits)
            continue
        if isinstance(ev, ModelCall):
            earlier = resolved.setdefault(ev.episode_id, {})
            try:
                earlier[ev.call_id] = resolve_messages(ev, earlier)
            except EpisodeError:
                pass
        if isinstance(ev, EpisodeEnd):
            resolved.pop(ev.episode_id, None)
            caches.pop(ev.episode_id, None)
            hits_of.pop(ev.episode_id, None)
        yield line, ev
    yield from flush()


# ------------------------------------------------------------------------------------------------
# Observers active for importers (built-ins plus those a user adds for one command)
# ------------------------------------------------------------------------------------------------

_EXTRA: list[Observer] = []
_ENABLED = [True]


def active_observers() -> list[Observer]:
    """The observers importers apply: the built-ins (unless disabled), then user observers."""
    return (BUILTIN if _ENABLED[0] else []) + _EXTRA


@contextmanager
def using_observers(extra: list[Observer] | None = None, *, enabled: bool = True) -> Iterator[None]:
    """Within the block, importers also apply `extra` (and no built-ins when `enabled` is False)."""
    old_extra, old_enabled = list(_EXTRA), _ENABLED[0]
    _EXTRA[:] = list(extra or [])
    _ENABLED[0] = enabled
    try:
        yield
    finally:
        _EXTRA[:] = old_extra
        _ENABLED[0] = old_enabled
