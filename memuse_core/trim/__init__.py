"""MemTrim: trie-indexed memory evidence and read-time trimming (memtrim paper, Section 3, App. A).

    from memuse_core.trim import MemTrim
    trimmer = MemTrim()
    trimmer.write("m1", "Lionel Messi plays for Paris Saint-Germain.\\nquestion: Which country is "
                  "his club based in?", answer="France")
    result = trimmer.read("Lionel Messi now plays for Inter Miami. Which country is his club based in?",
                          ["m1"])
    result.decisions["m1"].outcome   # "suppressed": the club it depended on changed

The library part needs only pydantic and the standard library.
"""

from .adapter import SearchResultFilter, trim_search_results
from .core import Decision, MemTrim, StoredMemory, TrimResult, unit_dict
from .parse_det import DeterministicParser
from .units import EvidenceUnit, Key, Outcome, ParsedInteraction

__all__ = [
    "Decision",
    "DeterministicParser",
    "EvidenceUnit",
    "Key",
    "MemTrim",
    "Outcome",
    "ParsedInteraction",
    "SearchResultFilter",
    "StoredMemory",
    "TrimResult",
    "trim_search_results",
    "unit_dict",
]


def __getattr__(name: str):  # lazy: the LLM parser imports openai only when asked for
    if name == "LLMParser":
        from .parse_llm import LLMParser

        return LLMParser
    raise AttributeError(name)
