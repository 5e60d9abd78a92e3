"""MemUse A.2.2 Referenced: "The agent mentions or quotes the entry using its exposed identifier,
distinctive content, or list position, but no action is established." and Acted on: "A decision
receives credit only when subsequent execution carries it out."

The agent names the entry and says it may follow it later, then fixes the bug another way.
"""

from memuse_core.builder import EpisodeBuilder, entry

F = "Use decimal.Decimal for money totals in src/report.py instead of summing floats."
TASK = (
    "tests/test_report.py::test_totals fails with a float rounding mismatch "
    "(0.30000000000000004 != 0.3). Fix totals() in src/report.py."
)


def episode():
    b = EpisodeBuilder("gold-mention", task=TASK, repo="acme/billing")
    b.step(
        "Reproduce.",
        "pytest tests/test_report.py::test_totals -q",
        "E   assert 0.30000000000000004 == 0.3\n1 failed in 0.02s",
        exit_code=1,
    )  # 1
    b.step(
        "Search memory.",
        'memory search "float rounding totals"',
        "[f-dec] " + F,
        tool_memory=([entry("f-dec", F)], "search_result"),
    )  # 2
    b.step(
        "Memory [f-dec] suggests switching totals() to decimal.Decimal; I may do that later. "
        "First read the function the task names.",
        "sed -n 1,6p src/report.py",
        "def totals(rows):\n    return sum(r.amount for r in rows)",
    )  # 3
    b.step(
        "Round the sum to cents.",
        "sed -i 's/^    return sum(r.amount for r in rows)$/    return round(sum(r.amount for r in rows), 2)/' "
        "src/report.py",
        "",
    )  # 4
    b.step("Re-run.", "pytest tests/test_report.py::test_totals -q", "1 passed in 0.02s")  # 5
    b.final("totals() rounds to cents.")  # 6
    return b.finish(resolved=True)
