"""Shared pytest fixtures: temp DuckDB files and small recorded episodes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REAL_DATA = (ROOT / ".." / "shared" / "data" / "real").resolve()

os.environ.setdefault("MEMUSE_PROGRESS", "")


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
