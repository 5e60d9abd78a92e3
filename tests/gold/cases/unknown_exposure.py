"""MemUse 3.3 "Exposed text and prior context": "The judge always sees the placement text. ... For
unknown exposure, it does not receive the stored value." and A.2.1: "a withheld-value marker when
exposure is unknown".

The memory system did not record the entry's stored value (exposure unknown), but the placement
text that the agent received is recorded and proven, and the agent acts on it.
"""

from memuse_core.builder import EpisodeBuilder
from memuse_core.events import Entry

PLACED = (
    "- The CI checkout is read-only; run pytest with -p no:cacheprovider so it does not write .pytest_cache."
)
TASK = (
    "The CI job `unit` fails: pytest crashes with OSError: [Errno 30] Read-only file system: "
    "'.pytest_cache'. Make the job pass (the job runs ci/unit.sh)."
)


def episode():
    b = EpisodeBuilder("gold-unknown", task=TASK, repo="acme/lib")
    b.step(
        "Reproduce in the CI container.",
        "sh ci/unit.sh",
        "OSError: [Errno 30] Read-only file system: '/src/.pytest_cache'",
        exit_code=1,
    )  # 1
    b.step(
        "Search memory.",
        'memory search "pytest read-only file system"',
        PLACED,
        tool_memory=(
            [
                Entry(
                    namespace="mem0:acme/lib", item_id="m-ro", id_scheme="mem0-uuid", version="3", value=None
                )
            ],
            "search_result",
        ),
    )  # 2
    b.step("Read the job script.", "cat ci/unit.sh", "#!/bin/sh\nset -e\npython -m pytest tests/")  # 3
    b.step(
        "Disable the cache plugin in the job.",
        "sed -i 's#python -m pytest tests/#python -m pytest -p no:cacheprovider tests/#' ci/unit.sh",
        "",
    )  # 4
    b.step("Run the job again.", "sh ci/unit.sh", ".......................\n23 passed in 1.20s")  # 5
    b.final("ci/unit.sh runs pytest without the cache plugin.")  # 6
    return b.finish(resolved=True)
