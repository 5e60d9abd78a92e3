"""The CLI printers neutralise recorded text: `memuse info`, `report` and `spans` print ids with
ANSI escape sequences and bidi overrides as visible, inert stand-ins (never a raw ESC or U+202E).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_app_corpus import EPISODE, RLO, make_hostile_db
from typer.testing import CliRunner

from memuse_core.cli import app


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_hostile_db(tmp_path_factory.mktemp("hostile_cli"))


@pytest.mark.parametrize(
    "args",
    [["info"], ["report"], ["spans", "--episode", EPISODE]],
    ids=["info", "report", "spans"],
)
def test_printers_show_no_raw_escape_or_bidi_control(db: Path, args: list[str]) -> None:
    res = CliRunner().invoke(app, [*args, "--db", str(db)])
    assert res.exit_code == 0, res.output
    out = res.output
    assert "\x1b" not in out and RLO not in out, repr(out)
    assert "␛[" in out  # the escape sequence is shown, inert
