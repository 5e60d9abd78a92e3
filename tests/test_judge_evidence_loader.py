"""The judge's evidence loader (`store.evidence`) renders exactly what the record path renders:
`load_evidence(con, ids)[e] == episode_evidence(load_episode(con, e))` for every episode of
hand-made stores (memory in tool results, empty tool output, host blocks, resident copies), a demo
corpus, and the real recordings (text-action harnesses whose observations are the next input's
messages, tool-calling harnesses, an OpenHands recall)."""

from __future__ import annotations

from pathlib import Path

from memuse_core import demo
from memuse_core.builder import entry
from memuse_core.events import (
    EpisodeEnd,
    EpisodeStart,
    MemoryDelivery,
    Message,
    ModelCall,
    Placement,
    Proof,
    Request,
    Response,
    text_digest,
)
from memuse_core.judge.evidence import episode_evidence, load_evidence
from memuse_core.judge.examples import all_examples, resident_copy_episode, write_store
from memuse_core.store import connect
from memuse_core.store.reader import load_episodes


def _compare(db: Path) -> int:
    con = connect(db, read_only=True)
    try:
        ids = [r[0] for r in con.execute("SELECT episode_id FROM episodes ORDER BY episode_id").fetchall()]
        fast = load_evidence(con, ids)
        recs = load_episodes(con, ids)
    finally:
        con.close()
    assert set(fast) == set(ids)
    for e in ids:
        slow = episode_evidence(recs[e])
        got = fast[e]
        for f in ("task", "reference", "T", "steps", "step_refs", "memory", "delivery_step", "deliveries"):
            assert getattr(got, f) == getattr(slow, f), f"{e}: {f} differs"
        assert got == slow
    return len(ids)


def test_hand_made_episodes(tmp_path):
    eps = [*all_examples(), resident_copy_episode()]
    db = write_store(tmp_path, eps)
    assert _compare(db) == len(eps)
    # the selected example's fetch is a delivery in a tool result, referenced from the step before
    con = connect(db, read_only=True)
    try:
        ev = load_evidence(con, ["selected"])["selected"]
    finally:
        con.close()
    assert ev.memory and any(ev.step_refs.values())


def _text_action_episode(eid: str = "textual") -> list:
    """A mini-swe-agent-style episode: shell commands in the reply text, observations as the next
    input's user messages (one empty, one a list of text parts), memory arriving inside one."""
    card = "[card-7] use `calendar.monthrange` before building the date"
    obs = ["<returncode>0</returncode>\nsrc/dates.py", "", card]
    msgs = [
        Message(role="system", content="You are a shell agent."),
        Message(role="user", content="Fix parse_date."),
    ]
    events: list = [EpisodeStart(episode_id=eid, run_id="run-1", task_id=eid, task="Fix parse_date.")]
    for i in range(4):
        cid = f"{eid}-c{i + 1}"
        reply = f"Step {i + 1}.\n```bash\nls src{i}\n```"
        events.append(
            ModelCall(
                episode_id=eid,
                call_id=cid,
                request=Request(messages=list(msgs)),
                response=Response(content=reply),
            )
        )
        if i == 3:
            break
        if i == 2:  # the card arrives in the observation of step 3, consumed by step 4
            events.append(
                MemoryDelivery(
                    episode_id=eid,
                    delivery_id=f"{eid}-d1",
                    route="agent",
                    form="full_card",
                    consuming_call_id=f"{eid}-c4",
                    entries=[entry("card-7", card, namespace="cards")],
                    placements=[
                        Placement(
                            slot="observation",
                            kind="tool_output",
                            text=card,
                            proof=Proof(
                                message_index=len(msgs) + 1, message_digest=text_digest(card), start=0
                            ),
                        )
                    ],
                )
            )
        msgs = [
            *msgs,
            Message(role="assistant", content=reply),
            Message(role="user", content=[{"type": "text", "text": obs[i]}] if i == 1 else obs[i]),
        ]
    events.append(EpisodeEnd(episode_id=eid, resolved=True))
    return events


def test_text_action_harness(tmp_path):
    db = write_store(tmp_path, [_text_action_episode()])
    assert _compare(db) == 1
    con = connect(db, read_only=True)
    try:
        ev = load_evidence(con, ["textual"])["textual"]
    finally:
        con.close()
    assert ev.T == 4 and "src/dates.py" in ev.steps[1] and ev.step_refs[3] == ["textual-d1"]


def test_demo_corpus(tmp_path):
    db = tmp_path / "demo.duckdb"
    demo.build_demo(db, demo.DemoPlan(episodes=12, seed=5, mean_steps=14), build_context=True)
    assert _compare(db) >= 12


def test_real_recordings(tmp_path, import_real):
    db = tmp_path / "real.duckdb"
    con = connect(db)
    try:
        n_files = len(import_real(con))  # an importer crash fails; absent data skips
    finally:
        con.close()
    assert n_files >= 10
    assert _compare(db) > 100
