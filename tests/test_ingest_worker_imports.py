"""A parse worker of the parallel ingest (`ingest.parse_worker`) imports only what parsing needs:
no duckdb (the parent owns the one connection) and no pandas (pyarrow's list conversion would
import it; the worker refuses the import). Each spawned worker pays for its imports again, so
they are checked in a fresh interpreter, as a worker starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules_after(code: str) -> dict[str, bool]:
    probe = (
        f"import sys\n{code}\n"
        "import json\n"
        "print(json.dumps({m: m in sys.modules for m in ('duckdb', 'pandas', 'memuse_core.store.connection')}))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_the_worker_module_imports_neither_duckdb_nor_pandas() -> None:
    got = _modules_after("import memuse_core.ingest.parse_worker")
    assert got == {"duckdb": False, "pandas": False, "memuse_core.store.connection": False}


def test_the_parallel_parent_still_gets_the_store() -> None:
    got = _modules_after("import memuse_core.ingest.parallel")
    assert got["duckdb"] and got["memuse_core.store.connection"]


def test_a_worker_turns_rows_into_arrow_without_pandas() -> None:
    """A worker's first Arrow batch would import pandas through pyarrow; with the import blocked
    the batch is built all the same (and equals the one a normal process builds)."""
    code = (
        "from memuse_core.ingest.parse_worker import block_pandas\n"
        "block_pandas()\n"
        "from memuse_core.store.arrow_rows import rows_to_arrow\n"
        "t = rows_to_arrow('blobs', [(1, 'a'), (-2, None)])\n"
        "assert t.to_pylist() == [{'hash': 1, 'text': 'a'}, {'hash': -2, 'text': None}], t\n"
    )
    assert _modules_after(code)["pandas"] is False


def test_the_store_package_names_load_on_first_use() -> None:
    code = "import memuse_core.store as s\nassert 'duckdb' not in sys.modules\nassert callable(s.connect)"
    assert _modules_after(code)["duckdb"] is True
