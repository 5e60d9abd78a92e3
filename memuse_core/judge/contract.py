"""The judge's answer tool (MemUse A.2.3 "Assessment output", A.3.1 "Structural checks").

The answer's models (`EntryAssessment`, `JudgeAnswer`) live in `rules.judgment`, below the store
that saves them; the signal label sets live in `vocab`. This module names the judge's tools and
generates the `answer` tool's JSON schema from `JudgeAnswer`.
"""

from __future__ import annotations

from ..rules.judgment import JudgeAnswer

ANSWER_TOOL = "answer"
READ_TOOL = "read_evidence"
SEARCH_TOOL = "search_evidence"
ENTRIES_MARKER = "ENTRIES_JSON:"
"""Line prefix of the machine-readable entry list in the judge's first user message (the scripted
server's automatic answer reads it: `judge.script`)."""


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
