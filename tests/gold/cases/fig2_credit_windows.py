"""Figure 2 of MemUse (3.3 "Credit windows"), as a small coding episode.

A (a search result) is delivered at steps 2 and 4: one span S1 while the first copy stays visible.
B arrives at step 3 (S2). A shorter preview A' of A at step 6 adds nothing beyond the visible A:
S3 gets an empty window (automatic neutral). The harness then drops both copies of A; A's
re-entry at step 10 starts S4 with a fresh prior context, and S1's window ends at step 9.
"""

from memuse_core.builder import EpisodeBuilder, entry

A = "Use dateutil.parser.isoparse instead of datetime.fromisoformat for timestamps with a trailing Z."
A_SHORT = "Use dateutil.parser.isoparse instead of datetime.fromisoformat"
B = "CI runs flake8 with max-line-length 100 before the test job."

TASK = (
    "tests/test_dates.py::test_trailing_z fails: parse_timestamp('2024-05-01T12:00:00Z') raises "
    "ValueError. Fix parse_timestamp in src/dates.py."
)


def episode():
    b = EpisodeBuilder("gold-fig2", task=TASK, repo="acme/timeparse")
    q = 'memory search "fromisoformat trailing Z"'
    b.step(
        "Search memory for the trailing Z error.",
        q,
        f"[A] {A}",
        tool_memory=([entry("A", A)], "search_result"),
    )  # 1
    b.step(
        "Check how CI runs the date tests.",
        'memory search "date tests CI"',
        f"[B] {B}",
        tool_memory=([entry("B", B)], "search_result"),
    )  # 2
    b.step("Search again.", q, f"[A] {A}", tool_memory=([entry("A", A)], "search_result"))  # 3
    b.step(
        "Reproduce the failure.",
        "pytest tests/test_dates.py::test_trailing_z -q",
        "F\n"
        "src/dates.py:12: in parse_timestamp\n"
        "    return datetime.fromisoformat(s)\n"
        "E   ValueError: Invalid isoformat string: '2024-05-01T12:00:00Z'\n"
        "1 failed in 0.04s",
        exit_code=1,
    )  # 4
    b.step(
        "Preview the card.",
        'memory preview "fromisoformat trailing Z"',
        f"preview: {A_SHORT}",
        tool_memory=([entry("A", A_SHORT, version="preview")], "search_preview"),
    )  # 5
    b.step(
        "Switch the parser to isoparse.",
        "sed -i 's/datetime.fromisoformat(s)/dateutil.parser.isoparse(s)/; 1i import dateutil.parser' "
        "src/dates.py",
        "",
    )  # 6
    b.step(
        "Run the failing test.",
        "pytest tests/test_dates.py::test_trailing_z -q",
        "E   ModuleNotFoundError: No module named 'dateutil'\n1 error in 0.03s",
        exit_code=2,
    )  # 7
    b.retract([2, 3, 6, 7])  # the harness drops both search results that carried A (steps 1 and 3)
    b.step(
        "Check the diff.",
        "git diff src/dates.py",
        "+import dateutil.parser\n-    return datetime.fromisoformat(s)\n+    return dateutil.parser.isoparse(s)",
    )  # 8
    b.step("Look the card up again.", q, f"[A] {A}", tool_memory=([entry("A", A)], "search_result"))  # 9
    b.step(
        "The test run failed because python-dateutil is not installed; install it.",
        "pip install -q python-dateutil",
        "Successfully installed python-dateutil-2.9.0 six-1.16.0",
    )  # 10
    b.step(
        "Re-run the failing test.", "pytest tests/test_dates.py::test_trailing_z -q", "1 passed in 0.03s"
    )  # 11
    b.final("parse_timestamp now uses dateutil.parser.isoparse; test_trailing_z passes.")  # 12
    return b.finish(resolved=True)
