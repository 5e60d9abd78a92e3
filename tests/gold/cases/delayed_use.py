"""MemUse A.6.3 / 3.3: delayed use. "Credit windows retain these actions until a later copy takes
over or the episode ends." The host keeps a task recall in the system message on every call; the
agent first acts on it six steps after the first consuming step.
"""

from memuse_core.builder import EpisodeBuilder, entry

M = (
    "In this repo, call Sphinx as `python -m sphinx` in Makefiles; the CI image has no sphinx-build "
    "script on PATH."
)
TASK = "`make build-docs` fails on CI with 'sphinx-build: No such file or directory'. Fix the Makefile."


def episode():
    b = EpisodeBuilder("gold-delayed", task=TASK, repo="acme/docs")
    b.host_block("recall", "User memories:\n- " + M, entries=[entry("m-sphinx", M)])
    b.step(
        "Reproduce.",
        "make build-docs",
        "sphinx-build -b html docs docs/_build\nmake: sphinx-build: No such file or directory\n"
        "make: *** [Makefile:12: build-docs] Error 127",
        exit_code=2,
    )  # 1
    b.step(
        "Read the Makefile.",
        "sed -n 1,14p Makefile",
        "SPHINXBUILD ?= sphinx-build\n\nbuild-docs:\n\t$(SPHINXBUILD) -b html docs docs/_build",
    )  # 2
    b.step("Look at the docs config.", "head -5 docs/conf.py", "project = 'acme'\nextensions = []")  # 3
    b.step(
        "Recent Makefile changes?", "git log --oneline -3 -- Makefile", "77aa001 add build-docs target"
    )  # 4
    b.step("What is in docs/?", "ls docs", "conf.py\nindex.rst")  # 5
    b.step(
        "How does CI call the target?",
        "cat .github/workflows/docs.yml",
        "jobs:\n  docs:\n    steps:\n      - run: make build-docs",
    )  # 6
    b.step(
        "Call Sphinx through the interpreter.",
        "sed -i 's/^SPHINXBUILD ?= sphinx-build$/SPHINXBUILD ?= python -m sphinx/' Makefile",
        "",
    )  # 7
    b.step(
        "Build again.",
        "make build-docs",
        "python -m sphinx -b html docs docs/_build\nRunning Sphinx v7.2.6\nbuild succeeded.\n"
        "The HTML pages are in docs/_build.",
    )  # 8
    b.final("The Makefile calls python -m sphinx.")  # 9
    return b.finish(resolved=True)
