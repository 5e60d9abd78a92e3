"""Shared pytest fixtures: temp DuckDB files and small recorded episodes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REAL_DATA = (ROOT / ".." / "shared" / "data" / "real").resolve()

os.environ.setdefault("MEMUSE_PROGRESS", "")


@pytest.fixture(autouse=True)
def _restore_main_module():
    """AppTest installs the script it ran as `sys.modules["__main__"]` and leaves it there; a
    later test that starts spawn-based worker processes would make every child re-import that
    (deleted, Streamlit-using) script and the pool would respawn children forever."""
    import sys

    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture
def db_file(tmp_path: Path) -> Path:
    """Path of a fresh (not yet created) DuckDB file."""
    return tmp_path / "memuse.duckdb"


@pytest.fixture
def real_data() -> Path:
    """The shared real trajectories; skips the test when they are absent."""
    if not REAL_DATA.is_dir():
        pytest.skip("../shared/data/real is not available")
    return REAL_DATA
