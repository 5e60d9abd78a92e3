"""MemUse A.2.2 Harmed: "This includes a memory-directed detour or change that the agent abandons or
corrects without using any finding from it."

The memory names the wrong cache. The agent removes the template cache block as told, runs an
unrelated template test file (which passes), then finds the real cause by reading the service
code, reverts the template change and fixes the service.
"""

from memuse_core.builder import EpisodeBuilder, entry

S = (
    "Stale profile pages come from the template fragment cache: remove the {% cache 600 profile %} "
    "block from templates/profile.html."
)
TASK = (
    "After a user edits their profile, GET /profile/<id> keeps returning the old name. "
    "tests/test_profile.py::test_edit_visible_immediately reproduces it. Fix it."
)


def episode():
    b = EpisodeBuilder("gold-detour", task=TASK, repo="acme/social")
    b.step(
        "Reproduce.",
        "pytest tests/test_profile.py::test_edit_visible_immediately -q",
        "E   AssertionError: assert 'Old Name' == 'New Name'\n1 failed in 0.12s",
        exit_code=1,
    )  # 1
    b.step(
        "Search memory.",
        'memory search "stale profile after edit"',
        "[s-frag] " + S,
        tool_memory=([entry("s-frag", S)], "search_result"),
    )  # 2
    b.step(
        "Remove the fragment cache block.",
        "sed -i '/{% cache 600 profile %}/d; /{% endcache %}/d' templates/profile.html",
        "",
    )  # 3
    b.step(
        "Run the template tests.", "pytest tests/test_templates.py -q", "............\n12 passed in 0.40s"
    )  # 4
    b.step(
        "Read how the service caches profiles.",
        "grep -n 'cache\\|TTL' src/profile_service.py",
        "5:PROFILE_TTL = 3600\n22:    cached = cache.get(f'profile:{uid}')\n"
        "31:def update_profile(uid, data):\n32:    db.save(uid, data)",
    )  # 5
    b.step(
        "update_profile never invalidates the service cache (TTL 3600): that is the real cause. "
        "The template edit was not needed; revert it.",
        "git checkout -- templates/profile.html",
        "Updated 1 path from the index",
    )  # 6
    b.step(
        "Invalidate on update.",
        "sed -i \"32a\\    cache.delete(f'profile:{uid}')\" src/profile_service.py",
        "",
    )  # 7
    b.step(
        "Re-run the reproduction.",
        "pytest tests/test_profile.py::test_edit_visible_immediately -q",
        "1 passed in 0.11s",
    )  # 8
    b.final("update_profile now invalidates the cached profile.")  # 9
    return b.finish(resolved=True)
