"""MemTrim around a memory system (MemTrim 3.1 "plug-and-play", A.1 "parsed once"): Mem0's and
Letta's search results in, the same shape out with each memory trimmed or dropped and the
decisions; one index per user / agent / run; an index that follows adds, updates and deletes and
persists in a real DuckDB store; the README example runs and prints what the README says.
Expected outputs are written by hand."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from memuse_core.store import connect
from memuse_core.trim import DeterministicParser, MemoryFilter, ParsedInteraction, ScopedIndex, scope_key

ROOT = Path(__file__).resolve().parents[1]


def mem0(*memories: tuple[str, str]) -> dict:
    return {
        "results": [{"id": i, "memory": m, "score": 0.5, "metadata": {}} for i, m in memories],
        "relations": [{"source": "alice", "relationship": "lives_in", "target": "oslo"}],
    }


def test_mem0_shape_in_and_out() -> None:
    flt = MemoryFilter()
    hits = mem0(("a", "Lives in Oslo"), ("b", "Is vegetarian. Lives in Bergen."), ("c", "Likes hiking"))
    out = flt("I live in Bergen, what should I cook?", hits, user_id="alice")
    assert set(out) == {"results", "relations", "memtrim"}
    assert out["relations"] == hits["relations"]  # other keys pass through untouched
    assert out["results"] == [
        {"id": "b", "memory": "Is vegetarian.", "score": 0.5, "metadata": {}},
        {"id": "c", "memory": "Likes hiking", "score": 0.5, "metadata": {}},
    ]
    assert hits["results"][1]["memory"] == "Is vegetarian. Lives in Bergen."  # input not mutated
    assert [(d["id"], d["action"]) for d in out["memtrim"]["decisions"]] == [
        ("a", "dropped"),
        ("b", "trimmed"),
        ("c", "unchanged"),
    ]
    a, b, _ = out["memtrim"]["decisions"]
    assert a["removed_conflicting"] == ["user.lives_in"] and b["removed_shared"] == ["user.lives_in"]
    assert out["memtrim"]["scope"] == "user_id=alice"
    assert out["memtrim"]["context"] == (
        "From earlier interactions (facts the current request states were left out):\n"
        "- Is vegetarian.\n- Likes hiking"
    )


def test_letta_archival_search_and_passages() -> None:
    flt = MemoryFilter()
    search = {
        "count": 2,
        "results": [
            {"content": "Highway 5 is open.", "timestamp": "2026-01-02 10:00:00", "tags": ["roads"]},
            {"content": "The visitor center is open.", "timestamp": "2026-01-03 09:00:00", "tags": []},
        ],
    }
    out = flt("Highway 5 is closed. Which way should I drive?", search, agent_id="agent-1")
    assert out["count"] == 1
    assert out["results"] == [
        {"content": "The visitor center is open.", "timestamp": "2026-01-03 09:00:00", "tags": []}
    ]
    assert out["memtrim"]["decisions"][0]["id"].startswith("sha:")  # no ids: content-addressed
    passages = [
        {"id": "passage-1", "text": "Highway 5 is open.", "created_at": "2026-01-02T10:00:00Z"},
        {"id": "passage-2", "text": "Lives in Oslo", "created_at": "2026-01-03T10:00:00Z"},
    ]
    kept = flt("Highway 5 is closed. Which way?", passages, agent_id="agent-1")
    assert kept == [{"id": "passage-2", "text": "Lives in Oslo", "created_at": "2026-01-03T10:00:00Z"}]
    assert flt.last is not None and flt.last.decisions["passage-1"].conflicting


def test_scopes_never_see_each_other() -> None:
    """Two users hold a memory with the same id: each is trimmed against its own index."""
    flt = MemoryFilter()
    flt("hello?", mem0(("m", "Lives in Oslo")), user_id="alice")
    flt("hello?", mem0(("m", "Lives in Rome")), user_id="bob")
    assert flt.index.trimmer(user_id="alice").memories["m"].text == "Lives in Oslo"
    assert flt.index.trimmer(user_id="bob").memories["m"].text == "Lives in Rome"
    # alice's other memory cannot withhold bob's value: bob's scope never retrieved it
    flt("hello?", mem0(("n", "Lives in Paris")), user_id="alice")
    out = flt("Where should we meet?", mem0(("m", "Lives in Rome")), user_id="bob")
    assert [r["memory"] for r in out["results"]] == ["Lives in Rome"]
    assert scope_key(user_id="bob", agent_id="a") == "user_id=bob&agent_id=a" and scope_key() == "default"


def test_index_follows_adds_updates_and_deletes() -> None:
    flt = MemoryFilter()
    n = flt.follow(
        {
            "results": [
                {"id": "m1", "memory": "Lives in Oslo", "event": "ADD"},
                {"id": "m2", "memory": "Is vegetarian", "event": "ADD"},
                {"id": "m3", "memory": "Likes jazz", "event": "NONE"},
            ]
        },
        user_id="alice",
    )
    t = flt.index.trimmer(user_id="alice")
    assert n == 2 and sorted(t.memories) == ["m1", "m2"]
    flt.follow({"results": [{"id": "m1", "memory": "Lives in Bergen", "event": "UPDATE"}]}, user_id="alice")
    node = t.trie.lookup(t.memories["m1"].parsed.units[0].key)
    assert node is not None and set(node.values) == {"bergen"}  # the old value left the trie
    flt.follow({"results": [{"id": "m2", "memory": "Is vegetarian", "event": "DELETE"}]}, user_id="alice")
    assert sorted(t.memories) == ["m1"] and len(t.trie) == 1
    assert flt.delete("m1", user_id="alice") and len(t.trie) == 0 and not flt.delete("m1", user_id="alice")


class CountingParser(DeterministicParser):
    """A real parser that counts how often it is asked to parse."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def parse(self, text: str, answer: str | None = None) -> ParsedInteraction:
        self.calls += 1
        return super().parse(text, answer)


