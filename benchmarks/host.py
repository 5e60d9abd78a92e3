"""How busy and how fast the machine is while a benchmark runs, printed beside its tables.

The load average says whether other processes shared the cores. It does not say how fast the cores
themselves are: this project's VM ran the same code at speeds up to about 2x apart on the same day
with a load average near zero (session 14: the rules-judge CLI on the same database took 13.9 s at
18:45 and 7.7 s at 19:31, and each stage moved by the same factor), which is the host, not our
code. So every table also states a fixed, single-threaded pure-Python calibration: CPU seconds for
the same loop and the same `json.loads` work. Compare a table with another only when their
calibrations agree; the ratio benchmarks (ingest / json.loads) are far less sensitive to it.

To measure on idle cores while other work runs on the machine, stop that work for the duration
(for example `kill -STOP` its processes and `kill -CONT` them afterwards): a niced process still
takes a share of the cores and slows the browser and the judge measurably.
"""

from __future__ import annotations

import json
import os
import time

REFERENCE_LOOP_S = 0.205
"""The calibration loop's CPU seconds on this project's VM in its fast state (session 14)."""

_BLOB = json.dumps([{"k": i, "v": "x" * 50, "l": list(range(10))} for i in range(20_000)])


def calibration() -> tuple[float, float]:
    """(CPU seconds of a fixed pure-Python loop, CPU seconds of ten `json.loads` of a fixed 3 MB
    document), best of three each so a stray interruption does not count."""
    loops, loads = [], []
    for _ in range(3):
        t = time.process_time()
        s = 0
        for i in range(3_000_000):
            s += i * i % 7
        loops.append(time.process_time() - t)
        t = time.process_time()
        for _ in range(10):
            json.loads(_BLOB)
        loads.append(time.process_time() - t)
    return min(loops), min(loads)


def describe() -> str:
    """One line: the load average and the calibration, for the head or foot of a table."""
    loop, loads = calibration()
    one, five, fifteen = os.getloadavg()
    return (
        f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} cores; "
        f"host speed: calibration loop {loop:.3f} CPU-s (reference {REFERENCE_LOOP_S:.3f}; "
        f"{loop / REFERENCE_LOOP_S:.2f}x), json.loads {loads:.3f} CPU-s"
    )


if __name__ == "__main__":
    print(describe())
