"""MemUse A.2.2, second allocation rule, without selection: "The same convention applies when a
wider delivery takes over the window of an earlier visible copy, even without selection. The
earlier copy is then excluded as a competing source for shared content".

The agent's memory search shows entry K clipped to its first 59 characters (a search tool that
truncates results). Three steps later the host's recall inserts the whole of K into the system
message, while the clipped copy is still visible. The agent then applies the setting that both
copies show.
"""

from memuse_core.builder import EpisodeBuilder, entry

K = (
    "Set retry_on_timeout=True on the Redis client: with the default (False) CacheClient.get "
    "raises TimeoutError under load."
)
CLIPPED = K[:59] + "…"
TASK = (
    "tests/test_cache.py::test_get_under_load fails with redis.exceptions.TimeoutError. Make "
    "CacheClient in src/cache.py robust to these timeouts."
)


def episode():
    b = EpisodeBuilder("gold-alloc2", task=TASK, repo="acme/cachesvc")
    b.step(
        "Search memory for the timeout.",
        'memory search "redis TimeoutError"',
        "[k-redis] " + CLIPPED,
        tool_memory=([entry("k-redis", K)], "search_result"),
    )  # 1: consumed at 2, exposure clipped
    b.step(
        "Reproduce.",
        "pytest tests/test_cache.py::test_get_under_load -q",
        "E   redis.exceptions.TimeoutError: Timeout reading from socket\n1 failed in 2.01s",
        exit_code=1,
    )  # 2
    b.step(
        "Read the client.",
        "sed -n 1,12p src/cache.py",
        "import redis\n\nclass CacheClient:\n    def __init__(self, url):\n"
        "        self._r = redis.Redis.from_url(url, socket_timeout=0.5)\n\n"
        "    def get(self, key):\n        return self._r.get(key)",
    )  # 3
    b.step(
        "Who else sets socket_timeout?",
        "grep -rn socket_timeout src/",
        "src/cache.py:5:        self._r = redis.Redis.from_url(url, socket_timeout=0.5)",
    )  # 4
    b.host_block("recall", "Relevant memories:\n- " + K, entries=[entry("k-redis", K)])
    b.step(
        "Check the recent history.", "git log --oneline -2 -- src/cache.py", "f00d123 use socket_timeout 0.5"
    )  # 5
    b.step(
        "Enable retries on timeout.",
        "sed -i 's/socket_timeout=0.5)/socket_timeout=0.5, retry_on_timeout=True)/' src/cache.py",
        "",
    )  # 6
    b.step("Re-run the test.", "pytest tests/test_cache.py::test_get_under_load -q", "1 passed in 0.62s")  # 7
    b.final("CacheClient retries on socket timeouts; test_get_under_load passes.")  # 8
    return b.finish(resolved=True)
