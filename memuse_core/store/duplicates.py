"""The error of an id the store already holds (or a file repeats), naming the line and field."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tables import DuplicateKey


class DuplicateError(ValueError):
    """An event names an id that the store already holds from another file; `line` and `field`
    say where, when the id was found by the database at a flush rather than by the writer."""

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.line, self.field = line, field


def duplicate_error(e: DuplicateKey, keys: list[Any], seqs: list[Any]) -> DuplicateError:
    """The DuplicateError of a primary-key violation met while appending rows whose key column
    and line numbers are `keys` and `seqs`: the id, and the line of the row that carries it."""
    col, value = e.column or "id", e.value
    line = next((q for k, q in zip(keys, seqs) if k == value), None)
    if value is None:
        return DuplicateError(f"an id is already stored ({e})", line=line)
    twice = sum(1 for k in keys if k == value) > 1
    where = "appears twice in the file" if twice else "is already stored"
    return DuplicateError(f"{col} {value!r} {where}", line=line, field=col)
