"""Progress bars for long work (CLI: tqdm on stderr; callers in the app pass their own callback)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tqdm import tqdm


@contextmanager
def progress_bar(total: int | None, desc: str, unit: str = "it", **kw: Any) -> Iterator[tqdm]:
    """A tqdm bar on stderr, quiet when stderr is not a terminal and MEMUSE_PROGRESS is unset."""

    disable = not (sys.stderr.isatty() or os.environ.get("MEMUSE_PROGRESS"))
    # No monitor thread: the bars are updated by their callers, and a single-threaded command can
    # fork its worker processes (judge/workers.py `start_method`).
    tqdm.monitor_interval = 0
    bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=disable, dynamic_ncols=True, **kw)
    try:
        yield bar
    finally:
        bar.close()
