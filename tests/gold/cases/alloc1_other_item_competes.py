"""MemUse A.2.2, first allocation rule: "other items already present in the agent's input are
competing sources".

Item X (host recall, visible from step 1) and, later, item Y (a search result) state the same
specific setting. The agent acts once, after Y arrives, naming neither.
"""

from memuse_core.builder import EpisodeBuilder, entry

X = "Tests in this repo need DJANGO_SETTINGS_MODULE=tests.settings_sqlite."
Y = "Run the tests with DJANGO_SETTINGS_MODULE=tests.settings_sqlite."
TASK = (
    "Fix EmailField.clean in src/forms.py so that tests/test_forms.py::test_email_normalized passes "
    "(addresses must be lower-cased)."
)


def episode():
    b = EpisodeBuilder("gold-alloc1", task=TASK, repo="acme/shop")
    b.host_block("recall", "Memories about this repository:\n- " + X, entries=[entry("x-settings", X)])
    b.step(
        "Run the failing test first.",
        "pytest tests/test_forms.py -q",
        "E   django.core.exceptions.ImproperlyConfigured: Requested setting INSTALLED_APPS, but settings "
        "are not configured.\n1 error in 0.31s",
        exit_code=2,
    )  # 1
    b.step(
        "Read the field.",
        "sed -n 1,20p src/forms.py",
        "class EmailField(forms.CharField):\n    def clean(self, value):\n        value = super().clean(value)\n"
        "        return value.strip()",
    )  # 2
    b.step(
        "Lower-case the address.",
        "sed -i 's/        return value.strip()/        return value.strip().lower()/' src/forms.py",
        "",
    )  # 3
    b.step(
        "The tests could not start; look for how they are configured.",
        'memory search "ImproperlyConfigured settings tests"',
        "[y-settings] " + Y,
        tool_memory=([entry("y-settings", Y)], "search_result"),
    )  # 4
    b.step(
        "Run the tests again.",
        "DJANGO_SETTINGS_MODULE=tests.settings_sqlite pytest tests/test_forms.py -q",
        ".........\n9 passed in 0.84s",
    )  # 5
    b.final("EmailField.clean lower-cases addresses; the form tests pass.")  # 6
    return b.finish(resolved=True)
