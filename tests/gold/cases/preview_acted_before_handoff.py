"""MemUse A.2.2, second allocation rule: "A selecting preview remains selected unless it shaped an
action before the handoff or through content only it exposed."

The agent applies what the preview says before it reads the full card; the full card then adds a
second setting, which the agent also applies.
"""

from memuse_core.builder import EpisodeBuilder, entry

PREVIEW = "pandas read_csv: pass dtype={'zip': str} to keep leading zeros in zip codes"
FULL = PREVIEW + "\nAlso pass keep_default_na=False, or empty zip cells are read as NaN instead of ''."
TASK = "Zip codes lose their leading zeros and empty zips become NaN in load_customers() (src/load.py); tests/test_load.py shows both."


def episode():
    b = EpisodeBuilder("gold-preview-acted", task=TASK, repo="acme/crm")
    b.step(
        "Reproduce.",
        "pytest tests/test_load.py -q",
        "FAILED tests/test_load.py::test_zip_codes - AssertionError: assert '2134' == '02134'\n"
        "FAILED tests/test_load.py::test_empty_zip - AssertionError: assert nan == ''\n2 failed in 0.41s",
        exit_code=1,
    )  # 1
    b.step(
        "Search the experience cards.",
        'exp_search "read_csv leading zeros"',
        f"1. [card-31] {PREVIEW}",
        tool_memory=([entry("card-31", PREVIEW, version="preview", display_key="card-31")], "search_preview"),
    )  # 2
    b.step(
        "Read zip codes as strings.",
        "sed -i \"s/pd.read_csv(path)/pd.read_csv(path, dtype={'zip': str})/\" src/load.py",
        "",
    )  # 3
    b.step(
        "Read the whole card for the empty cells.",
        "exp_read card-31",
        f"[card-31] {FULL}",
        tool_memory=([entry("card-31", FULL, version="full", display_key="card-31")], "full_card"),
    )  # 4
    b.step(
        "Keep empty cells as empty strings.",
        "sed -i \"s/dtype={'zip': str})/dtype={'zip': str}, keep_default_na=False)/\" src/load.py",
        "",
    )  # 5
    b.step("Re-run.", "pytest tests/test_load.py -q", "..\n2 passed in 0.39s")  # 6
    b.final("load_customers reads zip codes as strings and keeps empty cells.")  # 7
    return b.finish(resolved=True)
