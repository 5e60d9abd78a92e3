"""MemUse A.2.2 Observed effect, No effect: "Affirmative evidence shows that the action made no
difference and added no work." (3.4: "unlike influence none, it presupposes established use")

Before the memory arrives the agent plans one more loop of test runs; it adds the memory's flag to
that planned run, and the failure pattern is the same as without the flag.
"""

from memuse_core.builder import EpisodeBuilder, entry

N = "Intermittent test failures in this repo come from pytest-randomly; run pytest with -p no:randomly."
TASK = "tests/test_sort.py::test_stable_order fails intermittently. Find and fix the cause in src/sorting.py."
LOOP = "for i in 1 2 3 4 5; do pytest {flags}tests/test_sort.py -q 2>&1 | tail -1; done"


def episode():
    b = EpisodeBuilder("gold-no-effect", task=TASK, repo="acme/sorting")
    b.step(
        "Run the test five times.",
        LOOP.format(flags=""),
        "1 passed in 0.01s\n1 failed in 0.02s\n1 passed in 0.01s\n1 failed in 0.02s\n1 passed in 0.01s",
    )  # 1
    b.step(
        "Next I will run the same loop once more with -x to see the failing assertion, then read "
        "the sort key in src/sorting.py. First check memory for known flakiness.",
        'memory search "intermittent test failure"',
        "[n-rand] " + N,
        tool_memory=([entry("n-rand", N)], "search_result"),
    )  # 2
    b.step(
        "Running the planned loop, with -p no:randomly added as the memory suggests.",
        LOOP.format(flags="-p no:randomly -x "),
        "1 passed in 0.01s\nE   AssertionError: assert ['b', 'a'] == ['a', 'b']\n1 passed in 0.01s\n"
        "E   AssertionError: assert ['b', 'a'] == ['a', 'b']\n1 passed in 0.01s",
    )  # 3
    b.step(
        "As planned, read the sort key.",
        "sed -n 1,4p src/sorting.py",
        "def order(items):\n    return sorted(items, key=lambda i: hash(i.name))",
    )  # 4
    b.step(
        "hash() of a str changes between runs; sort by the name itself.",
        "sed -i 's/key=lambda i: hash(i.name)/key=lambda i: i.name/' src/sorting.py",
        "",
    )  # 5
    b.step(
        "Run the loop again.",
        LOOP.format(flags=""),
        "1 passed in 0.01s\n1 passed in 0.01s\n1 passed in 0.01s\n1 passed in 0.01s\n1 passed in 0.01s",
    )  # 6
    b.final("order() sorts by name; the test is stable.")  # 7
    return b.finish(resolved=True)
