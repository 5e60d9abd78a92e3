"""The DuckDB store (DESIGN.md "Store"): connection handling, schema, event writer and readers.

This package is the only place with SQL DDL; each area keeps its queries in its own module here.
"""

from .connection import StoreError, StoreLocked, connect, db_path, open_store
from .reader import export_events, load_episode, load_episodes, store_info
from .writer import blob_hash, iter_blob_texts

__all__ = [
    "StoreError",
    "StoreLocked",
    "blob_hash",
    "connect",
    "db_path",
    "export_events",
    "iter_blob_texts",
    "load_episode",
    "load_episodes",
    "open_store",
    "store_info",
]
