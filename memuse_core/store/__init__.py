"""The DuckDB store (DESIGN.md "Store"): connection handling, schema, event writer and readers.

This package is the only one that imports duckdb or holds SQL; each area keeps its queries in its
own module here. Other packages pass a `Connection` around and catch `DatabaseError`.

The names below are loaded on first use (PEP 562 `__getattr__`), so importing a module of this
package that needs no database (the event writer in an import worker process, `ingest.parse_worker`)
does not import duckdb.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .connection import Connection, DatabaseError, StoreError, StoreLocked, connect, db_path, open_store
    from .export import export_events, store_info
    from .reader import load_episode, load_episodes

_HOME = {
    "Connection": "connection",
    "DatabaseError": "connection",
    "StoreError": "connection",
    "StoreLocked": "connection",
    "connect": "connection",
    "db_path": "connection",
    "open_store": "connection",
    "export_events": "export",
    "store_info": "export",
    "load_episode": "reader",
    "load_episodes": "reader",
}

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


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value
