"""mini-swe-agent host adapter (MemUse A.1.1 "Recording interface", 4.1 Mem0 delivery styles).

Runs mini-swe-agent 2.x tasks through the recording proxy and reports to the bridge:

* task boundaries: one episode per task (`bridge.start_episode` / `end_episode` with the outcome of
  a check command), the agent's model pointed at `<proxy>/ep/<episode_id>/agent/v1`;
* host-scheduled task recall: before the task the host searches the repository scope with the task
  text and the rendered block reaches the system message through the template variable
  `memory_recall` (never pasted into the Jinja template, whose syntax memory text could break). It
  is a standing delivery: restated, and re-verified by the recorder, on every call;
* an agent-directed memory tool: the shell command `memory search "<query>"` (and `memory add
  "<text>"`), served by a small HTTP endpoint in the host process that owns the Mem0 store. The
  tool result that carries a search's output is a delivery whose placement is that tool message;
* tool results: every executed action's observation, bound to the tool call that asked for it;
* after the episode: extraction into memory (`Mem0Provider.remember_episode`).

Proofs are computed from the agent's own message list right before each model call: the JSON
pointer `/messages/<i>/content` into the request mini-swe-agent is about to send, the digest of the
placed text and of the host message. The recorder checks them against the bytes it forwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..bridge import Bridge, placement
from .mem0 import Mem0Provider

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.config import get_config_from_spec  # noqa: E402
from minisweagent.environments.local import LocalEnvironment  # noqa: E402
from minisweagent.models.litellm_model import LitellmModel  # noqa: E402

try:  # LiteLLM prints a provider banner on every cost lookup of an unknown model; keep logs readable
    import litellm  # noqa: E402

    litellm.suppress_debug_info = True
except ImportError:  # pragma: no cover - LitellmModel imports it
    pass

RECALL_SNIPPET = "{% if memory_recall %}\n\n{{ memory_recall }}{% endif %}"
TOOL_SNIPPET = (
    "{% if memory_tool %}\n\nA shared memory of earlier tasks is available as a shell command: "
    '`memory search "<query>"` lists stored notes, `memory add "<note>"` stores one.{% endif %}'
)

_TOOL_SCRIPT = '''#!{python}
"""memory: the agent's memory tool (talks to the host process that owns the memory store)."""
import json, os, sys, urllib.request
def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("search", "add"):
        print('usage: memory search "<query>" | memory add "<note>"', file=sys.stderr)
        return 2
    req = urllib.request.Request(os.environ["MEMUSE_MEMORY_TOOL"] + "/" + sys.argv[1],
                                 data=json.dumps({{"text": " ".join(sys.argv[2:])}}).encode(),
                                 headers={{"Content-Type": "application/json"}})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))
    with opener.open(req, timeout=120) as r:
        print(json.loads(r.read())["output"])
    return 0
