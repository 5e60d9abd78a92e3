"""MemUse 3.3 Eligibility: "A delivery with no entries, such as a search that returns nothing, forms
an empty span. A delivery without an attributed consuming step forms a separate unassessable span,
because no later action can be credited to it."

A memory search returns nothing; a later search result is carried only by a model call that
fails (no completed step); the agent carries on without memory.
"""

from memuse_core.builder import EpisodeBuilder, entry

U = "Use `tox -e lint` for the lint job."
TASK = "Fix the typo in the README's install section ('pip instal' -> 'pip install')."


def episode():
    b = EpisodeBuilder("gold-eligibility", task=TASK, repo="acme/readme")
    b.step(
        "Search memory.",
        'memory search "README install typo"',
        "No results.",
        tool_memory=([], "search_result"),
    )  # 1: consumed at 2, no entries
    b.step(
        "Search memory for the lint job.",
        'memory search "lint job"',
        "[u-tox] " + U,
        tool_memory=([entry("u-tox", U)], "search_result"),
    )  # 2: consumed by the failed call only
    b.failed_call()  # the provider returned an error; no step completed
    b.step("Fix the typo.", "sed -i 's/pip instal /pip install /' README.md", "")  # 3
    b.step("Check.", "grep -n 'pip install' README.md", "12:    pip install acme")  # 4
    b.final("Fixed the typo.")  # 5
    return b.finish(resolved=True)
