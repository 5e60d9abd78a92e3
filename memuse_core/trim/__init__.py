"""MemTrim: trie-indexed memory evidence and read-time trimming (memtrim paper, Section 3, App. A).

    from memuse_core.trim import MemTrim
    trimmer = MemTrim()
    trimmer.write("m1", "Lionel Messi plays for Paris Saint-Germain.\\nQuestion: Which country is "
                  "his club based in?", answer="France")
    result = trimmer.read("Lionel Messi now plays for Inter Miami. Which country is his club based in?",
                          ["m1"])
    result.decisions["m1"].outcome   # "suppressed": the club it depended on changed

Around a memory system: `MemoryFilter` takes Mem0's or Letta's search results and returns them in
the same shape, trimmed, with the decisions; `ScopedIndex` keeps one index per user / agent / run,
optionally persisted in the DuckDB store. The library part needs only pydantic and the standard
library (the store is imported only when an index is given a database).
"""

from .core import Decision, MemTrim, StoredMemory, TrimResult, unit_dict
from .filter import MemoryFilter
from .index import ScopedIndex, scope_key
from .parse_det import DeterministicParser
from .units import EvidenceUnit, Key, Outcome, ParsedInteraction

__all__ = [
    "Decision",
    "DeterministicParser",
    "EvidenceUnit",
    "Key",
    "MemTrim",
    "MemoryFilter",
    "Outcome",
    "ParsedInteraction",
    "ScopedIndex",
    "StoredMemory",
    "TrimResult",
    "scope_key",
    "unit_dict",
]


def __getattr__(name: str):  # lazy: the LLM parser imports openai only when asked for
    if name == "LLMParser":
        from .parse_llm import LLMParser

        return LLMParser
    raise AttributeError(name)
