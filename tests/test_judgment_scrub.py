"""Secret scrubbing of stored judgments (DESIGN.md "Secrets"): the quick check that lets a
transcript without secret-shaped text skip the string-by-string walk never lets one through."""

from memuse_core.rules.judgment import REDACTED, JudgmentResult, scrub_result


def _scrubbed(transcript: dict, secrets: tuple[str, ...] = ()) -> dict:
    r = JudgmentResult(span_id="s1", transcript=transcript)
    return scrub_result(r, secrets).transcript


def test_secret_shaped_text_is_scrubbed_in_nested_transcripts() -> None:
    t = {
        "log": [{"body": "Authorization: Bearer abcdefghijklmnop"}, ["key sk-ABCDEFGHIJKLMNOP"]],
        "x": {"y": 'api_key="zzzzzzzzzz"'},
    }
    out = _scrubbed(t)
    assert "abcdefghijklmnop" not in str(out) and "ABCDEFGHIJKLMNOP" not in str(out)
    assert "zzzzzzzzzz" not in str(out) and REDACTED in out["x"]["y"]


def test_non_ascii_case_variants_and_given_secrets_are_scrubbed() -> None:
    # U+017F matches "s" case-insensitively: the quick check must not skip it
    assert "qqqqqqqq" not in str(_scrubbed({"a": ["ſecret=qqqqqqqq"]}))
    assert "my-own-key-123" not in str(_scrubbed({"a": ["echo my-own-key-123"]}, ("my-own-key-123",)))


def test_plain_transcript_is_unchanged() -> None:
    t = {"tool_log": ["steps/S1.md@0", "prior/P1.md@0"], "coverage": {"steps/S1.md": [[0, 10, 1]]}}
    assert _scrubbed(t) == t


def test_every_stored_text_of_a_judgment_is_scrubbed() -> None:
    """The journal writes the whole result and the tables its texts: after the scrub, no part of
    its serialised form holds the secret, and the text around it is kept."""
    from memuse_core.rules.judgment import Attempt, EntryAssessment, JudgeAnswer

    key = "plain-secret-value-42"
    note = f"the endpoint said {key}"
    a = EntryAssessment(
        entry=0,
        item_id="m1",
        relevance=True,
        accuracy="uncontradicted",
        novelty=None,
        influence=None,
        effect=None,
        notes=note,
    )
    r = JudgmentResult(
        span_id="s1",
        reason=note,
        settings={"base_url": f"http://h/{key}"},
        transcript={"messages": [{"content": note}]},
        attempts=[Attempt(call=1, violations=[{"message": note}], answer={"summary": note}, sent=note)],
        answer=JudgeAnswer(assessments=[a], summary=note, confidence=0.5),
    )
    scrub_result(r, (key,))
    assert key not in r.model_dump_json()
    assert (
        r.answer is not None
        and r.answer.summary == r.answer.assessments[0].notes == f"the endpoint said {REDACTED}"
    )
    assert r.attempts[0].sent == f"the endpoint said {REDACTED}"
