"""The judge's answer contract (MemUse 3.4, A.2.2-A.2.3 "Assessment output", A.3.1 "Structural
checks").

One assessment per delivered entry with the five signals, action anchors, evidence steps and notes,
plus a span summary and a confidence. The `answer` tool's JSON schema is generated from these models,
so the schema the judge sees and the parser that checks its reply are the same object. Label sets
live here and nowhere else.
"""

from __future__ import annotations

import math
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

Accuracy = Literal["corroborated", "contradicted", "uncontradicted"]
Novelty = Literal["novel", "confirming", "redundant"]
Influence = Literal["acted_on", "selected", "referenced", "none"]
Effect = Literal["improved", "no_effect", "harmed"]

ACCURACY_VALUES: tuple[str, ...] = get_args(Accuracy)
NOVELTY_VALUES: tuple[str, ...] = get_args(Novelty)
INFLUENCE_VALUES: tuple[str, ...] = get_args(Influence)
EFFECT_VALUES: tuple[str, ...] = get_args(Effect)

ANSWER_TOOL = "answer"
READ_TOOL = "read_evidence"
SEARCH_TOOL = "search_evidence"


class EntryAssessment(BaseModel):
    """The judge's assessment of one delivered entry (A.2.2). Null means undetermined."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    entry: int
    """The entry number exactly as listed in target/entries.md."""
    item_id: str | None = None
    """The entry's item id exactly as listed (null when the list shows none)."""
    relevance: bool
    """True when the exposed content applies to the task or the current subgoal."""
    accuracy: Accuracy
    """corroborated / contradicted by recorded evidence, otherwise uncontradicted."""
    novelty: Novelty | None
    """What the entry adds to the prior context; null when a source is missing or unread."""
    influence: Influence | None
    """What the entry demonstrably shaped inside its credit window; null when undetermined."""
    effect: Effect | None
    """Consequence of the anchored actions (acted_on only); null otherwise or when undetermined."""
    anchors: list[int] = Field(default_factory=list)
    """Steps of actions the entry shaped (inside its credit window)."""
    evidence: list[int] = Field(default_factory=list)
    """Other steps the assessment relies on; each must have been read in full."""
    notes: str = ""
    """Rationale per signal; cite steps as [S7] and prior sources as [P3]."""


class JudgeAnswer(BaseModel):
    """The whole answer for one injection span (A.2.3 "Assessment output")."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    assessments: list[EntryAssessment]
    """Exactly one assessment per delivered entry."""
    summary: str = ""
    """Span summary that keeps entry-level uncertainty visible."""
    confidence: float = 0.5
    """Confidence in [0, 1]; it supports inspection and never weights counts."""

    @field_validator("confidence")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("confidence must be a finite number")
        return v


def answer_tool_schema() -> dict:
    """The OpenAI function schema of the `answer` tool, generated from `JudgeAnswer`."""
    params = JudgeAnswer.model_json_schema()
    return {
        "type": "function",
        "function": {
            "name": ANSWER_TOOL,
            "description": (
                "Submit the final assessment of every delivered entry. The answer is checked for "
                "structure and evidence coverage; violations come back as this tool's result."
            ),
            "parameters": params,
        },
    }
