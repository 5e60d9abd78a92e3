"""MemTrim's read-time contract on small hand-made memories (MemTrim 3.3 Eq. 1, A.1, B.4):

- the context holds only emitted units under a neutral header, never raw memory text, and the
  units that restate a stored answer follow the answer's fate (a suppressed answer does not come
  back through `Assistant: France`, `club country: France` or "His club is based in France.");
- a relabelled answer is the fact it states, filed under that fact's key: the query's value wins
  and a disagreeing memory withholds it;
- fail closed: a query that cannot be parsed passes nothing and reuses no answer; an answer with
  a dropped supporting unit is not reused; the reason says so;
- H_m from structure: `write(..., support=[...])`; unknown dependence counts as support; a named
  support fact the memory does not state suppresses the answer when the query states it.
Expected outputs are written out by hand."""

from __future__ import annotations

from dataclasses import replace

from memuse_core.trim import DeterministicParser, MemTrim, ParsedInteraction

HEADER = "From earlier interactions (facts the current request states were left out):"

CHAT = (
    "User: Lionel Messi plays for Paris Saint-Germain. Which country is his club based in?\n"
    "Assistant: France\n"
    "club country: France\n"
    "His club is based in France.\n"
    "Lionel Messi plays as a forward."
)


def test_suppressed_answer_does_not_return_through_the_memory_text() -> None:
    """B.4 case 1 written as a chat memory: the club changed, so "France" must not reach the
    model in any form; the memory-only position stays."""
    t = MemTrim()
    t.write("m", CHAT, answer="France")
    res = t.read("Lionel Messi now plays for Inter Miami. Which country is his club based in?", ["m"])
    d = res.decisions["m"]
    assert d.outcome == "suppressed"
    assert [u.span for u in d.answer_units] == ["club country: France", "His club is based in France."]
    assert res.context == HEADER + "\n- Lionel Messi plays as a forward."
    assert "France" not in res.context and "Assistant" not in res.context


def test_kept_answer_appears_once_and_its_restatements_do_not() -> None:
    t = MemTrim()
    t.write("m", CHAT, answer="France")
    res = t.read("Lionel Messi plays for Paris Saint-Germain. Which country is his club based in?", ["m"])
    assert res.decisions["m"].outcome == "kept"
    assert res.lines == [
        "Lionel Messi plays as a forward.",
        "Answer given earlier to this same question: France",
    ]


def test_relabelled_answer_is_filed_under_the_fact_key() -> None:
    """3.3 Type(o_m): a founding-year answer under a "who founded" question becomes the fact
    (northstar robotics.founded_in, 2016)."""
    t = MemTrim()
    t.write("m", "Question: When was Northstar Robotics founded?", answer="2016")
    res = t.read("Who founded Northstar Robotics?", ["m"])
    d = res.decisions["m"]
    assert d.outcome == "relabelled"
    assert d.outcome_unit is not None and d.outcome_unit.key.label() == "northstar robotics.founded_in"
    assert res.lines == ["northstar robotics founded in: 2016"]


def test_the_query_value_wins_over_a_relabelled_answer() -> None:
    """A.1: the query's founded_in=2017 removes the earlier answer 2016, in sentence or
    key: value form."""
    t = MemTrim()
    t.write("m", "Question: When was Northstar Robotics founded?", answer="2016")
    for query in (
        "Northstar Robotics was founded in 2017. Who founded Northstar Robotics?",
        "entity: Northstar Robotics\nfounded in: 2017\nQuestion: Who founded it?",
    ):
        res = t.read(query, ["m"])
        d = res.decisions["m"]
        assert d.outcome == "relabelled" and d.outcome_unit is None, query
        assert d.outcome_removed == (
            "The request gives `northstar robotics.founded_in` another value: the earlier answer is "
            "removed (the request wins, A.1)."
        )
        assert res.context == ""


def test_a_disagreeing_memory_withholds_the_relabelled_answer() -> None:
    """A.1 merge: 2016 (relabelled answer) and 2017 (another memory) are both withheld."""
    t = MemTrim()
    t.write("answer", "Question: When was Northstar Robotics founded?", answer="2016")
    t.write("fact", "Northstar Robotics was founded in 2017. Northstar Robotics is based in Oslo.")
    res = t.read("Who founded Northstar Robotics?", ["answer", "fact"])
    assert [u.value for u in res.decisions["answer"].withheld] == ["2016"]
    assert [u.value for u in res.decisions["fact"].withheld] == ["2017"]
    assert res.lines == ["Northstar Robotics is based in Oslo."]


