"""Small helpers shared by the app's query modules: run scopes, frames and table checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd

from ...vocab import EPISODE_OUTCOMES


def frame(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
    """Run `sql` with positional parameters and return the result as a DataFrame."""
    return con.execute(sql, params or []).df()


def scope(runs: Sequence[str] | None, col: str = "e.run_id") -> tuple[str, list[Any]]:
    """A WHERE condition restricting `col` to the run ids `runs` (None: every run)."""
    if runs is None:
        return "TRUE", []
    return f"{col} IN (SELECT unnest(?::VARCHAR[]))", [list(runs)]


def episode_outcome(resolved: str = "e.resolved") -> str:
    """SQL of an episode's outcome label (vocab.EPISODE_OUTCOMES) from its `resolved` flag."""
    ok, failed, none = EPISODE_OUTCOMES
    return f"CASE WHEN {resolved} THEN '{ok}' WHEN {resolved} = FALSE THEN '{failed}' ELSE '{none}' END"


def quiet(con: duckdb.DuckDBPyConnection) -> None:
    """No progress bar on the server's console for long queries."""
    con.execute("SET enable_progress_bar = false")


def missing_tables(con: duckdb.DuckDBPyConnection, *tables: str) -> list[str]:
    """Those of `tables` that this (possibly older, read-only) store does not have."""
    have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    have |= {r[0] for r in con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    return [t for t in tables if t not in have]
