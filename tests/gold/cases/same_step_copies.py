"""MemUse A.1.5 "Same-step deliveries" and A.2.1 "Same-input copies do not establish prior
exposure": two identical copies of one entry reach the agent in the same model input.

The host's per-turn recall puts entry E into the system message of call 3 only, and the agent's own
memory search returns the same entry in the tool result that call 3 also consumes. The host copy
is recorded first. The agent reproduces the failure at step 3 and edits at step 4.
"""

from memuse_core.builder import EpisodeBuilder, entry

E = (
    "urllib3 2.x needs OpenSSL 1.1.1+ and the CI image ships OpenSSL 1.0.2; "
    "add urllib3<2 to constraints/ci.txt."
)
TASK = (
    "CI fails in tests/test_tls.py::test_https_get with an SSL error since the last dependency "
    "update. Make the test pass on the CI image."
)


def episode():
    b = EpisodeBuilder("gold-samestep", task=TASK, repo="acme/fetcher")
    b.step("See what is pinned.", "cat requirements.txt", "requests>=2.31\nurllib3>=1.26\n")  # 1
    b.step(
        "Ask memory about the CI SSL error.",
        'memory search "CI SSL error urllib3"',
        "- " + E,
        tool_memory=([entry("e-pin", E)], "search_result"),
    )  # 2
    b.host_block("recall", "Recalled for this turn:\n- " + E, entries=[entry("e-pin", E)])
    b.step(
        "Reproduce the failing test.",
        "python -m pytest tests/test_tls.py -q",
        "E   ImportError: urllib3 v2 only supports OpenSSL 1.1.1+, currently the 'ssl' module is "
        "compiled with 'OpenSSL 1.0.2k-fips  26 Jan 2017'\n1 error in 0.12s",
        exit_code=2,
    )  # 3: consumes both copies
    b.drop_block("recall")  # the per-turn recall changes on the next call
    b.step("Pin urllib3 for CI.", "echo 'urllib3<2' >> constraints/ci.txt", "")  # 4
    b.step(
        "Install with the constraints and re-run.",
        "pip install -q -c constraints/ci.txt -e . && python -m pytest tests/test_tls.py -q",
        "1 passed in 0.35s",
    )  # 5
    b.final("Pinned urllib3<2 for the CI image; test_https_get passes.")  # 6
    return b.finish(resolved=True)
