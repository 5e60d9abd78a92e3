"""MemUse A.2.2, third allocation rule: "Third, action anchors must fall inside the credit window of
the entry."

Entry Q arrives in a search result at step 2 and is not used while its window is open. The harness
drops the old search result; the agent searches again and Q re-enters at step 6 (a new span with a
fresh prior context, 3.3), which ends the first window at step 5. The agent uses Q at step 6.
"""

from memuse_core.builder import EpisodeBuilder, entry

Q = "data/customers.csv is cp1252-encoded; open it with encoding='cp1252'."
TASK = (
    "The nightly import crashes with UnicodeDecodeError on data/customers.csv. "
    "Fix load_csv in src/importer.py."
)


def episode():
    b = EpisodeBuilder("gold-alloc3", task=TASK, repo="acme/crm")
    b.step(
        "Search memory.",
        'memory search "customers.csv UnicodeDecodeError"',
        "[q-enc] " + Q,
        tool_memory=([entry("q-enc", Q)], "search_result"),
    )  # 1
    b.step(
        "Reproduce the crash.",
        "python -m importer data/customers.csv",
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 1043: invalid "
        "continuation byte",
        exit_code=1,
    )  # 2
    b.step(
        "Read the loader.",
        "sed -n 1,12p src/importer.py",
        "import csv\n\ndef load_csv(path):\n    with open(path, newline='') as fh:\n"
        "        return list(csv.DictReader(fh))",
    )  # 3
    b.step(
        "Recent changes?", "git log --oneline -3 -- src/importer.py", "9e8d7c6 read customers as dicts"
    )  # 4
    b.retract([2, 3])  # the harness trims the old search call and its result
    b.step(
        "Search memory again.",
        'memory search "UnicodeDecodeError customers.csv"',
        "[q-enc] " + Q,
        tool_memory=([entry("q-enc", Q)], "search_result"),
    )  # 5
    b.step(
        "Open the file as cp1252.",
        "sed -i \"s/open(path, newline='')/open(path, newline='', encoding='cp1252')/\" src/importer.py",
        "",
    )  # 6
    b.step("Run the import again.", "python -m importer data/customers.csv", "imported 1204 rows")  # 7
    b.final("load_csv reads the file as cp1252; the import works.")  # 8
    return b.finish(resolved=True)
