"""The Mem0 provider adapter's annotations (MemUse A.1.1), without the recording extras.

A small hand-written stand-in of `mem0.Memory` (a dict with Mem0's result shapes: ids, md5 `hash`,
`{"results": [...]}`) sits behind the adapter; the real Mem0 runs in tests/test_record_e2e.py.

Invariants: every add/update/delete becomes one `memory_change` with the item's namespace
`mem0:<scope>`, its Mem0 id and its content-hash version; a search becomes one `memory_search`
with ranked results; delivered entries carry portable references and the display key shown in the
rendered block; the recall block respects its character budget; after-episode extraction without
an LLM stores only the agent's closing note; the memory system's own model and embedding calls
(through the proxy) carry the operation reference of the generation or search they served.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path

import httpx

from memuse_core.events import parse_event
from memuse_core.record import Bridge, Recorder, serve
from memuse_core.record.adapters.mem0 import RECALL_HEADER, Mem0Provider
from memuse_core.record.scripted_upstream import ScriptedUpstream


class SmallMem0:
    """The subset of `mem0.Memory` the adapter uses, over a dict."""

    def __init__(self, llm_url: str | None = None, embed_url: str | None = None) -> None:
        self.items: dict[str, dict] = {}
        self.llm_url, self.embed_url = llm_url, embed_url

    def add(self, messages, user_id: str, metadata: dict | None = None, infer: bool = False) -> dict:
        iid = str(uuid.uuid4())
        text = messages if isinstance(messages, str) else messages[-1]["content"]
        if infer:  # like Mem0: an LLM call extracts the fact to store
            r = httpx.post(
                self.llm_url, json={"model": "m", "messages": [{"role": "user", "content": str(messages)}]}
            )
            text = r.json()["choices"][0]["message"]["content"]
        self.items[iid] = {
            "id": iid,
            "memory": text,
            "hash": hashlib.md5(text.encode()).hexdigest(),
            "metadata": metadata or {},
            "user_id": user_id,
        }
        return {"results": [{"id": iid, "memory": text, "event": "ADD"}]}

    def get(self, iid: str) -> dict | None:
        return self.items.get(iid)

    def update(self, iid: str, data: str) -> dict:
        self.items[iid].update(memory=data, hash=hashlib.md5(data.encode()).hexdigest())
        return {"message": "Memory updated successfully!"}

    def delete(self, iid: str) -> dict:
        del self.items[iid]
        return {"message": "Memory deleted successfully!"}

    def search(self, query: str, filters: dict, top_k: int = 5, **_: object) -> dict:
        if self.embed_url:  # like a remote embedder: one embedding call per search
            httpx.post(self.embed_url, json={"model": "e", "input": query})
        q = set(query.lower().split())
        hits = []
        for it in self.items.values():
            if it["user_id"] != filters["user_id"]:
                continue
            score = len(q & set(it["memory"].lower().split())) / max(1, len(q))
            hits.append({**it, "score": score})
        hits.sort(key=lambda h: -h["score"])
        return {"results": hits[:top_k]}


def test_mem0_operations_become_changes_and_searches(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    rec = Recorder(out, run_id="r")
    bridge = Bridge.local(rec)
    bridge.start_run(config="mem0")
    ep = bridge.start_episode("t1", task="fix the parser")
    mem = SmallMem0()
    prov = Mem0Provider(mem, bridge, max_chars=120)
    (a,) = prov.add("the parser lives in src/parse.py", "repo")
    (b,) = prov.add("run the tests with make check", "repo")
    prov.add("unrelated note in another scope", "other")
    sid, items = prov.search("where is the parser", "repo", top_k=2)
    assert [it.item_id for it in items] == [a, b]
    block, used = prov.render(items)
    assert block.startswith(RECALL_HEADER) and f"[mem0:{a[:8]}]" in block
    assert len(block) <= 120 and [it.item_id for it in used] == [a]  # the budget leaves the second out
    entries = prov.entries(used, "repo")
    assert entries[0]["namespace"] == "mem0:repo" and entries[0]["id_scheme"] == "mem0-uuid"
    assert entries[0]["display_key"] in block and entries[0]["value"] in block
    prov.update(a, "the parser lives in src/parsing/core.py", "repo")
    prov.delete(b, "repo")
    assert (
        prov.remember_episode(
            [
                {"role": "assistant", "content": "note one"},
                {"role": "tool", "content": "tool output"},
                {"role": "assistant", "content": ""},
            ],
            "repo",
        )
        == []
    )
    (c,) = prov.remember_episode(
        [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "Closing note: parser fixed."},
        ],
        "repo",
    )
    bridge.end_episode(resolved=True)
    rec.close()

    evs = [parse_event(json.loads(line)) for line in out.read_text().splitlines()]
    changes = [
        (e.op, e.item_id, e.namespace, e.version, e.episode_id) for e in evs if e.type == "memory_change"
    ]
    md5 = lambda s: hashlib.md5(s.encode()).hexdigest()  # noqa: E731
    assert changes[:2] == [
        ("create", a, "mem0:repo", md5("the parser lives in src/parse.py"), ep),
        ("create", b, "mem0:repo", md5("run the tests with make check"), ep),
    ]
    assert changes[3] == ("update", a, "mem0:repo", md5("the parser lives in src/parsing/core.py"), ep)
    assert changes[4] == ("delete", b, "mem0:repo", None, ep)
    assert changes[5][:2] == ("create", c) and mem.items[c]["memory"] == "Closing note: parser fixed."
    (search,) = [e for e in evs if e.type == "memory_search"]
    assert search.search_id == sid and search.scope == "repo" and search.route == "host"
    assert [(r.item_id, r.version) for r in search.results] == [
        (a, md5("the parser lives in src/parse.py")),
        (b, md5("run the tests with make check")),
    ]


def test_memory_system_calls_carry_their_operation_reference(tmp_path: Path) -> None:
    up = ScriptedUpstream(lambda b: {"content": "the build uses make check"}).start()
    out = tmp_path / "run.jsonl"
    rec = Recorder(out, run_id="r")
    px = serve(rec, up.url)
    bridge = Bridge.connect(px.url)
    bridge.start_episode("t1", task="task")
    mem = SmallMem0(
        llm_url=f"{px.url}/memory/v1/chat/completions", embed_url=f"{px.url}/embedding/v1/embeddings"
    )
    prov = Mem0Provider(mem, bridge)
    prov.remember_episode(
        [{"role": "user", "content": "task"}, {"role": "assistant", "content": "done"}], "repo", infer=True
    )
    sid, _ = prov.search("how do I build", "repo")
    bridge.end_episode()
    px.stop()
    up.stop()
    rec.close()
    evs = [parse_event(json.loads(line)) for line in out.read_text().splitlines()]
    change = next(e for e in evs if e.type == "memory_change")
    calls = {e.role: e for e in evs if e.type == "model_call"}
    assert change.value == "the build uses make check" and change.op_ref and change.op_ref.startswith("gen-")
    assert calls["memory"].op_ref == change.op_ref
    assert calls["embedding"].op_ref == sid == next(e for e in evs if e.type == "memory_search").search_id