class QueryFailingParser(DeterministicParser):
    """A real parser that cannot represent any text mentioning a toll."""

    def parse(self, text: str, answer: str | None = None) -> ParsedInteraction:
        if "toll" in text:
            return ParsedInteraction(ok=False, error="no valid representation")
        return super().parse(text, answer)


def test_a_query_that_cannot_be_parsed_passes_nothing() -> None:
    """Fail closed: without the query's evidence, shared and conflicting units cannot be told
    apart, so no unit and no stored answer is passed on."""
    t = MemTrim(parser=QueryFailingParser())
    t.write("route", "Highway 5 is open. Question: Which route should I take?", answer="Take Highway 5")
    t.write("note", "The visitor center is open.")
    res = t.read("Highway 5 is closed and has a toll. Which route should I take?", ["route", "note"])
    assert res.context == "" and res.lines == []
    route, note = res.decisions["route"], res.decisions["note"]
    assert (route.outcome, note.outcome) == ("suppressed", "none")
    assert route.reason.startswith("The current request could not be parsed (no valid representation)")
    assert "no stored answer is reused" in route.reason


def test_a_dropped_supporting_unit_blocks_the_answer() -> None:
    """A.1 + fail closed: a unit the answer may depend on was dropped as ungrounded; the answer
    cannot be checked against the query, so it is not reused even on the same task."""
    t = MemTrim()
    text = "Highway 5 is closed. Question: Which route should I take?"
    parsed = DeterministicParser().parse(text, "Highway 9")
    t.write_parsed("m", text, "Highway 9", replace(parsed, dropped=1, support_dropped=1))
    res = t.read("Which route should I take?", ["m"])
    d = res.decisions["m"]
    assert d.outcome == "suppressed"
    assert d.reason == (
        "1 unit(s) the answer may depend on could not be traced to the memory text and were dropped, so "
        "the answer cannot be checked (fail closed, A.1). The stored answer is removed (Eq. 1)."
    )
    assert res.lines == ["Highway 5 is closed."]


ROUTE = "Highway 5 is open. Destination: City B. Weather: sunny.\nQuestion: Which route should I take?"


def test_support_from_structure() -> None:
    """A.1: the route answer depends on Highway 5 and the destination, not on the weather; told
    through `support=`, a weather change keeps the answer. Without it, dependence is unknown and
    every unit counts as support."""
    given = MemTrim()
    mem = given.write("r", ROUTE, answer="Take Highway 5", support=["Highway 5", "destination"])
    assert {mem.parsed.units[i].key.label() for i in mem.parsed.support} == {
        "subject",
        "highway 5.status",
        "destination",
    }
    rainy = "Weather: rainy. Destination: City B. Which route should I take?"
    res = given.read(rainy, ["r"])
    assert res.decisions["r"].outcome == "kept"
    assert res.lines == ["Highway 5 is open.", "Answer given earlier to this same question: Take Highway 5"]

    unknown = MemTrim()
    unknown.write("r", ROUTE, answer="Take Highway 5")
    d = unknown.read(rainy, ["r"]).decisions["r"]
    assert d.outcome == "suppressed" and d.support_from == "all"
    assert d.reason.startswith("Evidence the stored answer depends on changed in the request: `weather`.")


def test_named_support_the_memory_does_not_state() -> None:
    """A support name no unit of the memory holds: when the query states it, the memory cannot
    show the value was the same, so the answer is not reused."""
    t = MemTrim()
    mem = t.write("r", ROUTE, answer="Take Highway 5", support=["Highway 5", "toll"])
    assert mem.parsed.open_support == ("toll",)
    assert t.read("Which route should I take?", ["r"]).decisions["r"].outcome == "kept"
    d = t.read("Toll: 5 dollars. Which route should I take?", ["r"]).decisions["r"]
    assert d.outcome == "suppressed"
    assert "The answer depends on `toll`, which the memory does not state and the request does" in d.reason
