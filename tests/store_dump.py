"""Every row of a store's tables, for tests that compare two stores (imported by test modules).

One home for "the same store": each table's rows sorted by all their columns, so insertion order
and physical layout do not matter; wall-clock columns (`imported_at`, `built_at`) are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from memuse_core.store import connect

WALL_CLOCK = ("imported_at", "built_at")


def dump_store(db: Path, tables: Iterable[str] | None = None) -> dict[str, list[tuple]]:
    """table or view name -> its rows (in `ORDER BY ALL` order); every base table when `tables` is None."""
    con = connect(db, read_only=True)
    try:
        names = (
            list(tables)
            if tables is not None
            else [
                r[0]
                for r in con.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
                    "AND table_type = 'BASE TABLE' ORDER BY 1"
                ).fetchall()
            ]
        )
        out = {}
        for t in names:
            cols = [
                r[0]
                for r in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                    "ORDER BY ordinal_position",
                    [t],
                ).fetchall()
                if r[0] not in WALL_CLOCK
            ]
            sel = ", ".join(f'"{c}"' for c in cols)
            out[t] = con.execute(f'SELECT {sel} FROM "{t}" ORDER BY ALL').fetchall()
        return out
    finally:
        con.close()
