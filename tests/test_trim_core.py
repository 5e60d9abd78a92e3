"""MemTrim read-time rules (3.2, 3.3, A.1): sparse overlap, multi-valued keys, merge across
memories (emit once, withhold disagreements, trusted timestamps), restriction to the retrieved ids,
grounding, value normalisation, parser fallback, and the search-result adapter."""

from __future__ import annotations

import random

import pytest

from memuse_core.trim import MemoryFilter, MemTrim, ParsedInteraction
from memuse_core.trim.decide import QueryEvidence
from memuse_core.trim.units import EvidenceUnit, Key, ground, normalize_value


def test_sparse_overlap_at_any_position() -> None:
    """3.2: E_m = {e1,e2,e3,e4}, E_q = {e1,e2',e3,e4'}: e1 and e3 match though e2 differs."""
    t = MemTrim()
    t.write("m", "alpha: 1\nbeta: red\ngamma: 2020-01-05\ndelta: yes")
    res = t.read("alpha: 1\nbeta: blue\ngamma: 5 January 2020\ndelta: no", ["m"])
    d = res.decisions["m"]
    assert [u.key.attribute for u in d.shared] == ["alpha", "gamma"]  # dates normalised to one form
    assert [u.key.attribute for u in d.conflicting] == ["beta", "delta"]
    assert d.memory_only == [] and res.context == ""


def test_multi_valued_relation_is_not_a_conflict() -> None:
    t = MemTrim()
    t.write("m", "Northstar Robotics was founded by Maya Lee and Daniel Ortiz.")
    res = t.read("Northstar Robotics was founded by Maya Lee.", ["m"])
    d = res.decisions["m"]
    assert {u.value for u in d.shared} >= {"maya lee"}
    assert d.conflicting == []
    assert [u.value for u in d.memory_only] == ["daniel ortiz"]
    assert "northstar robotics founder: Daniel Ortiz" in res.context


def test_identical_memory_only_evidence_emitted_once() -> None:
    t = MemTrim()
    t.write("a", "Lionel Messi plays as a forward.\nHighway 9 is open.")
    t.write("b", "Highway 9 is open.\nThe visitor center is open.")
    res = t.read("Which route?", ["a", "b"])
    assert res.context.count("Highway 9 is open.") == 1
    assert [u.key.label() for u in res.decisions["b"].duplicates if u.key.attribute == "status"] == [
        "highway 9.status"
    ]


def test_unresolved_conflict_across_memories_is_withheld() -> None:
    """A.1: values that disagree across retrieved memories and that the query does not settle are
    all withheld; retrieval order does not pick a winner."""
    t = MemTrim()
    t.write("old", "Highway 5 is open. The visitor center is open.", timestamp=100.0)
    t.write("new", "Route 5 has been shut for the day.", timestamp=200.0)
    for order in (["old", "new"], ["new", "old"]):
        res = t.read("Which route should I take to City B?", order)
        assert "Highway 5 is open" not in res.context and "shut" not in res.context
        assert [u.value for u in res.decisions["old"].withheld] == ["open"]
        assert [u.value for u in res.decisions["new"].withheld] == ["closed"]
        assert "The visitor center is open." in res.context
    # the query settles it: both stored values are removed as shared / conflicting, nothing withheld
    res = t.read("Highway 5 is closed. Which route?", ["old", "new"])
    assert res.decisions["old"].withheld == [] and res.decisions["new"].shared


def test_trusted_timestamp_resolves_conflict() -> None:
    t = MemTrim(trust_timestamps=True)
    t.write("old", "Highway 5 is open.", timestamp=100.0)
    t.write("new", "Route 5 has been shut for the day.", timestamp=200.0)
    res = t.read("Which route?", ["old", "new"])
    assert "Route 5 has been shut for the day." in res.context
    assert [u.value for u in res.decisions["old"].withheld] == ["open"]
    # a tie or a missing timestamp is not a trusted order
    t.write("tie", "Highway 5 is open.", timestamp=200.0)
    res = t.read("Which route?", ["tie", "new"])
    assert "Highway 5" not in res.context and "Route 5" not in res.context
    t.write("nots", "Highway 5 is open.")
    res = t.read("Which route?", ["nots", "new"])
    assert "Highway 5" not in res.context


