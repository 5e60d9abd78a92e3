"""MemUse A.2.2 Relevance: "For an account of another failure, the text must supply a shared cause,
failure mechanism, or applicable action. Shared topics, symptoms, or identifiers alone do not
establish that connection."

The memory is about an old leap-day bug in the same function the task is about.
"""

from memuse_core.builder import EpisodeBuilder, entry

P = (
    "parse_timestamp: the 2019 crash on 2020-02-29 came from a hand-written leap-year check; "
    "it was replaced by calendar.isleap."
)
TASK = (
    "parse_timestamp('2024-05-01T12:00:00+05:30') returns a naive datetime; it must keep the UTC "
    "offset. Fix src/dates.py."
)


def episode():
    b = EpisodeBuilder("gold-shared-id", task=TASK, repo="acme/timeparse")
    b.step(
        "Search memory for the function.",
        'memory search "parse_timestamp"',
        "[p-leap] " + P,
        tool_memory=([entry("p-leap", P)], "search_result"),
    )  # 1
    b.step(
        "Read the function.",
        "sed -n 1,6p src/dates.py",
        "from datetime import datetime\n\ndef parse_timestamp(s):\n    dt = datetime.fromisoformat(s)\n"
        "    return dt.replace(tzinfo=None)",
    )  # 2
    b.step(
        "Keep the offset.",
        "sed -i 's/^    return dt.replace(tzinfo=None)$/    return dt/' src/dates.py",
        "",
    )  # 3
    b.step("Run the date tests.", "pytest tests/test_dates.py -q", ".......\n7 passed in 0.05s")  # 4
    b.final("parse_timestamp keeps the UTC offset.")  # 5
    return b.finish(resolved=True)
