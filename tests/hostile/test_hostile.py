"""Plays every registered hostile case (tests/hostile/hostile_*.py).

Each case's input is generated here, into a fresh directory; the case then asserts its answer code
and message, that nothing else changed (checksums before and after), how many records it added,
and that the tool went on working afterwards.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hostile_cases import RUNNERS, load_all

CASES = load_all()


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_case(name: str, tmp_path: Path) -> None:
    c = CASES[name]
    generated = c.generate(tmp_path / "corpus")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = RUNNERS[c.area](c, generated, scratch)
    assert out.code == c.code, f"expected {c.code}, got {out.code}: {out.message}"
    assert re.search(c.message, out.message), out.message
    assert out.before == out.after, "the case changed state it must not touch"
    assert len(out.added) == c.added, out.added
    if c.check is not None:
        c.check(out)
    assert out.continued, "the tool did not go on working after the case"


def test_generate_script_writes_the_whole_corpus_and_manifest(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    script = Path(__file__).with_name("generate.py")
    r = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert sorted(m["name"] for m in manifest) == sorted(CASES)
    assert all((tmp_path / m["input"]).exists() for m in manifest)
    assert {m["area"] for m in manifest} == {c.area for c in CASES.values()}
