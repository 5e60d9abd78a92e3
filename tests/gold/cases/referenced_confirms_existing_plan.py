"""MemUse A.2.2 Referenced: "A mention that merely confirms an existing plan remains referenced."

The agent decides to run ruff's fixer before the memory arrives; the memory says the same, the
agent mentions it and carries out its own plan.
"""

from memuse_core.builder import EpisodeBuilder, entry

L = "Fix F401 unused-import errors with `ruff check --fix`."
TASK = "`make lint` fails on CI: ruff reports F401 unused imports in src/cli.py. Fix the lint errors."


def episode():
    b = EpisodeBuilder("gold-confirm-plan", task=TASK, repo="acme/tool")
    b.step(
        "Reproduce.",
        "make lint",
        "src/cli.py:3:8: F401 [*] `os` imported but unused\n"
        "src/cli.py:5:20: F401 [*] `typing.Any` imported but unused\n"
        "Found 2 errors.\n[*] 2 fixable with the `--fix` option.",
        exit_code=1,
    )  # 1
    b.step(
        "Plan: let ruff remove them with `ruff check --fix src/cli.py`. Check the ruff version first.",
        "ruff --version",
        "ruff 0.4.4",
    )  # 2
    b.step(
        "Any repo-specific lint advice in memory?",
        'memory search "ruff F401"',
        "[l-fix] " + L,
        tool_memory=([entry("l-fix", L)], "search_result"),
    )  # 3
    b.step(
        "Memory [l-fix] agrees with my plan; running the fixer.",
        "ruff check --fix src/cli.py",
        "Found 2 errors (2 fixed, 0 remaining).",
    )  # 4
    b.step("Lint again.", "make lint", "All checks passed!")  # 5
    b.final("Removed the unused imports.")  # 6
    return b.finish(resolved=True)
