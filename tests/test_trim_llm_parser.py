"""The LLM parser against a real local chat-completions server with scripted replies (MemTrim A.1):
structured output, grounding check, one retry with the validation error, the unparsed fallback,
and the key-equivalence check."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memuse_core.judge.scripted_server import ScriptedReply, ScriptedServer
from memuse_core.trim import MemTrim
from memuse_core.trim.parse_llm import LLMParser, dump_reply


def unit(
    entity: str,
    attribute: str,
    vtype: str,
    value: str,
    quote: str,
    support: str = "unsure",
    many: bool = False,
) -> dict[str, Any]:
    return {
        "entity": entity,
        "attribute": attribute,
        "value_type": vtype,
        "value": value,
        "multi_valued": many,
        "quote": quote,
        "supports_answer": support,
    }


MEM_A = "Highway 5 is closed today. The weather is sunny.\nWhich route should I take to City B?"
MEM_B = "Route 5 has been shut for the day. Which route should I take to City B?"
QUERY = "Highway 5 is open again. Which route should I take to City B?"

REPLIES: dict[str, list[str]] = {
    # first reply has an ungrounded quote, the retry is correct
    "The weather is sunny": [
        dump_reply(
            [
                unit("Highway 5", "status", "categorical", "closed", "Highway 5 is closed today", "yes"),
                unit("weather", "condition", "categorical", "sunny", "The weather is rainy", "no"),
            ],
            "route_planning",
            True,
        ),
        dump_reply(
            [
                unit("Highway 5", "status", "categorical", "closed", "Highway 5 is closed today", "yes"),
                unit("weather", "condition", "categorical", "sunny", "The weather is sunny", "no"),
            ],
            "route_planning",
            True,
        ),
    ],
    # a different attribute name for the same fact: merged by the equivalence check
    "Route 5 has been shut": [
        dump_reply(
            [unit("Highway 5", "road_status", "categorical", "closed", "Route 5 has been shut")],
            "route_planning",
            True,
        ),
    ],
    "Highway 5 is open again": [
        dump_reply(
            [unit("Highway 5", "status", "categorical", "open", "Highway 5 is open again")],
            "route_planning",
            False,
        ),
    ],
    # a free-text value the equivalence check maps onto an existing one
    "Pass 9 reports": [
        dump_reply(
            [unit("Highway 5", "status", "categorical", "impassable", "Highway 5 impassable")],
            "route_planning",
            True,
        ),
    ],
    # a supporting fact whose quote never matches: dropped after the retry, so the answer is unchecked
    "The tram runs every": [
        dump_reply(
            [
                unit(
                    "tram", "frequency", "categorical", "10 minutes", "The tram runs every 10 minutes", "no"
                ),
                unit("tram", "line", "categorical", "4", "Tram line 4 stops here", "yes"),
            ],
            "tram_frequency",
            True,
        ),
    ],
    # a quote that never matches: dropped after the retry, the rest is kept
    "The ferry runs hourly": [
        dump_reply(
            [
                unit("ferry", "frequency", "categorical", "hourly", "The ferry runs hourly"),
                unit("ferry", "price", "numeric", "3", "The ferry costs three"),
            ],
            "ferry_info",
            True,
        ),
    ],
    # never valid: broken JSON, then a numeric value that is not a number
    "The bridge toll": [
        "{not json",
        dump_reply([unit("bridge", "toll", "numeric", "cheap", "The bridge toll is cheap")], "toll", True),
    ],
}


def reply_fn(body: dict[str, Any], idx: int) -> ScriptedReply:
    fmt = body.get("response_format", {}).get("json_schema", {}).get("name")
    user = body["messages"][1]["content"]
    if fmt == "memtrim_key_match":
        # the only candidate offered for (highway 5, road_status) is (highway 5, status)
        same = "road_status" in user or "impassable" in user
        return ScriptedReply(content=json.dumps({"match": 1 if same else None}))
    for marker, replies in REPLIES.items():
        if marker in user:
            return ScriptedReply(content=replies[min(idx, len(replies) - 1)])
    return ScriptedReply(content=dump_reply([], "none", False))


@pytest.fixture
def server():
    with ScriptedServer(reply_fn) as srv:
        yield srv


def test_structured_call_grounding_retry_and_support(server: ScriptedServer) -> None:
    parser = LLMParser("scripted", base_url=server.base_url, api_key="unused")
    p = parser.parse(MEM_A, "Take Highway 9")
    assert p.ok and p.task == "route_planning"
    assert [(u.key.label(), u.value) for u in p.units] == [
        ("highway 5.status", "closed"),
        ("weather.condition", "sunny"),
    ]
    # span pointers resolve in the source text
    assert all(MEM_A[u.start : u.end] == u.span for u in p.units)
    # weather marked "no": not in the support set; status "yes": in it
    assert p.support == frozenset({0})
    # the retry carried the validation error back to the model
    first, second = server.requests[0], server.requests[1]
    assert first["response_format"]["type"] == "json_schema"
    assert first["temperature"] == 0
    retry_msg = second["messages"][-1]["content"]
    assert "failed validation" in retry_msg and "The weather is rainy" in retry_msg


def test_unparsable_memory_stays_but_its_answer_is_never_reused(server: ScriptedServer) -> None:
    parser = LLMParser("scripted", base_url=server.base_url, api_key="unused")
    trimmer = MemTrim(parser=parser)
    mem = trimmer.write(
        "toll", "The bridge toll is cheap. Which route is cheapest?", answer="Take the bridge"
    )
    assert not mem.parsed.ok and "not a number" in (mem.parsed.error or "")
    assert len([r for r in server.requests if "The bridge toll" in r["messages"][1]["content"]]) == 2
    res = trimmer.read("Which route is cheapest?", ["toll"])
    d = res.decisions["toll"]
    assert d.outcome == "suppressed" and not d.parsed_ok and "never reused" in d.reason
    assert "Take the bridge" not in res.context
    assert res.context == "" and d.lines == []  # it stays in the base store; nothing passes MemTrim


def test_key_equivalence_merges_keys_and_query_conflict_suppresses(server: ScriptedServer) -> None:
    trimmer = MemTrim(parser=LLMParser("scripted", base_url=server.base_url, api_key="unused"))
    trimmer.write("a", MEM_A, answer="Take Highway 9")
    trimmer.write("b", MEM_B, answer="Take Highway 9")
    ub = trimmer.memories["b"].parsed.units
    assert [u.key.label() for u in ub] == ["highway 5.status"]  # road_status merged into status
    key_calls = [
        r for r in server.requests if r["response_format"]["json_schema"]["name"] == "memtrim_key_match"
    ]
    assert key_calls and "highway 5" in key_calls[0]["messages"][1]["content"]
    node = trimmer.trie.lookup(ub[0].key)
    assert node is not None and set(node.values["closed"].holders) == {"a", "b"}
    res = trimmer.read(QUERY, ["a", "b"])
    for mid in ("a", "b"):
        d = res.decisions[mid]
        assert [u.value for u in d.conflicting] == ["closed"]
        assert d.outcome == "suppressed"
    assert "Take Highway 9" not in res.context
    assert "sunny" in res.context  # memory-only evidence survives


def test_ungrounded_unit_dropped_after_retry(server: ScriptedServer) -> None:
    parser = LLMParser("scripted", base_url=server.base_url, api_key="unused")
    p = parser.parse("The ferry runs hourly. How often does the ferry run?", "hourly")
    assert p.ok and p.dropped == 1
    assert [(u.key.label(), u.value) for u in p.units] == [("ferry.frequency", "hourly")]
    assert len([r for r in server.requests if "The ferry runs" in r["messages"][1]["content"]]) == 2


def test_free_text_value_equivalence(server: ScriptedServer) -> None:
    """A.1: after the key matched, a new textual value is checked against the key's values."""
    trimmer = MemTrim(parser=LLMParser("scripted", base_url=server.base_url, api_key="unused"))
    trimmer.write("a", MEM_A, answer="Take Highway 9")
    trimmer.write("c", "Pass 9 reports Highway 5 impassable. Which route should I take to City B?")
    (u,) = trimmer.memories["c"].parsed.units
    assert (u.key.label(), u.value, u.text) == ("highway 5.status", "closed", "impassable")
    value_calls = [r for r in server.requests if "New value: 'impassable'" in r["messages"][-1]["content"]]
    assert len(value_calls) == 1 and "1. 'closed'" in value_calls[0]["messages"][-1]["content"]
    res = trimmer.read(QUERY, ["a", "c"])  # "open" is checked too, judged different: a conflict
    assert [x.value for x in res.decisions["c"].conflicting] == ["closed"]


def test_dropped_supporting_unit_means_no_stored_answer(server: ScriptedServer) -> None:
    """A.1 + fail closed: the unit marked as support could not be grounded even after the retry;
    the same question later gets no stored answer, and the reason says why."""
    trimmer = MemTrim(parser=LLMParser("scripted", base_url=server.base_url, api_key="unused"))
    mem = trimmer.write(
        "t", "The tram runs every 10 minutes. How often does the tram run?", answer="10 minutes"
    )
    assert mem.parsed.ok and mem.parsed.dropped == 1 and mem.parsed.support_dropped == 1
    res = trimmer.read("How often does the tram run?", ["t"])
    d = res.decisions["t"]
    assert d.outcome == "suppressed" and "could not be traced to the memory text" in d.reason
    assert "10 minutes" not in res.context