def test_disagreeing_kept_answers_are_withheld() -> None:
    t = MemTrim()
    t.write("a", "Question: Which route should I take?", answer="Take Highway 5")
    t.write("b", "Question: Which route should I take?", answer="Take Highway 9")
    res = t.read("Which route should I take?", ["a", "b"])
    assert {d.outcome for d in res.decisions.values()} == {"kept"}
    assert "Highway" not in res.context
    t.write("c", "Question: Which route should I take?", answer="Take Highway 5")
    res = t.read("Which route should I take?", ["a", "c"])
    assert res.context.count("Take Highway 5") == 1


def test_only_retrieved_memories_are_used() -> None:
    """A.1: the trie is not a second retriever."""
    t = MemTrim()
    t.write("hit", "Highway 9 is open.")
    t.write("other", "Highway 5 is open.\nThe visitor center is open.")
    res = t.read("Highway 5 is closed. Which route?", ["hit"])
    assert set(res.decisions) == {"hit"}
    assert "visitor" not in res.context
    with pytest.raises(KeyError, match="never written"):
        t.read("Which route?", ["missing"])


def test_rewriting_a_memory_replaces_its_trie_entries() -> None:
    t = MemTrim()
    t.write("m", "Highway 5 is open.")
    t.write("m", "Highway 5 is closed.")
    node = t.trie.lookup(Key("highway 5", "status", "categorical"))
    assert node is not None and set(node.values) == {"closed"}
    assert len(t.trie) == 2


def test_grounding_drops_untraceable_units() -> None:
    text = "Highway 5 is closed today."
    good = EvidenceUnit(Key("highway 5", "status", "categorical"), "closed", "closed", 0, 25, text[:25])
    bad = EvidenceUnit(Key("highway 9", "status", "categorical"), "open", "open", 0, 14, "Highway 9 is o")
    outside = EvidenceUnit(Key("x", "y", "text"), "z", "z", 20, 99, "today.")
    kept, dropped = ground(text, [good, bad, outside])
    assert kept == [good] and dropped == 2


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("yes", ("boolean", True)),
        ("False", ("boolean", False)),
        ("52%", ("numeric", 0.52)),
        ("1,234", ("numeric", 1234.0)),
        ("March 3, 2024", ("temporal", "2024-03-03")),
        ("2024-3-3", ("temporal", "2024-03-03")),
        ("shut", ("categorical", "closed")),
        ("The Visitor Centre", ("categorical", "visitor center")),
    ],
)
def test_value_normalisation(raw: str, expected: tuple[str, object]) -> None:
    assert normalize_value(raw) == expected


def test_year_is_temporal_only_for_time_attributes() -> None:
    assert normalize_value("2016", attribute="founded_in") == ("temporal", "2016")
    assert normalize_value("2016", attribute="population") == ("numeric", 2016.0)


class FailingParser:
    """A real (tiny) parser that cannot represent memories mentioning a toll."""

    name = "failing"

    def __init__(self) -> None:
        from memuse_core.trim import DeterministicParser

        self.inner = DeterministicParser()

    def parse(self, text: str, answer: str | None = None) -> ParsedInteraction:
        if "toll" in text:
            return ParsedInteraction(ok=False, error="no valid representation")
        return self.inner.parse(text, answer)

    def equivalent_key(self, key, candidates):  # noqa: ANN001
        return None

    def equivalent_task(self, task, candidates):  # noqa: ANN001
        return None


def test_parser_failure_fallback() -> None:
    """A.1: the memory stays in the base store; nothing of it is passed through MemTrim and its
    stored outcome is never reused."""
    t = MemTrim(parser=FailingParser())
    t.write("toll", "The bridge toll is 5 dollars. Question: Which route is cheapest?", answer="The bridge")
    t.write("ok", "Highway 9 is open. Question: Which route is cheapest?", answer="Highway 9")
    res = t.read("Which route is cheapest?", ["toll", "ok"])
    d = res.decisions["toll"]
    assert d.outcome == "suppressed" and not d.parsed_ok and d.lines == []
    assert "never reused" in d.reason
    assert res.decisions["ok"].outcome == "kept"
    assert res.lines == ["Highway 9 is open.", "Answer given earlier to this same question: Highway 9"]


