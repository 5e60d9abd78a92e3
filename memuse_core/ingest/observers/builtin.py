"""Built-in observers (../shared/notes/MEMORY-FORMATS.md), user observer files, and the set of
observers importers apply."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from ..base import IngestError
from .rules import Observer, ObserverSpec

# ------------------------------------------------------------------------------------------------
# Built-in observers (../shared/notes/MEMORY-FORMATS.md)
# ------------------------------------------------------------------------------------------------

BUILTIN_SPECS: list[ObserverSpec] = [
    ObserverSpec(
        name="mem0-relevant-memories",
        start="### Relevant memories",
        entries="lines",
        entry_pattern=r"\[(?P<type>[^\]]+)\]\s+(?P<value>.*?)\s*\[mem0:(?P<id>[0-9A-Za-z-]+)\]",
        id_scheme="mem0-short",
        form="task_recall",
        namespace="mem0",
    ),
    ObserverSpec(
        name="mem0-user-memories",
        start="User Memories:",
        entries="lines",
        form="task_recall",
        namespace="mem0",
    ),
    ObserverSpec(
        name="relevant-memories",
        start="<relevant-memories>",
        end="</relevant-memories>",
        entries="lines",
        entry_pattern=r"(?:\[(?P<type>[^\]|]+)(?:\|(?P<scene>[^\]]+))?\]\s+)?(?P<value>.*?)"
        r"(?:\s*\[mem0:(?P<id>[0-9A-Za-z-]+)\])?",
        id_scheme="mem0-short",
        form="task_recall",
        namespace="recall",
    ),
    ObserverSpec(
        name="tdai-user-persona",
        start="<user-persona>",
        end="</user-persona>",
        entries="whole",
        form="persona",
        namespace="tencentdb",
    ),
    ObserverSpec(
        name="tdai-scene-navigation",
        start="<scene-navigation>",
        end="</scene-navigation>",
        entries="lines",
        form="scene_index",
        namespace="tencentdb",
    ),
    ObserverSpec(
        name="tdai-available-skills",
        start="<available_skills>",
        end="</available_skills>",
        entries="lines",
        entry_pattern=r"(?P<id>[^:\n]+?):\s+.*",
        id_scheme="skill-name",
        form="skill_catalog",
        namespace="tencentdb",
    ),
    ObserverSpec(
        name="tdai-profile-memory",
        start="<tdai_profile_memory>",
        end="</tdai_profile_memory>",
        entries="lines",
        form="profile_memory",
        namespace="tencentdb",
    ),
    ObserverSpec(
        name="letta-memory-blocks",
        start="<memory_blocks>",
        end="</memory_blocks>",
        entries="xml_children",
        id_scheme="letta-label",
        form="core_memory",
        namespace="letta",
    ),
    ObserverSpec(
        name="openhands-extra-info",
        start="<EXTRA_INFO>",
        end="</EXTRA_INFO>",
        entries="whole",
        entry_pattern=r"The following information has been included based on a keyword match "
        r"for \"(?P<trigger>[^\"]*)\"\.\n.*?relevant to the user's request\.\n+"
        r"(?P<value>.*)",
        form="knowledge",
        namespace="openhands",
    ),
    ObserverSpec(
        name="reflexion-memory",
        start="Your memory for the task below:",
        entries="regex",
        entry_regex=r"^Trial \d+:",
        form="reflection",
        namespace="reflexion",
    ),
    ObserverSpec(
        name="swe-exp-experiences",
        start="Here are some experiences you can refer to:",
        entries="regex",
        entry_regex=r"^\*\*\*Experience \d+\*\*\*:",
        form="experience",
        namespace="swe-exp",
    ),
    ObserverSpec(
        name="swe-bench-cl-experiences",
        start_regex=r"^--- Relevant Past Experiences[^\n]*---",
        end="--- End of Past Experiences ---",
        entries="paragraphs",
        entry_pattern=r"(?s).*?(?:Task(?: ID)?|task_id|Instance)\s*[:=]\s*(?P<id>[\w./-]+).*",
        id_scheme="task-id",
        form="experience",
        namespace="swe-bench-cl",
    ),
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
            raise IngestError(
                p, None, field, first.get("msg", "invalid value").removeprefix("Value error, ")
            ) from None
        if spec.name in names:
            raise IngestError(p, None, f"observer[{i}].name", f"duplicate observer name {spec.name!r}")
        names.add(spec.name)
        out.append(Observer(spec))
    return out


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
