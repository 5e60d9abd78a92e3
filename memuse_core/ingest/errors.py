"""The one user-facing import error (DESIGN.md "Bad input")."""

from __future__ import annotations

import os


class IngestError(ValueError):
    """A user-facing import error: one sentence naming file, line and field."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, field: str | None, reason: str):
        self.path, self.line, self.field, self.reason = str(path), line, field, reason
        where = self.path + (f":{line}" if line is not None else "")
        what = f" field `{field}`:" if field else ""
        super().__init__(f"{where}:{what} {reason}")


def json_problem(msg: str, column: int) -> str:
    """What Python's JSON decoder found, with its column, as one phrase: its messages that end in
    "at" ("Unterminated string starting at") are completed by the column, never "at at"."""
    return f"{msg.removesuffix(' at')} at column {column}"
