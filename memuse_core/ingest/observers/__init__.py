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

from .builtin import BUILTIN, BUILTIN_SPECS, active_observers, load_observers, using_observers
from .rules import Found, Observer, ObserverSpec, find_blocks, scan_message, split_entries
from .stream import Hit, deliveries_for_call, deliveries_from_hits, observe, observe_lines, scan_input

__all__ = [
    "BUILTIN",
    "BUILTIN_SPECS",
    "Found",
    "Hit",
    "Observer",
    "ObserverSpec",
    "active_observers",
    "deliveries_for_call",
    "deliveries_from_hits",
    "find_blocks",
    "load_observers",
    "observe",
    "observe_lines",
    "scan_input",
    "scan_message",
    "split_entries",
    "using_observers",
]
