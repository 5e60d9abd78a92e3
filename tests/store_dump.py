"""Every row of a store's tables, for tests that compare two stores (imported by test modules).

One home for "the same store": each table's rows sorted by all their columns, so insertion order
and physical layout do not matter; wall-clock columns are left out by the store's own rule
(`store.checksums.compared_columns`: TIMESTAMP columns, never recorded times).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from memuse_core.store import connect
from memuse_core.store.checksums import compared_columns


def dump_store(db: Path, tables: Iterable[str] | None = None) -> dict[str, list[tuple]]:
    """table or view name -> its rows (in `ORDER BY ALL` order); every base table when `tables` is None.
    A view's columns are all kept (views show recorded data, never a wall clock)."""
    con = connect(db, read_only=True)
    try:
        columns = compared_columns(con)
        names = list(tables) if tables is not None else sorted(columns)
        out = {}
        for t in names:
            cols = columns.get(t) or [
                r[0]
                for r in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                    "ORDER BY ordinal_position",
                    [t],
                ).fetchall()
            ]
            sel = ", ".join(f'"{c}"' for c in cols)
            out[t] = con.execute(f'SELECT {sel} FROM "{t}" ORDER BY ALL').fetchall()
        return out
    finally:
        con.close()
