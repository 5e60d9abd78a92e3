"""The MemTrim paper's worked examples with the deterministic parser: the founding-year memory
(3.1, 3.3), canonical evidence alignment of Highway 5 and the visitor centre (A.1), the route
planning support set (A.1), and the three case studies of Appendix B.4."""

from __future__ import annotations

from memuse_core.trim import DeterministicParser, MemTrim

FOUNDING = (
    "Northstar Robotics was founded in 2016 by Maya Lee and Daniel Ortiz. "
    "When was Northstar Robotics founded?"
)


def kv(units) -> set[tuple[str, object]]:
    return {(u.key.label(), u.value) for u in units}


def test_founding_year_memory_representation() -> None:
    """3.1: units, task signature, typed outcome, support set."""
    p = DeterministicParser().parse(FOUNDING, "2016")
    assert kv(p.units) == {
        ("subject", "northstar robotics"),
        ("northstar robotics.founded_in", "2016"),
        ("northstar robotics.founder", "maya lee"),
        ("northstar robotics.founder", "daniel ortiz"),
    }
    assert p.task == "when:northstar_robotics_founded"
    assert p.outcome is not None and (p.outcome.task, p.outcome.answer) == (p.task, "2016")
    founded = next(i for i, u in enumerate(p.units) if u.key.attribute == "founded_in")
    assert founded in p.support
    # every unit points at the text it came from
    assert all(FOUNDING[u.start : u.end] == u.span for u in p.units)


def test_founding_year_trie_branches_and_relabelling() -> None:
    """3.2: same key, different values branch; 3.3: a different task relabels the answer."""
    t = MemTrim()
    t.write("m2016", FOUNDING, answer="2016")
    t.write("m2017", FOUNDING.replace("2016", "2017"), answer="2017")
    key = next(u.key for u in t.memories["m2016"].parsed.units if u.key.attribute == "founded_in")
    node = t.trie.lookup(key)
    assert node is not None and set(node.values) == {"2016", "2017"}
    assert node.values["2016"].holders == {"m2016": True}  # in its support set
    founders = t.trie.lookup(
        next(u.key for u in t.memories["m2016"].parsed.units if u.key.attribute == "founder")
    )
    assert founders is not None and set(founders.values["maya lee"].holders) == {"m2016", "m2017"}

    res = t.read("Who founded Northstar Robotics?", ["m2016"])
    d = res.decisions["m2016"]
    assert d.outcome == "relabelled"
    assert d.outcome_unit is not None and d.outcome_unit.value == "2016"
    # Type(o_m): filed as the fact it states, (founded_in, 2016), not as an answer (3.3)
    assert d.outcome_unit.key.label() == "northstar robotics.founded_in"
    assert res.lines == [
        "northstar robotics founder: Maya Lee",
        "northstar robotics founder: Daniel Ortiz",
        "northstar robotics founded in: 2016",
    ]

    same = t.read("When was Northstar Robotics founded?", ["m2016"])
    assert same.decisions["m2016"].outcome == "kept"
    assert "Answer given earlier to this same question: 2016" in same.lines


def test_highway_closed_shut_not_open_share_a_node_visitor_centre_does_not() -> None:
    """A.1 Canonical Evidence Alignment."""
    t = MemTrim()
    t.write("a", "Highway 5 is closed today.")
    t.write("b", "Route 5 has been shut for the day.")
    t.write("c", "Highway 5 is not open.")
    t.write("d", "Highway 5 is open.")
    t.write("v", "The visitor center is open.")
    status = [u for u in t.memories["a"].parsed.units if u.key.attribute == "status"][0]
    assert status.key.label() == "highway 5.status" and status.value == "closed"
    node = t.trie.lookup(status.key)
    assert node is not None
    assert set(node.values["closed"].holders) == {"a", "b", "c"}
    assert set(node.values["open"].holders) == {"d"}
    vc = [u for u in t.memories["v"].parsed.units if u.key.attribute == "status"][0]
    assert vc.key != status.key and vc.value == "open"
    assert "v" not in node.values["open"].holders


def test_query_value_always_wins() -> None:
    """A.1: the query's Highway5_status=closed removes a stored open, whatever the retrieval order."""
    t = MemTrim()
    t.write("d", "Highway 5 is open.")
    t.write("v", "The visitor center is open.")
    for order in (["d", "v"], ["v", "d"]):
        res = t.read("Highway 5 is closed. Which way should I drive?", order)
        assert [u.value for u in res.decisions["d"].conflicting] == ["open"]
        assert "Highway 5 is open" not in res.context
        assert "The visitor center is open." in res.context


