"""MemUse A.2.2 Novelty: "redundant when its content was already established".

The agent reads the project's export documentation, which states the delimiter rule, before the
memory search returns an entry that repeats it.
"""

from memuse_core.builder import EpisodeBuilder, entry

D = "German (de_DE) CSV exports use ';' as the delimiter because ',' is the decimal separator."
TASK = (
    "CSV exports must use the delimiter that docs/export.md specifies for each locale. "
    "Change write_csv in src/export.py accordingly."
)


def episode():
    b = EpisodeBuilder("gold-redundant", task=TASK, repo="acme/ledger")
    b.step(
        "Read the spec.",
        "cat docs/export.md",
        "## Delimiters\nde_DE and fr_FR exports use ';' because ',' is the decimal separator.\n"
        "All other locales use ','.",
    )  # 1
    b.step(
        "Anything in memory about delimiters?",
        'memory search "csv delimiter locale"',
        "[d-semi] " + D,
        tool_memory=([entry("d-semi", D)], "search_result"),
    )  # 2
    b.step(
        "Read write_csv.",
        "sed -n 1,12p src/export.py",
        "import csv\n\ndef write_csv(rows, fh, locale):\n    w = csv.writer(fh)\n    w.writerows(rows)",
    )  # 3
    b.step(
        "Use ';' for de_DE and fr_FR as the spec says.",
        "sed -i \"s/    w = csv.writer(fh)/    w = csv.writer(fh, delimiter=';' if locale in ('de_DE', "
        "'fr_FR') else ',')/\" src/export.py",
        "",
    )  # 4
    b.step("Run the export tests.", "pytest tests/test_export.py -q", "......\n6 passed in 0.09s")  # 5
    b.final("write_csv follows docs/export.md.")  # 6
    return b.finish(resolved=True)