def test_trie_lookup_and_memory_side_lookup_agree() -> None:
    """The two lookup directions of `split` give the same split (random key-value memories)."""
    rng = random.Random(3)
    t = MemTrim()
    for i in range(40):
        lines = [f"k{rng.randrange(12)}: v{rng.randrange(3)}" for _ in range(rng.randrange(1, 8))]
        t.write(i, "\n".join(lines))
    for _ in range(30):
        q = t.parse_query(
            "\n".join(f"k{rng.randrange(12)}: v{rng.randrange(3)}" for _ in range(rng.randrange(1, 10)))
        )
        ids = rng.sample(range(40), 5)
        qe = QueryEvidence.of(q.units)
        assert t.split(qe, ids) == t.split_from_memories(qe, ids)


def test_filter_reads_mem0_results_with_answers_and_timestamps() -> None:
    flt = MemoryFilter()
    results = {
        "results": [
            {
                "id": "a1",
                "memory": "Highway 5 is open. The visitor center is open.",
                "score": 0.9,
                "metadata": {"answer": "Take Highway 5"},
                "updated_at": "2026-01-01T00:00:00Z",
            },
            {
                "id": "b2",
                "memory": "Question: Which route should I take?",
                "score": 0.5,
                "metadata": {},
                "created_at": "2026-02-01T00:00:00Z",
            },
        ]
    }
    out = flt("Highway 5 is closed. Which route should I take?", results)
    t = flt.index.trimmer()
    assert [d["id"] for d in out["memtrim"]["decisions"]] == ["a1", "b2"]
    assert out["memtrim"]["decisions"][0]["outcome"] == "suppressed"
    assert t.memories["a1"].timestamp is not None and t.memories["a1"].answer == "Take Highway 5"
    assert [r["memory"] for r in out["results"]] == ["The visitor center is open."]
    # parsed once: a second call with the same results does not write again
    before = t.memories["a1"]
    flt("Which route?", results)
    assert t.memories["a1"] is before
    with pytest.raises(ValueError, match="no text field"):
        flt("q", [{"id": "x"}])


def test_context_holds_only_emitted_units() -> None:
    """MemTrim 3.3: text no unit covers (headings, leftovers of a partly removed sentence)
    never reaches the context; directive lines neither; a fully kept sentence stays verbatim."""
    t = MemTrim()
    t.write(
        "m",
        "Notes:\n- Highway 5 is open. The visitor center is open.\nQuestion: Which route?",
        answer="Highway 9",
    )
    res = t.read("Highway 5 is closed. Which road is fastest?", ["m"])
    assert res.decisions["m"].lines == ["The visitor center is open."]
    assert res.decisions["m"].outcome == "suppressed"  # Highway 5's status supported the answer
    assert res.context == (
        "From earlier interactions (facts the current request states were left out):\n"
        "- The visitor center is open."
    )


def test_unexpressible_answer_is_omitted_under_a_task_change() -> None:
    """A.1: a procedural or long answer is not turned into evidence for a different task."""
    t = MemTrim()
    steps = "1. Open the settings.\n2. Reset the router.\n3. Wait a minute and reconnect."
    t.write("m", "The router is down. Question: How do I fix the wifi?", answer=steps)
    res = t.read("The router is down. Question: Which router model do I have?", ["m"])
    d = res.decisions["m"]
    assert d.outcome == "relabelled" and d.outcome_unit is None and "omitted" in d.reason
    assert "Reset the router" not in res.context
    same = t.read("The router is down. Question: How do I fix the wifi?", ["m"])
    assert same.decisions["m"].outcome == "kept" and "Reset the router" in same.context


def test_explanation_says_when_a_shared_code_token_stays_inside_its_sentence() -> None:
    """A code token the request already states (`TypeError`) is a shared unit, but a sentence whose
    fact units are all kept is passed whole with the code tokens inside it (`trim.decide.render`).
    The explanation must not claim the token's text was taken out of the context."""
    t = MemTrim()
    t.write("m", "TypeError around resolve_lookup_value in django")
    d = t.read("The test fails with TypeError in the ORM.", ["m"]).decisions["m"]
    assert [(u.key.label(), u.value) for u in d.shared] == [("code.error_type", "TypeError")]
    assert d.lines == ["TypeError around resolve_lookup_value in django"]
    assert d.explain()[0] == (
        "1 unit(s) already stated in the request: removed (1 still inside a sentence passed whole: "
        "a code token goes with its sentence)."
    )
    # a shared unit whose text leaves the context is simply removed
    t.write("n", "alpha: 1\nbeta: 2")
    d = t.read("alpha: 1", ["n"]).decisions["n"]
    assert d.explain()[0] == "1 unit(s) already stated in the request: removed."
    assert all("alpha" not in line for line in d.lines)
