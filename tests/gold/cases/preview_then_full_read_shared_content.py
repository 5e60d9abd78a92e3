"""MemUse A.2.2, second allocation rule: "Second, shared content is assigned to a selected fuller
delivery." The agent previews a card, reads the full card by its identifier, and then uses only
content that the preview also showed; the preview is still visible when it acts.
"""

from memuse_core.builder import EpisodeBuilder, entry

PREVIEW = "Django: stream large exports with QuerySet.iterator(chunk_size=2000) instead of .all()"
FULL = (
    PREVIEW
    + "\n.all() caches every row of the queryset in memory; iterator() streams rows without caching them."
)
TASK = (
    "`manage.py export_orders` runs out of memory on the production-size fixture "
    "(tests/test_export.py::test_big_export_memory). Fix orders/export.py."
)


def episode():
    b = EpisodeBuilder("gold-preview-shared", task=TASK, repo="acme/shopdjango")
    b.step(
        "Reproduce.",
        "pytest tests/test_export.py::test_big_export_memory -q",
        "E   AssertionError: peak memory 2.1 GB > limit 512 MB\n1 failed in 41.2s",
        exit_code=1,
    )  # 1
    b.step(
        "Search the experience cards.",
        'exp_search "django export out of memory"',
        f"1. [card-77] {PREVIEW}",
        tool_memory=([entry("card-77", PREVIEW, version="preview", display_key="card-77")], "search_preview"),
    )  # 2
    b.step(
        "Read the card.",
        "exp_read card-77",
        f"[card-77] {FULL}",
        tool_memory=([entry("card-77", FULL, version="full", display_key="card-77")], "full_card"),
    )  # 3
    b.step(
        "Find the queryset.",
        "grep -n 'objects.all()' orders/export.py",
        "14:    for order in Order.objects.all():",
    )  # 4
    b.step(
        "Stream the rows.",
        "sed -i '14s/Order.objects.all()/Order.objects.all().iterator(chunk_size=2000)/' orders/export.py",
        "",
    )  # 5
    b.step(
        "Re-run.",
        "pytest tests/test_export.py::test_big_export_memory -q",
        "1 passed in 38.7s (peak memory 180 MB)",
    )  # 6
    b.final("export_orders streams the queryset.")  # 7
    return b.finish(resolved=True)
