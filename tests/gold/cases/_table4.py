"""The attribution example of MemUse A.2.3 (Table 4), shared by its three cases.

"An entry stating that fetch() requires a backoff delay between retries is first consumed at step 6.
At step 7, the agent adds the delay without mentioning the entry. Only the prior record at step 4
varies across the three cases."

The entry is host-scheduled (inserted into the system message from step 6 on), so no agent search
query precedes it; step 4 is the only record that differs between the cases.
"""

from memuse_core.builder import EpisodeBuilder, entry

ENTRY = "fetch() requires a backoff delay between retries."
TASK = (
    "tests/test_client.py::test_fetch_retries_on_503 fails: fetch() gives up after three 503 "
    "responses from the mock server. Fix src/client.py so that the test passes."
)


def table4_episode(episode_id: str, step4_thought: str):
    b = EpisodeBuilder(episode_id, task=TASK, repo="acme/httpclient")
    b.step(
        "Reproduce the failure.",
        "pytest tests/test_client.py::test_fetch_retries_on_503 -q",
        "E   client.FetchError: gave up after 3 attempts (503, 503, 503) in 0.002s\n1 failed in 0.05s",
        exit_code=1,
    )  # 1
    b.step(
        "Read fetch().",
        "sed -n 1,30p src/client.py",
        "import requests\n\n"
        "class FetchError(Exception):\n    pass\n\n"
        "def fetch(url, retries=3):\n"
        "    codes = []\n"
        "    for attempt in range(retries):\n"
        "        resp = requests.get(url, timeout=5)\n"
        "        if resp.status_code != 503:\n"
        "            return resp\n"
        "        codes.append(resp.status_code)\n"
        "    raise FetchError(f'gave up after {retries} attempts {tuple(codes)}')",
    )  # 2
    b.step(
        "Find the callers of fetch().",
        "grep -rn 'fetch(' src/ | head",
        "src/client.py:6:def fetch(url, retries=3):",
    )  # 3
    b.step(step4_thought, "git log --oneline -3 -- src/client.py", "a1b2c3d add fetch() with retries")  # 4
    b.step(
        "Look at the test's mock server.", "grep -n 'class' tests/test_client.py", "4:class Flaky503Server:"
    )  # 5
    b.host_block(
        "recall",
        "Relevant memories:\n- " + ENTRY,
        entries=[entry("m-backoff", ENTRY)],
    )
    b.step(
        "Check the imports of the client module.",
        "sed -n 1,3p src/client.py",
        "import requests\n",
    )  # 6: first consuming step of the entry
    b.step(
        "Add a delay between the attempts.",
        "sed -i 's/^import requests$/import time\\nimport requests/; "
        "s/^        codes.append(resp.status_code)$/        codes.append(resp.status_code)\\n"
        "        time.sleep(0.1 * 2 ** attempt)/' src/client.py",
        "",
    )  # 7
    b.step(
        "Run the failing test again.",
        "pytest tests/test_client.py::test_fetch_retries_on_503 -q",
        "1 passed in 0.31s",
    )  # 8
    b.final("fetch() now waits between retries; test_fetch_retries_on_503 passes.")  # 9
    return b.finish(resolved=True)
