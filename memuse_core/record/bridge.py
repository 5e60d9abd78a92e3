"""The memory bridge API for Python hosts (MemUse 3.2, A.1.1 "Recording interface").

A host adapter reports task boundaries and delivery opportunities; a provider adapter reports memory
changes and searches. Both talk to the recorder through a `Bridge`, either in process
(`Bridge.local(recorder)`) or over HTTP to a running `memuse record proxy` (`Bridge.connect(url)`).

    bridge = Bridge.connect("http://127.0.0.1:8765")
    bridge.start_run(config="mem0", agent="mini-swe-agent 2.4.6")
    ep = bridge.start_episode(task_id="t1", task="Fix the parser")
    sid = bridge.memory_search("parser", results=[...])
    bridge.deliver(entries=[...], placements=[block_placement(text, "/messages/0/content", host)],
                   form="task_recall", search_id=sid, standing=True)
    ...  # the agent's model calls go through the proxy at /ep/<ep>/agent/v1
    bridge.end_episode(resolved=True, exit_status="Submitted")

A delivery's placements carry proofs (`placement`): a JSON pointer into the outbound request and
the digest of the placed text, optionally pinned to the host message's digest. The recorder
verifies them against the request it forwards and binds the delivery to that call.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..events import Entry, text_digest
from .recorder import AnnotationError, Recorder


class _Transport(Protocol):
    def send(self, op: str, args: dict[str, Any]) -> Any: ...


class _Local:
    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def send(self, op: str, args: dict[str, Any]) -> Any:
        return self.recorder.annotate(op, args)


class _Http:
    def __init__(self, url: str, timeout: float):
        u = urlsplit(url)
        self.host, self.port, self.timeout = u.hostname or "127.0.0.1", u.port or 80, timeout

    def send(self, op: str, args: dict[str, Any]) -> Any:
        body = json.dumps({"op": op, "args": args}).encode()
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request("POST", "/_memuse/annotate", body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = json.loads(resp.read() or b"{}")
        finally:
            conn.close()
        if resp.status != 200:
            raise AnnotationError(data.get("error", {}).get("message", f"HTTP {resp.status}"))
        return data.get("result")


def placement(
    text: str,
    json_pointer: str,
    *,
    host_text: str | None = None,
    slot: str = "system_suffix",
    kind: str = "block",
) -> dict[str, Any]:
    """A placement with its proof: pointer into the request, text digest, host-message digest."""
    proof: dict[str, Any] = {"json_pointer": json_pointer}
    if host_text is not None:
        proof["message_digest"] = text_digest(host_text)
        start = host_text.find(text)
        if start >= 0:
            proof["start"] = start
    return {"slot": slot, "kind": kind, "text": text, "digest": text_digest(text), "proof": proof}


def entry_dict(e: Entry | dict[str, Any]) -> dict[str, Any]:
    """An entry as a plain dict with its digest filled in."""
    d = e.model_dump(exclude_none=True) if isinstance(e, Entry) else dict(e)
    if d.get("value") is not None and not d.get("digest"):
        d["digest"] = text_digest(d["value"])
    return d


class Bridge:
    """Annotations from a host or provider adapter to the recorder (see module docstring)."""

    def __init__(self, transport: _Transport):
        self._t = transport
        self.episode_id: str | None = None
        self.run_id: str | None = None

    @classmethod
    def local(cls, recorder: Recorder) -> Bridge:
        """A bridge to a recorder in this process."""
        return cls(_Local(recorder))

    @classmethod
    def connect(cls, proxy_url: str, timeout: float = 30.0) -> Bridge:
        """A bridge to a `memuse record proxy` process at `proxy_url`."""
        return cls(_Http(proxy_url, timeout))

    # -- lifecycle ---------------------------------------------------------------------------
    def start_run(
        self,
        *,
        config: str,
        run_id: str | None = None,
        label: str | None = None,
        agent: str | None = None,
        model: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> str:
        """Start the run (before its first episode); returns the run id."""
        self.run_id = self._t.send(
            "start_run", _args(run_id=run_id, config=config, label=label, agent=agent, model=model, meta=meta)
        )
        return self.run_id  # type: ignore[return-value]

    def start_episode(
        self,
        task_id: str,
        *,
        task: str | None = None,
        repo: str | None = None,
        position: int = 0,
        reference: str | None = None,
        episode_id: str | None = None,
    ) -> str:
        """Start an episode; returns its id (also kept as the bridge's current episode)."""
        self.episode_id = self._t.send(
            "start_episode",
            _args(
                task_id=task_id,
                task=task,
                repo=repo,
                position=position,
                reference=reference,
                episode_id=episode_id,
            ),
        )
        return self.episode_id  # type: ignore[return-value]

    def end_episode(
        self, *, resolved: bool | None = None, exit_status: str | None = None, submission: str | None = None
    ) -> None:
        """End the current episode with its outcome."""
        self._t.send(
            "end_episode",
            _args(
                episode_id=self.episode_id, resolved=resolved, exit_status=exit_status, submission=submission
            ),
        )
        self.episode_id = None

    # -- memory ------------------------------------------------------------------------------
    def memory_change(
        self,
        item_id: str,
        op: str,
        *,
        value: str | None = None,
        namespace: str = "default",
        version: str | None = None,
        op_ref: str | None = None,
        origin_episode: str | None | bool = True,
    ) -> None:
        """An item was created, updated or deleted; by default its origin is the current episode."""
        ep = self.episode_id if origin_episode is True else (origin_episode or None)
        self._t.send(
            "memory_change",
            _args(
                item_id=item_id,
                op=op,
                value=value,
                namespace=namespace,
                version=version,
                op_ref=op_ref,
                episode_id=ep,
                run_id=self.run_id,
            ),
        )

    def memory_search(
        self,
        query: str,
        results: list[dict[str, Any]],
        *,
        route: str = "host",
        scope: str | None = None,
        search_id: str | None = None,
    ) -> str:
        """A search and its ranked results; returns the search id."""
        return self._t.send(
            "memory_search",
            _args(
                query=query,
                results=results,
                route=route,
                scope=scope,
                episode_id=self.episode_id,
                run_id=self.run_id,
                search_id=search_id,
            ),
        )

    @contextmanager
    def operation(self, op_ref: str) -> Iterator[str]:
        """Within the block, the memory system's model and embedding calls carry `op_ref`."""
        self._t.send("set_operation", _args(op_ref=op_ref, episode_id=self.episode_id))
        try:
            yield op_ref
        finally:
            self._t.send("set_operation", _args(episode_id=self.episode_id))

    def deliver(
        self,
        entries: Sequence[Entry | dict[str, Any]],
        placements: list[dict[str, Any]],
        *,
        route: str = "host",
        form: str = "task_recall",
        search_id: str | None = None,
        standing: bool = False,
    ) -> str:
        """Memory text placed into the next agent request (standing: restated on every call)."""
        return self._t.send(
            "deliver",
            _args(
                entries=[entry_dict(e) for e in entries],
                placements=placements,
                route=route,
                form=form,
                search_id=search_id,
                standing=standing,
                episode_id=self.episode_id,
            ),
        )

    def withdraw(self, delivery_id: str) -> None:
        """Stop restating a standing delivery."""
        self._t.send("withdraw", {"delivery_id": delivery_id, "episode_id": self.episode_id})

    def tool_result(
        self,
        output: str,
        *,
        tool_call_id: str | None = None,
        name: str | None = "bash",
        arguments: str | None = None,
        exit_code: int | None = None,
    ) -> None:
        """A tool execution's output, bound to the call that requested it."""
        self._t.send(
            "tool_result",
            _args(
                output=output,
                tool_call_id=tool_call_id,
                name=name,
                arguments=arguments,
                exit_code=exit_code,
                episode_id=self.episode_id,
            ),
        )


def _args(**kw: Any) -> dict[str, Any]:
    return {k: v for k, v in kw.items() if v is not None}
