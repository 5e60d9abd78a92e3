"""Placement proofs accept the three ways producers write a digest: the 16-hex
`text_digest`, the full 64-hex sha256, and `sha256:<64 hex>` (any case). MemUse A.1.1: a proof
pins its host message by digest; the form of the digest must not decide whether it resolves."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from memuse_core.build import build_store
from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import RunEvent, dump_event, normalize_digest, text_digest
from memuse_core.ingest import ingest_path
from memuse_core.record.proofs import verify_placement
from memuse_core.record.wire import MessageMap
from memuse_core.store import connect

TEXT = "User Memories:\n- parse dates with fromisoformat"


def _sha(t: str) -> str:
    return hashlib.sha256(t.encode()).hexdigest()


FORMS = {
    "prefix": lambda t: _sha(t)[:16],
    "hex64": _sha,
    "sha256:": lambda t: f"sha256:{_sha(t)}",
    "SHA256:UPPER": lambda t: f"SHA256:{_sha(t).upper()}",
}


@pytest.mark.parametrize("form", FORMS)
def test_every_form_normalises_to_text_digest(form: str) -> None:
    assert normalize_digest(FORMS[form](TEXT)) == text_digest(TEXT)


def test_other_strings_are_kept_and_match_nothing() -> None:
    assert normalize_digest("md5:abc") == "md5:abc"
    assert normalize_digest("sha256:" + "0" * 63) == "sha256:" + "0" * 63


def _log(path: Path, form: str) -> Path:
    b = EpisodeBuilder("e1", run_id="r")
    b.host_block("recall", TEXT, [entry("fromisoformat", "parse dates with fromisoformat")])
    b.step("look", "grep -rn parse_date .", "src/dates.py:3:def parse_date(s):")
    b.step("edit", "sed -i s/x/y/ src/dates.py", "")
    lines = []
    for ev in [RunEvent(run_id="r"), *b.finish(resolved=True)]:
        d = json.loads(dump_event(ev))
        if d["type"] == "memory_delivery":
            for pl in d["placements"]:
                pl["digest"] = FORMS[form](pl["text"])
                host = pl["proof"]["message_digest"]
                assert len(host) == 16
                pl["proof"]["message_digest"] = _rewrite(host, form, b)
        lines.append(json.dumps(d))
    path.write_text("\n".join(lines) + "\n")
    return path


def _rewrite(host16: str, form: str, b: EpisodeBuilder) -> str:
    """The host message digest in `form` (the host text is the system message the builder sent)."""
    for ev in b.events:
        if ev.type == "model_call":
            for m in ev.request.messages:
                if m.role == "system" and text_digest(m.text()) == host16:
                    return FORMS[form](m.text())
    raise AssertionError("host message not found")


@pytest.mark.parametrize("form", FORMS)
def test_proofs_in_every_digest_form_resolve_when_built(form: str, tmp_path: Path) -> None:
    src = _log(tmp_path / "run.jsonl", form)
    raw = src.read_text()
    if form != "prefix":
        assert f'"digest": "{text_digest(TEXT)}"' not in raw  # the log really carries the long form
    db = tmp_path / "m.duckdb"
    con = connect(db)
    try:
        ingest_path(con, src)
    finally:
        con.close()
    build_store(db)
    con = connect(db, read_only=True)
    try:
        bad = con.execute("SELECT rule, detail FROM recording_checks WHERE NOT ok").fetchall()
        verified = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE verified) FROM delivery_context"
        ).fetchone()
    finally:
        con.close()
    assert bad == []
    assert verified is not None and verified[0] > 0 and verified[0] == verified[1]


@pytest.mark.parametrize("form", FORMS)
def test_recorder_verifies_a_placement_in_every_digest_form(form: str) -> None:
    host = "System prompt.\n\n" + TEXT
    body = {"messages": [{"role": "system", "content": host}, {"role": "user", "content": "go"}]}
    mm = MessageMap(
        [dict(m) for m in body["messages"]], ["/messages/0", "/messages/1"], list(body["messages"])
    )
    pl = {
        "slot": "system_suffix",
        "text": TEXT,
        "digest": FORMS[form](TEXT),
        "proof": {"message_index": 0, "message_digest": FORMS[form](host)},
    }
    out = verify_placement(pl, body, mm, chat=True)
    assert out["proof"]["verified"] is True, out["proof"]
