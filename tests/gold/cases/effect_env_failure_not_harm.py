"""MemUse A.2.2 Harmed: "Agent-invented identifiers, typos, unavailable tools, and unrelated
environment failures alone do not establish memory-caused harm; corrected attempts are followed to
their eventual result."
"""

from memuse_core.builder import EpisodeBuilder, entry

T = (
    "After editing grammar.txt, regenerate the parser tables with `python tools/gen_tables.py`; the "
    "parser reads src/calc/_tables.py, not grammar.txt."
)
TASK = (
    "I added the `%` operator to grammar.txt but `calc '7 % 3'` still fails with \"unexpected token "
    "'%'\". Make the parser accept it (tests/test_calc.py::test_modulo)."
)


def episode():
    b = EpisodeBuilder("gold-env-failure", task=TASK, repo="acme/calc")
    b.step(
        "Reproduce.",
        "pytest tests/test_calc.py::test_modulo -q",
        "E   calc.ParseError: unexpected token '%'\n1 failed in 0.03s",
        exit_code=1,
    )  # 1
    b.step(
        "Search memory.",
        'memory search "grammar.txt change has no effect"',
        "[t-gen] " + T,
        tool_memory=([entry("t-gen", T)], "search_result"),
    )  # 2
    b.step(
        "Regenerate the tables.",
        "python tools/gen_tables.py",
        'Traceback (most recent call last):\n  File "tools/gen_tables.py", line 3, in <module>\n'
        "    import jinja2\nModuleNotFoundError: No module named 'jinja2'",
        exit_code=1,
    )  # 3
    b.step("Install the generator's dependency.", "pip install -q jinja2", "")  # 4
    b.step("Regenerate again.", "python tools/gen_tables.py", "wrote src/calc/_tables.py (41 states)")  # 5
    b.step("Re-run the test.", "pytest tests/test_calc.py::test_modulo -q", "1 passed in 0.03s")  # 6
    b.final("Regenerated the parser tables; % parses.")  # 7
    return b.finish(resolved=True)
