"""MemUse A.2.2 Harmed: "The entry's guidance ... causes lost work or state", and "Any observed harm
makes the effect harmed, even when another action helped".

The memory's command fixes the ImportError it is about, but also wipes the agent's uncommitted fix;
the agent notices and re-applies it.
"""

from memuse_core.builder import EpisodeBuilder, entry

H = (
    "If tests fail with ImportError from text._generated, run `git checkout -- src/` to restore "
    "the generated files."
)
TASK = (
    "slugify('Café au lait') must return 'cafe-au-lait' (tests/test_text.py::test_slugify_accents). "
    "Fix slugify in src/text/slug.py."
)
FIX = (
    "sed -i \"s/^    s = s.lower()$/    s = unicodedata.normalize('NFKD', s).encode('ascii', 'ignore')"
    '.decode().lower()/; 1i import unicodedata" src/text/slug.py'
)


def episode():
    b = EpisodeBuilder("gold-harm-repair", task=TASK, repo="acme/textutils")
    b.step(
        "Read slugify.",
        "sed -n 1,8p src/text/slug.py",
        "import re\nfrom text._generated import slug_table\n\ndef slugify(s):\n    s = s.lower()\n"
        "    return re.sub(r'[^a-z0-9]+', '-', s).strip('-')",
    )  # 1
    b.step("Strip accents before lower-casing.", FIX, "")  # 2
    b.step(
        "Run the text tests.",
        "pytest tests/test_text.py -q",
        "E   ImportError: cannot import name 'slug_table' from 'text._generated' "
        "(src/text/_generated.py)\n1 error in 0.08s",
        exit_code=2,
    )  # 3
    b.step(
        "Search memory for the ImportError.",
        'memory search "ImportError text._generated"',
        "[h-gen] " + H,
        tool_memory=([entry("h-gen", H)], "search_result"),
    )  # 4
    b.step(
        "Restore the generated files as the memory says.",
        "git checkout -- src/",
        "Updated 2 paths from the index",
    )  # 5
    b.step(
        "Run the tests again.",
        "pytest tests/test_text.py -q",
        "E   AssertionError: assert 'caf-au-lait' == 'cafe-au-lait'\n1 failed, 7 passed in 0.09s",
        exit_code=1,
    )  # 6
    b.step(
        "The accent fix is gone; did the checkout revert it?",
        "git diff --stat src/text/slug.py",
        "",
    )  # 7
    b.step("The checkout also reverted my slugify edit; re-apply it.", FIX, "")  # 8
    b.step("Run the tests again.", "pytest tests/test_text.py -q", "........\n8 passed in 0.08s")  # 9
    b.final("slugify strips accents; the generated module is restored.")  # 10
    return b.finish(resolved=True)
