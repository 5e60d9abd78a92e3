"""MemUse 3.4 Attribution: "General advice, such as inspecting code or running tests, also matches
ordinary task execution. An action matching such advice therefore requires evidence linking a
specific detail of the action to the entry." (A.2.2: "Routine practices such as reproducing
failures or running tests qualify only when an action uses a detail supplied solely by memory.")
"""

from memuse_core.builder import EpisodeBuilder, entry

G = "Always reproduce the failing test before editing, and run the full test suite before submitting."
TASK = (
    "page_count() in src/pager.py drops the last page when the item count is a multiple of the page "
    "size (tests/test_pager.py::test_exact_multiple). Fix it."
)


def episode():
    b = EpisodeBuilder("gold-general-advice", task=TASK, repo="acme/pager")
    b.host_block("recall", "Memories:\n- " + G, entries=[entry("g-habit", G)])
    b.step(
        "Reproduce.",
        "pytest tests/test_pager.py::test_exact_multiple -q",
        "E   assert 2 == 3\n1 failed in 0.02s",
        exit_code=1,
    )  # 1
    b.step(
        "Read page_count.",
        "sed -n 1,4p src/pager.py",
        "def page_count(n, size):\n    return max(1, (n - 1) // size)",
    )  # 2
    b.step(
        "Use ceiling division.",
        "sed -i 's#    return max(1, (n - 1) // size)#    return max(1, (n + size - 1) // size)#' src/pager.py",
        "",
    )  # 3
    b.step("Run the test suite.", "pytest -q", "57 passed in 2.31s")  # 4
    b.final("page_count uses ceiling division.")  # 5
    return b.finish(resolved=True)
