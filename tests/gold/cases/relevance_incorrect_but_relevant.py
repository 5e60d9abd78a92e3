"""MemUse A.2.2 Relevance: "A stated cause, diagnosis, or remedy for the current failure is relevant
even when incorrect." with Acted on: "Reading, searching, or editing a location named only by the
entry qualifies even if its proposed remedy goes unused" and Improved: "A finding can contribute
even if it disproves the entry's proposed remedy."
"""

from memuse_core.builder import EpisodeBuilder, entry

K = "The KeyError in load_config comes from a missing 'retries' entry in config/defaults.yaml; add retries: 3 there."
TASK = (
    "load_config() raises KeyError: 'retries' when the user's config file omits it; defaults "
    "should fill missing keys. Fix src/config.py."
)
RUN = "python -c \"from src.config import load_config; print(load_config('tests/fixtures/minimal.yaml'))\""


def episode():
    b = EpisodeBuilder("gold-wrong-relevant", task=TASK, repo="acme/svc")
    b.step("Reproduce.", RUN, "KeyError: 'retries'", exit_code=1)  # 1
    b.step(
        "Search memory.",
        'memory search "load_config KeyError defaults"',
        "[k-def] " + K,
        tool_memory=([entry("k-def", K)], "search_result"),
    )  # 2
    b.step(
        "Look at the defaults file.", "cat config/defaults.yaml", "timeout: 30\nretries: 3\nbackoff: 1.0"
    )  # 3
    b.step(
        "defaults.yaml already has retries: 3, so the defaults are not being applied. Check how "
        "load_config reads them.",
        "sed -n 1,10p src/config.py",
        "import os\nimport yaml\n\nDEFAULTS = 'config/defaults.yml'\n\ndef load_config(path):\n"
        "    user = yaml.safe_load(open(path))\n"
        "    defaults = yaml.safe_load(open(DEFAULTS)) if os.path.exists(DEFAULTS) else {}\n"
        "    cfg = {**defaults, **user}\n    return cfg, cfg['retries']",
    )  # 4
    b.step(
        "The path says .yml but the file is defaults.yaml; fix the path.",
        "sed -i \"s#DEFAULTS = 'config/defaults.yml'#DEFAULTS = 'config/defaults.yaml'#\" src/config.py",
        "",
    )  # 5
    b.step("Run it again.", RUN, "({'timeout': 30, 'retries': 3, 'backoff': 1.0, 'name': 'minimal'}, 3)")  # 6
    b.final("load_config reads config/defaults.yaml.")  # 7
    return b.finish(resolved=True)