sys.exit(main())
'''


def default_templates() -> dict[str, Any]:
    """mini-swe-agent's own `mini.yaml` agent and model settings, with the memory variables added."""
    cfg = get_config_from_spec("mini.yaml")
    agent = dict(cfg["agent"])
    agent["system_template"] = agent["system_template"].rstrip("\n") + TOOL_SNIPPET + RECALL_SNIPPET
    agent.pop("mode", None)
    model = {
        k: v
        for k, v in cfg.get("model", {}).items()
        if k in ("observation_template", "format_error_template")
    }
    return {"agent": agent, "model": model}


@dataclass
class _ToolDelivery:
    text: str
    entries: list[dict[str, Any]]
    search_id: str


class RecordingAgent(DefaultAgent):
    """DefaultAgent that lets its host annotate deliveries and tool results around each step."""

    def __init__(self, model: Any, env: Any, *, host: MiniSweHost, **kwargs: Any):
        super().__init__(model, env, **kwargs)
        self.host = host

    def query(self) -> dict:
        self.host.before_query(self.messages)
        return super().query()

    def execute_actions(self, message: dict) -> list[dict]:
        obs = super().execute_actions(message)
        self.host.after_actions(message, obs)
        return obs


class _ToolHandler(BaseHTTPRequestHandler):
    server: _ToolServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        try:
            text = str(json.loads(self.rfile.read(n) or b"{}").get("text", ""))
            op = self.path.strip("/")
            out = self.server.host.tool_search(text) if op == "search" else self.server.host.tool_add(text)
            status = 200
        except Exception as e:  # the agent sees a one-line error, the host keeps running
            out, status = f"memory tool error: {type(e).__name__}: {e}", 200
        data = json.dumps({"output": out}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _ToolServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: MiniSweHost):
        self.host = host
        super().__init__(("127.0.0.1", 0), _ToolHandler)


@dataclass
class MiniSweHost:
    """Runs a task sequence with mini-swe-agent + a recorded Mem0 (see module docstring)."""

    bridge: Bridge
    provider: Mem0Provider
    proxy_url: str
    model_name: str
    scope: str
    """Mem0 scope (user_id) of the repository: recall and extraction both use it."""
    model_kwargs: dict[str, Any] = field(default_factory=dict)
    agent_config: dict[str, Any] = field(default_factory=dict)
    """Overrides of the mini.yaml agent settings (step_limit, templates...)."""
    model_config: dict[str, Any] = field(default_factory=dict)
    """Overrides of the mini.yaml model settings (observation_template...)."""
    top_k: int = 5
    memory_tool: bool = True
    infer: bool = False
    """Extract memories with Mem0's LLM after each episode (True) or store the agent's last note."""
    output_dir: Path | None = None
    _recall: tuple[str, list[dict[str, Any]], str] | None = None
    _recall_sent: bool = False
    _pending: list[_ToolDelivery] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._bin = Path(tempfile.mkdtemp(prefix="memuse-tool-"))
        script = self._bin / "memory"
        script.write_text(_TOOL_SCRIPT.format(python=sys.executable))
        script.chmod(0o755)
        self._server = _ToolServer(self)
        threading.Thread(target=self._server.serve_forever, name="memory-tool", daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- one task ------------------------------------------------------------------------------
    def run_task(
        self, task_id: str, task: str, repo_dir: str | Path, *, position: int = 0, check: str | None = None
    ) -> dict[str, Any]:
        """One episode: recall, agent run through the proxy, outcome check, extraction."""
        ep = self.bridge.start_episode(task_id, task=task, repo=self.scope, position=position)
        sid, items = self.provider.search(task, self.scope, route="host", top_k=self.top_k)
        block, used = self.provider.render(items)
        self._recall = (block, self.provider.entries(used, self.scope), sid) if block else None
        self._recall_sent = False
        self._pending = []
        tmpl = default_templates()
        model = LitellmModel(
            model_name=self.model_name,
            model_kwargs={
                "drop_params": True,
                **self.model_kwargs,
                "api_base": f"{self.proxy_url}/ep/{ep}/agent/v1",
            },
            cost_tracking="ignore_errors",
            **{**tmpl["model"], **self.model_config},
        )
        env = LocalEnvironment(
            cwd=str(repo_dir),
            env={
                "PATH": f"{self._bin}:{os.environ.get('PATH', '')}",
                "MEMUSE_MEMORY_TOOL": f"http://127.0.0.1:{self._server.server_address[1]}",
                "PAGER": "cat",
                "MANPAGER": "cat",
                "LESS": "-R",
                "PIP_PROGRESS_BAR": "off",
                "TQDM_DISABLE": "1",
            },
        )
        out = self.output_dir / f"{ep}.traj.json" if self.output_dir else None
        agent = RecordingAgent(
            model,
            env,
            host=self,
            **{**tmpl["agent"], "cost_limit": 0, "output_path": out, **self.agent_config},
        )
        try:
            result = agent.run(task, memory_recall=block, memory_tool=self.memory_tool)
        except Exception as e:  # the harness failed: still close the episode with its status
            result = {"exit_status": type(e).__name__, "submission": ""}
        resolved = None
        if check:
            resolved = (
                subprocess.run(
                    check, shell=True, cwd=str(repo_dir), capture_output=True, timeout=300
                ).returncode
                == 0
            )
        self.provider.remember_episode(agent.messages, self.scope, infer=self.infer)
        self.bridge.end_episode(
            resolved=resolved, exit_status=result.get("exit_status"), submission=result.get("submission")
        )
        return {
            "episode_id": ep,
            "resolved": resolved,
            "exit_status": result.get("exit_status"),
            "steps": agent.n_calls,
            "messages": agent.messages,
        }

    # -- hooks -----------------------------------------------------------------------------------
    def before_query(self, messages: list[dict]) -> None:
        """Announce deliveries with proofs into the request about to be sent."""
        if self._recall is not None and not self._recall_sent and messages:
            block, entries, sid = self._recall
            host = messages[0].get("content")
            host_text = host if isinstance(host, str) else None
            self.bridge.deliver(
                entries,
                [placement(block, "/messages/0/content", host_text=host_text)],
                form="task_recall",
                search_id=sid,
                standing=True,
            )
            self._recall_sent = True
        with self._lock:
            pending, self._pending = self._pending, []
        for p in pending:
            idx = _find_tool_message(messages, p.text)
            if idx is None:
                pl = {"slot": "tool_result", "kind": "tool_output", "text": p.text}
            else:
                content = messages[idx]["content"]
                pl = placement(
                    content,
                    f"/messages/{idx}/content",
                    host_text=content,
                    slot="tool_result",
                    kind="tool_output",
                )
            self.bridge.deliver(p.entries, [pl], route="agent", form="search_result", search_id=p.search_id)

    def after_actions(self, message: dict, observations: list[dict]) -> None:
        """Report each executed action's observation as a tool result."""
        actions = message.get("extra", {}).get("actions", [])
        for action, obs in zip(actions, observations):
            extra = obs.get("extra", {})
            content = obs.get("content")
            self.bridge.tool_result(
                content if isinstance(content, str) else json.dumps(content),
                tool_call_id=action.get("tool_call_id"),
                arguments=action.get("command"),
                exit_code=extra.get("returncode"),
            )

    # -- the agent's memory tool -------------------------------------------------------------------
    def tool_search(self, query: str) -> str:
        sid, items = self.provider.search(query, self.scope, route="agent", top_k=self.top_k)
        if not items:
            text = f"No memories match {query!r}."
        else:
            lines = [f"Memory search results for {query!r}:"]
            lines += [f"- [{it.kind}] {it.value} [{it.display_key}]" for it in items]
            text = "\n".join(lines)
        with self._lock:
            self._pending.append(_ToolDelivery(text, self.provider.entries(items, self.scope), sid))
        return text

    def tool_add(self, text: str) -> str:
        ids = self.provider.add(text, self.scope, metadata={"type": "note"})
        return "stored " + ", ".join(f"mem0:{i[:8]}" for i in ids)


def _find_tool_message(messages: list[dict], text: str) -> int | None:
    """The latest tool/user message that carries `text` verbatim or JSON-encoded."""
    for i in range(len(messages) - 1, 0, -1):
        m = messages[i]
        if m.get("role") not in ("tool", "user"):
            continue
        c = m.get("content")
        if not isinstance(c, str):
            continue
        if text in c:
            return i
        try:
            obj = json.loads(c)
        except ValueError:
            continue
        if isinstance(obj, dict) and any(isinstance(v, str) and text in v for v in obj.values()):
            return i
    return None
