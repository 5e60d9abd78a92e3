"""NaN and Infinity outside strings are refused with the field that holds them (DESIGN.md "Bad
input"), whichever decoder read the line: the fast decoder (`events.fast`) refuses such a line
outright, so pydantic reads it and the line check names the field; the words inside strings are
text like any other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memuse_core.ingest.base import IngestError, ingest_path
from memuse_core.store import connect

RUN = {"type": "run", "v": 1, "run_id": "r1", "config": "c"}
START = {"type": "episode_start", "v": 1, "episode_id": "e1", "run_id": "r1", "task_id": "t1", "task": "x"}


def _call(**kw: object) -> dict[str, object]:
    return {
        "type": "model_call",
        "v": 1,
        "episode_id": "e1",
        "call_id": "c1",
        "request": {"messages": [{"role": "user", "content": "NaN and Infinity, as words"}]},
        "response": {"content": "-Infinity is fine in text; NaN too"},
        **kw,
    }


def _ingest(tmp_path: Path, lines: list[str]) -> tuple[int, int]:
    p = tmp_path / "log.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    con = connect(tmp_path / "s.duckdb")
    try:
        r = ingest_path(con, p)
        return r.events, con.execute("SELECT count(*) FROM calls").fetchall()[0][0]
    finally:
        con.close()


def test_the_words_inside_strings_are_text(tmp_path: Path) -> None:
    assert _ingest(tmp_path, [json.dumps(RUN), json.dumps(START), json.dumps(_call())]) == (3, 1)


@pytest.mark.parametrize(
    ("line", "field", "word"),
    [
        (
            json.dumps(_call(request={"messages": [], "temperature": float("nan")})),
            "request.temperature",
            "NaN",
        ),
        (json.dumps(_call(response={"content": "x", "score": float("inf")})), "response.score", "Infinity"),
    ],
)
def test_a_token_outside_strings_is_refused_with_its_field(
    tmp_path: Path, line: str, field: str, word: str
) -> None:
    with pytest.raises(IngestError) as e:
        _ingest(tmp_path, [json.dumps(RUN), json.dumps(START), line])
    assert (e.value.line, e.value.field) == (3, field)
    assert e.value.reason == f"{word} is not a number JSON allows (only finite numbers are accepted)"
    con = connect(tmp_path / "s.duckdb")
    assert con.execute("SELECT count(*) FROM files").fetchall() == [(0,)]  # nothing written
    con.close()
