"""The DuckDB store (DESIGN.md "Store"): connection handling, schema, event writer and readers.

This package is the only one that imports duckdb or holds SQL; each area keeps its queries in its
own module here. Other packages pass a `Connection` around and catch `DatabaseError`.
"""

from .connection import Connection, DatabaseError, StoreError, StoreLocked, connect, db_path, open_store
from .export import export_events, store_info
from .reader import load_episode, load_episodes

__all__ = [
    "Connection",
    "DatabaseError",
    "StoreError",
    "StoreLocked",
    "connect",
    "db_path",
    "export_events",
    "load_episode",
    "load_episodes",
    "open_store",
    "store_info",
]
