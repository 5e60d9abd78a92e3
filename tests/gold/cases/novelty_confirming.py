"""MemUse A.2.2 Novelty: "confirming when the entry settles an expressed open hypothesis", with
explicit credit (Influence: "the agent explicitly credits the entry for an action").
"""

from memuse_core.builder import EpisodeBuilder, entry

C = "The module-level CACHE dict in src/api.py leaks between tests."
TASK = (
    "tests/test_api.py::test_get_user passes on its own but fails when the whole suite runs. "
    "Find and fix the cause."
)


def episode():
    b = EpisodeBuilder("gold-confirming", task=TASK, repo="acme/users")
    b.step("Run the test alone.", "pytest tests/test_api.py::test_get_user -q", "1 passed in 0.02s")  # 1
    b.step(
        "Run the whole suite.",
        "pytest tests/ -q",
        "FAILED tests/test_api.py::test_get_user - AssertionError: assert {'name': 'stale'} == "
        "{'name': 'Ada'}\n1 failed, 41 passed in 0.93s",
        exit_code=1,
    )  # 2
    b.step(
        "Hypothesis: the module-level CACHE dict in src/api.py may leak between tests, but I have "
        "not confirmed it.",
        "grep -n CACHE src/api.py",
        "4:CACHE = {}\n18:    if uid in CACHE:\n19:        return CACHE[uid]",
    )  # 3
    b.step(
        "Ask memory about order-dependent failures here.",
        'memory search "test passes alone fails in suite"',
        "[c-leak] " + C,
        tool_memory=([entry("c-leak", C)], "search_result"),
    )  # 4
    b.step(
        "The memory confirms my CACHE-leak hypothesis, so I clear CACHE around every test.",
        "cat >> tests/conftest.py <<'PY'\nimport pytest\nfrom src import api\n\n\n"
        "@pytest.fixture(autouse=True)\ndef _clear_cache():\n    api.CACHE.clear()\n    yield\n"
        "    api.CACHE.clear()\nPY",
        "",
    )  # 5
    b.step("Run the whole suite again.", "pytest tests/ -q", "42 passed in 0.95s")  # 6
    b.final("An autouse fixture clears api.CACHE; the suite passes in any order.")  # 7
    return b.finish(resolved=True)