def test_index_persists_in_the_store_and_is_not_parsed_again(tmp_path: Path) -> None:
    db = tmp_path / "memtrim.duckdb"
    first = ScopedIndex(db=db)
    flt = MemoryFilter(first)
    hits = {
        "results": [
            {
                "id": "r",
                "memory": "Highway 5 is open. Weather: sunny. Question: Which route should I take?",
                "metadata": {"answer": "Take Highway 5", "support": "Highway 5"},
            },
            {"id": "v", "memory": "The visitor center is open.", "metadata": {}},
        ]
    }
    flt("Which route should I take?", hits, user_id="alice")
    flt("Which route should I take?", mem0(("x", "Lives in Oslo")), user_id="bob")
    first.delete("x", user_id="bob")
    con = connect(db, read_only=True)
    try:
        rows = con.execute(
            "SELECT scope, memory_id, answer, support FROM memtrim_memories ORDER BY 1, 2"
        ).fetchall()
    finally:
        con.close()
    assert rows == [
        ("user_id=alice", "r", "Take Highway 5", '["Highway 5"]'),
        ("user_id=alice", "v", None, None),
    ]
    parser = CountingParser()
    again = ScopedIndex(db=db, parser=parser)
    t = again.trimmer(user_id="alice")
    assert parser.calls == 0 and sorted(t.memories) == ["r", "v"]  # restored, not parsed again
    assert t.memories["r"].support == ("Highway 5",)
    res = MemoryFilter(again)("Weather: rainy. Which route should I take?", hits, user_id="alice")
    assert parser.calls == 1  # only the query
    r = res["memtrim"]["decisions"][0]
    assert r["outcome"] == "kept" and r["removed_conflicting"] == ["weather"]  # weather is not support
    assert res["results"][0]["memory"] == (
        "Highway 5 is open.\nAnswer given earlier to this same question: Take Highway 5"
    )


def test_readme_example_runs_and_prints_what_the_readme_says() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## MemTrim around your memory system", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    shown = re.search(r"prints\n\n```text\n(.*?)```", section, re.S)
    assert code and shown
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code.group(1), "README.md", "exec"), {})
    assert buf.getvalue() == shown.group(1)
