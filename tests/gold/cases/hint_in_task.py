"""MemUse A.2.2 Influence, None: "An action that simply follows the task instructions or implements
a decision or action made before delivery is explained by that prior source." and Novelty: novelty
compares the entry "with the task, user updates, and visible sources".

The task already names the exact identifier the memory supplies.
"""

from memuse_core.builder import EpisodeBuilder, entry

H = "first_weekday() must return settings.FIRST_DAY_OF_WEEK."
TASK = (
    "tests/test_calendar.py::test_week_start fails: first_weekday() ignores the setting. Make "
    "first_weekday() in src/calendar_utils.py return settings.FIRST_DAY_OF_WEEK."
)


def episode():
    b = EpisodeBuilder("gold-hint-in-task", task=TASK, repo="acme/planner")
    b.host_block("recall", "Relevant memories:\n- " + H, entries=[entry("h-fdow", H)])
    b.step(
        "Read the function.",
        "sed -n 1,6p src/calendar_utils.py",
        "from app import settings\n\ndef first_weekday():\n    return 0",
    )  # 1
    b.step(
        "Return the setting.",
        "sed -i 's/^    return 0$/    return settings.FIRST_DAY_OF_WEEK/' src/calendar_utils.py",
        "",
    )  # 2
    b.step("Run the test.", "pytest tests/test_calendar.py::test_week_start -q", "1 passed in 0.04s")  # 3
    b.final("first_weekday() returns settings.FIRST_DAY_OF_WEEK.")  # 4
    return b.finish(resolved=True)
