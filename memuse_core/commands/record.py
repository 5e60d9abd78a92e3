"""`memuse record proxy`: the pass-through recording proxy (MemUse 3.2)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import typer

from .common import fail

GROUP_HELP = "Record real agent runs (pass-through proxy, memory bridge)."


def proxy(
    upstream: str = typer.Option(
        ..., "--upstream", help="OpenAI-compatible base URL, e.g. https://api.openai.com/v1"
    ),
    out: Path = typer.Option(..., "--out", help="Event log to append to (JSON Lines)."),
    port: int = typer.Option(8765, "--port", help="Port to listen on (0: any free port)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    run_id: str | None = typer.Option(
        None, "--run-id", help="Run id for episodes the bridge does not start."
    ),
    config: str = typer.Option("recorded", "--config", help="Memory-system/config name of the run."),
    timeout: float = typer.Option(600.0, "--timeout", help="Upstream timeout in seconds."),
    verbose: bool = typer.Option(False, "--verbose", help="Log every request line (never headers)."),
    delta: bool = typer.Option(
        True,
        "--delta/--full-requests",
        help="Write each request as a delta of the "
        "episode's previous call when it repeats that call's messages (linear-size logs), "
        "or every request in full.",
    ),
) -> None:
    """Forward model calls to UPSTREAM unchanged and record each one as a `model_call` event.

    Point the agent at http://HOST:PORT/agent/v1 (the memory system at /memory/v1, embeddings at
    /embedding/v1; /ep/<episode_id>/agent/v1 binds an episode). Python hosts annotate memory with
    `memuse_core.record.Bridge.connect("http://HOST:PORT")`.
    """
    from urllib.parse import urlsplit

    from ..record import Recorder, RecordingProxy

    u = urlsplit(upstream)
    if u.scheme not in ("http", "https") or not u.hostname:
        fail(f"--upstream {upstream!r}: expected an http(s) URL such as http://127.0.0.1:8000/v1")
    try:
        recorder = Recorder(out, run_id=run_id, config=config, delta=delta)
    except OSError as e:
        fail(f"{out}: cannot open the event file for appending ({e.strerror})")
        return
    try:
        server = RecordingProxy(recorder, upstream, host=host, port=port, timeout=timeout, quiet=not verbose)
    except ValueError as e:
        fail(str(e))
        return
    except OSError as e:
        fail(f"--port {port}: cannot listen on {host}:{port} ({e.strerror})")
        return

    def stop(_sig: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    typer.echo(f"recording proxy on {server.url} -> {upstream}; events to {out}", err=True)
    sys.stderr.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        recorder.close()
        typer.echo(f"recorded {recorder.calls_recorded} calls to {out}", err=True)
