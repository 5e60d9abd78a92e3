"""How busy and how fast the machine is while a benchmark runs, printed beside its tables.

The load average says whether other processes shared the cores. It does not say how fast the cores
themselves are: this project's VM ran the same code at speeds up to about 2x apart on the same day
with a load average near zero (session 14: the rules-judge CLI on the same database took 13.9 s at
18:45, 7.7 s at 19:31 and 6.8 s at about 20:12), which is the host, not our code. So every table also
states fixed, single-threaded calibrations, run in a fresh interpreter (so the caller's heap does
not count): CPU seconds of a register-bound loop, of an allocation- and memory-bound pass over
many small objects, and of `json.loads` of a fixed document, each against this VM's figure at full
speed. Compare a table with another only when their calibrations agree. They are a check, not a
correction: the register-bound loop stayed within 5% while the rules judge's stages moved by 20%
(19:55 against about 20:12, session 14), so a matching calibration does not prove equal speed. The
ratio benchmarks (ingest / json.loads) are far less sensitive to the host.

To measure on idle cores while other work runs on the machine, stop that work for the duration
(for example `kill -STOP` its processes and `kill -CONT` them afterwards): a niced process still
takes a share of the cores and slows the browser and the judge measurably.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time

REFERENCE = {"loop": 0.205, "objects": 0.40, "json": 0.285}
"""CPU seconds of each calibration on this project's VM at full speed (session 14)."""


def _loop() -> float:
    t = time.process_time()
    s = 0
    for i in range(3_000_000):
        s += i * i % 7
    return time.process_time() - t


def _objects() -> float:
    rnd = random.Random(7)
    t = time.process_time()
    xs = [{"k": rnd.random(), "v": (i, str(i))} for i in range(200_000)]
    xs.sort(key=lambda d: d["k"])
    s = 0
    for d in xs:
        s += d["v"][0] & 7
    del xs
    return time.process_time() - t


def _json() -> float:
    blob = json.dumps([{"k": i, "v": "x" * 50, "l": list(range(10))} for i in range(20_000)])
    t = time.process_time()
    for _ in range(10):
        json.loads(blob)
    return time.process_time() - t


def calibration() -> dict[str, float]:
    """Each calibration's CPU seconds in this process, best of three (a stray interruption does
    not count)."""
    return {
        name: min(fn() for _ in range(3))
        for name, fn in (("loop", _loop), ("objects", _objects), ("json", _json))
    }


def describe() -> str:
    """One line: the load average and the calibrations (measured in a fresh interpreter), for the
    head or foot of a table."""
    out = subprocess.run([sys.executable, __file__, "--json"], capture_output=True, text=True, check=True)
    cal = json.loads(out.stdout)
    one, five, fifteen = os.getloadavg()
    speeds = ", ".join(f"{k} {v:.3f} ({v / REFERENCE[k]:.2f}x)" for k, v in cal.items())
    return (
        f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} cores; host calibration, "
        f"CPU-s (x the VM at full speed; over 1 = slower now): {speeds}"
    )


if __name__ == "__main__":
    print(json.dumps(calibration()) if "--json" in sys.argv else describe())
