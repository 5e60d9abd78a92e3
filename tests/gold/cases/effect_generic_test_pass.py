"""MemUse A.2.2 Observed effect, Improved: "Successful execution, a generic pass count, or
submission alone is insufficient."

The agent applies the memory's remedy, then runs only an unrelated test file (the CLI tests, which
never touch the profile cache) and submits.
"""

from memuse_core.builder import EpisodeBuilder, entry

G = "Call cache.delete(f'profile:{uid}') in update_profile() right after db.save()."
TASK = (
    "After a user edits their profile, the old profile is served for up to an hour. "
    "Fix the cache handling in src/profile_cache.py."
)


def episode():
    b = EpisodeBuilder("gold-generic", task=TASK, repo="acme/social")
    b.step(
        "Read the cache module.",
        "sed -n 1,20p src/profile_cache.py",
        "TTL = 3600\n\ndef get_profile(uid):\n    key = f'profile:{uid}'\n"
        "    return cache.get(key) or _load(uid)\n\ndef update_profile(uid, data):\n    db.save(uid, data)",
    )  # 1
    b.step(
        "Search memory.",
        'memory search "stale profile cache"',
        "[g-evict] " + G,
        tool_memory=([entry("g-evict", G)], "search_result"),
    )  # 2
    b.step(
        "Invalidate the cached profile on update.",
        "sed -i \"s/^    db.save(uid, data)$/    db.save(uid, data)\\n    cache.delete(f'profile:{uid}')/\" "
        "src/profile_cache.py",
        "",
    )  # 3
    b.step("Run the tests.", "pytest tests/test_cli.py -q", "........\n8 passed in 0.21s")  # 4
    b.final("Added cache invalidation to update_profile; tests pass.")  # 5
    return b.finish(resolved=None)
