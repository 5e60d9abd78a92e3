"""MemUse A.1.5 ("a full read at a later step that contains the text of an earlier preview ends the
preview window immediately before the full read") and A.2.2 Selected / second allocation rule
("Second, shared content is assigned to a selected fuller delivery").

A MemGovern-style search shows two card previews; the agent reads the full card of the first one
by its identifier (a separately recorded delivery) and applies it.
"""

from memuse_core.builder import EpisodeBuilder, entry

P1 = "linkcheck: HEAD hits TooManyRedirects -> retry the request with GET"
P2 = "linkcheck: anchors inside redirected pages are not checked"
FULL = (
    P1 + "\nSome servers loop forever on HEAD. In sphinx/builders/linkcheck.py, check_uri(), catch "
    "requests.exceptions.TooManyRedirects together with HTTPError around the HEAD request and fall "
    "back to a GET request."
)
TASK = (
    "linkcheck reports https://example.org/loop as broken (TooManyRedirects) although the page opens "
    "in a browser. tests/test_build_linkcheck.py::test_TooManyRedirects_on_HEAD reproduces it."
)


def episode():
    b = EpisodeBuilder("gold-preview-full", task=TASK, repo="sphinx-doc/sphinx")
    b.step(
        "Reproduce.",
        "pytest tests/test_build_linkcheck.py::test_TooManyRedirects_on_HEAD -q",
        "E   AssertionError: assert 'broken' == 'working'\n1 failed in 1.20s",
        exit_code=1,
    )  # 1
    b.step(
        "Search the experience cards.",
        'exp_search "linkcheck TooManyRedirects"',
        f"1. [card-8131] {P1}\n2. [card-5521] {P2}",
        tool_memory=(
            [
                entry("card-8131", P1, version="preview", display_key="card-8131"),
                entry("card-5521", P2, version="preview", display_key="card-5521"),
            ],
            "search_preview",
        ),
    )  # 2
    b.step(
        "Read the first card.",
        "exp_read card-8131",
        f"[card-8131] {FULL}",
        tool_memory=([entry("card-8131", FULL, version="full", display_key="card-8131")], "full_card"),
    )  # 3
    b.step(
        "Find the HEAD request handling.",
        "grep -n 'except HTTPError' sphinx/builders/linkcheck.py",
        "172:                except HTTPError:",
    )  # 4
    b.step(
        "Fall back to GET on TooManyRedirects.",
        "sed -i '172s/except HTTPError:/except (HTTPError, TooManyRedirects):/; "
        "s/^from requests.exceptions import HTTPError$/from requests.exceptions import HTTPError, "
        "TooManyRedirects/' sphinx/builders/linkcheck.py",
        "",
    )  # 5
    b.step(
        "Re-run the test.",
        "pytest tests/test_build_linkcheck.py::test_TooManyRedirects_on_HEAD -q",
        "1 passed in 1.05s",
    )  # 6
    b.final("linkcheck falls back to GET when HEAD loops.")  # 7
    return b.finish(resolved=True)