ROUTE_MEMORY = (
    "Highway 5 is open. Destination: City B. Weather: sunny.\n"
    "Support: Highway 5, destination\n"
    "Question: Which route should I take?"
)


def test_route_planning_support_set() -> None:
    """A.1: the answer depends on Highway 5's status and the destination, not on the weather."""
    t = MemTrim()
    mem = t.write("r", ROUTE_MEMORY, answer="Take Highway 5")
    support = {mem.parsed.units[i].key.label() for i in mem.parsed.support}
    assert support == {"highway 5.status", "destination", "subject"}
    only_weather = t.read("Weather: rainy. Destination: City B. Which route should I take?", ["r"])
    d = only_weather.decisions["r"]
    assert [u.key.label() for u in d.conflicting] == ["weather"]
    assert d.outcome == "kept" and "Take Highway 5" in only_weather.context
    closed = t.read("Highway 5 is closed. Which route should I take?", ["r"])
    assert closed.decisions["r"].outcome == "suppressed"
    assert "Take Highway 5" not in closed.context
    travel = t.read("How long will the trip to City B take?", ["r"])
    assert travel.decisions["r"].outcome == "relabelled"
    # A.1: "Take Highway 5" becomes (recommended_route, Highway 5) under a travel-time question
    assert travel.lines[-1] == "recommended route: Take Highway 5"


def test_case_1_outdated_club() -> None:
    """B.4 case 1: shared person, changed club, memory-only position; the answer is removed."""
    t = MemTrim()
    t.write(
        "m",
        "Lionel Messi plays for Paris Saint-Germain. Lionel Messi plays as a forward.\n"
        "Question: Which country is his club based in?",
        answer="France",
    )
    res = t.read("Lionel Messi now plays for Inter Miami. Which country is his club based in?", ["m"])
    d = res.decisions["m"]
    assert kv(d.shared) == {("subject", "lionel messi")}
    assert kv(d.conflicting) == {("lionel messi.plays_for", "paris saint-germain")}
    assert kv(d.memory_only) == {("lionel messi.plays_as", "forward")}
    assert t.memories["m"].parsed.task == res.query.task  # same task: club country
    assert d.outcome == "suppressed" and "plays_for" in d.reason
    assert "France" not in res.context
    assert res.lines == ["Lionel Messi plays as a forward."]


def test_case_2_validity_vs_real_world_truth() -> None:
    """B.4 case 2: everything shared, the task changes: the answer stays only as labelled evidence."""
    premises = (
        "Premises: All metals are liquid at room temperature. Iron is a metal.\n"
        "Conclusion: Iron is liquid at room temperature.\n"
    )
    t = MemTrim()
    t.write("m", premises + "Query: Is the argument logically valid?", answer="Yes")
    res = t.read(premises + "Query: Is the conclusion true in the real world?", ["m"])
    d = res.decisions["m"]
    assert d.conflicting == [] and d.memory_only == [] and len(d.shared) >= 3
    assert d.outcome == "relabelled"
    assert res.lines == ["argument logically valid: Yes"]  # B.4: "(validity, yes)", a labelled fact


def test_case_3_changed_interventional_probabilities() -> None:
    """B.4 case 3: same graph and task; observational values replaced by interventional ones."""
    setup = "Eating citrus (X) directly affects scurvy (Y). Genotype (Z) affects both X and Y.\n"
    t = MemTrim()
    t.write(
        "m",
        setup + "P(Y=1|X=1)=0.72, P(Y=1|X=0)=0.41.\n"
        "Question: Does eating citrus increase the chance of scurvy?",
        answer="Yes",
    )
    res = t.read(
        setup + "P(Y=1 | do(X=1)) = 0.38, P(Y=1 | do(X=0)) = 0.41.\n"
        "Question: Does eating citrus increase the chance of scurvy?",
        ["m"],
    )
    d = res.decisions["m"]
    assert ("genotype.affects", "scurvy") in kv(d.shared)
    assert ("eating citrus.affects", "scurvy") in kv(d.shared)
    assert {u.key.label() for u in d.conflicting} == {"p(y=1|x=1).probability", "p(y=1|x=0).probability"}
    assert d.memory_only == []
    assert d.outcome == "suppressed"
    assert res.context == ""  # nothing beyond the current query is needed
