"""Shared pytest fixtures: temp DuckDB files and small recorded episodes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def need_real_data() -> Path:
    """The shared real trajectories folder; skips the calling test when it is absent (the only
    reason a real-data test may skip)."""
    if not REAL_DATA.is_dir():
        pytest.skip("../shared/data/real is not available")
    return REAL_DATA


@pytest.fixture
def real_data() -> Path:
    """The shared real trajectories; skips the test when they are absent."""
    return need_real_data()


@pytest.fixture
def import_real(real_data: Path) -> Callable[..., list[Path]]:
    """`import_real(con, *folders)` imports every trajectory under the real-data folders (all of
    ../shared/data/real when none is named) and returns the files imported or already present.

    A file no importer claims (README, CLADDER tables, batch summaries) is not a trajectory and is
    left out. Everything else must import: a rejection or an importer crash fails the test."""
    from memuse_core.ingest import IngestError, detect, expand_paths, ingest_path

    def run(con: Any, *folders: str) -> list[Path]:
        roots = [real_data / f for f in folders] or [real_data]
        for r in roots:
            assert r.is_dir(), f"{r}: real-data folder missing"
        done = []
        for f in expand_paths(roots):
            try:
                imp = detect(f)
            except IngestError:
                continue  # not a trajectory
            res = ingest_path(con, f, importer=imp)
            assert res.status in ("imported", "skipped"), f"{f}: {res.status} {res.error}"
            done.append(f)
        return done

    return run
