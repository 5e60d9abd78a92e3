"""MemUse 3.4 Information quality: "Content is novel when it adds new information", and A.4.1:
"Entries with influence none receive the usage label ignored." A relevant, novel entry that the
agent never uses (it fixes the bug another way).
"""

from memuse_core.builder import EpisodeBuilder, entry

N = "Compute durations as (end - start).total_seconds() on full datetime objects."
TASK = (
    "The run report prints negative durations for runs that cross midnight. Fix elapsed() in src/timing.py."
)


def episode():
    b = EpisodeBuilder("gold-novel", task=TASK, repo="acme/runs")
    b.step(
        "Read elapsed().",
        "sed -n 1,8p src/timing.py",
        "def elapsed(start, end):\n"
        "    d = (end.hour * 3600 + end.minute * 60 + end.second) - "
        "(start.hour * 3600 + start.minute * 60 + start.second)\n"
        "    return d",
    )  # 1
    b.step(
        "Search memory.",
        'memory search "negative duration midnight"',
        "[n-td] " + N,
        tool_memory=([entry("n-td", N)], "search_result"),
    )  # 2
    b.step(
        "Wrap negative values around one day.",
        "sed -i 's/^    return d$/    return d + 86400 if d < 0 else d/' src/timing.py",
        "",
    )  # 3
    b.step("Run the timing tests.", "pytest tests/test_timing.py -q", "....\n4 passed in 0.03s")  # 4
    b.final("elapsed() wraps around midnight.")  # 5
    return b.finish(resolved=True)
