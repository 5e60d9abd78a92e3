"""Hostile requests to the recording proxy: raw HTTP bytes sent over a socket.

Each case's generator writes one raw request (`<name>.http`); the runner starts a scripted
upstream and an in-process recording proxy with a short read timeout, records one good call, plays
the case (`send`: all at once, then `stall` with the connection left open, `half_close`, or
`trickle` a few bytes at a time), and reads the answer to the end. Nothing the proxy refuses may
reach the event file (the bytes written before are unchanged and nothing is added); a body the
recorder cannot parse is forwarded and recorded once, unparsed, with the reason. Afterwards the
proxy must still answer and record a good call.
"""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Callable
from pathlib import Path

from hostile_cases import RUNNERS, Case, Outcome, case, sha256_file

from memuse_core.record import Recorder
from memuse_core.record.proxy import RecordingProxy
from memuse_core.record.scripted_upstream import ScriptedUpstream

READ_TIMEOUT = 0.3
"""The proxy's read timeout in these cases (its default is 10 s)."""
ANSWER_WAIT = 15.0
"""How long the client waits for an answer: far beyond the read timeout, so a hang fails the case."""
CHAT = "/agent/v1/chat/completions"
GOOD = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]}).encode()


def head(*lines: bytes, path: str = CHAT) -> bytes:
    """A request head (with `Connection: close`, so an answer ends with the connection)."""
    base = [f"POST {path} HTTP/1.1".encode(), b"Host: hostile", b"Content-Type: application/json"]
    return b"\r\n".join([*base, *lines, b"Connection: close"]) + b"\r\n\r\n"


def request(body: bytes, *lines: bytes, path: str = CHAT) -> bytes:
    return head(b"Content-Length: %d" % len(body), *lines, path=path) + body


def _write(d: Path, name: str, data: bytes) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{name}.http"
    p.write_bytes(data)
    return p


def deep(n: int) -> bytes:
    return b"[" * n + b"]" * n


# -- the cases ---------------------------------------------------------------------------------
NOT_A_NUMBER = r"Content-Length .* is not a whole number of bytes"

for _name, _value in [
    ("content_length_negative", b"-1"),
    ("content_length_non_numeric", b"abc"),
    ("content_length_float", b"1e3"),
    ("content_length_hex", b"0x10"),
    ("content_length_signed", b"+5"),
    ("content_length_empty", b""),
    ("content_length_unicode_digits", "\u0661\u0662".encode()),
]:
    case(_name, "recorder", code=400, message=NOT_A_NUMBER)(
        lambda d, n=_name, v=_value: _write(d, n, head(b"Content-Length: " + v) + GOOD)
    )


@case(
    "content_length_absurd", "recorder", code=413, message=r"Content-Length 10{18} is over the proxy's limit"
)
def _(d: Path) -> Path:
    return _write(d, "content_length_absurd", head(b"Content-Length: 1" + b"0" * 18) + GOOD)


@case("content_length_conflicting", "recorder", code=400, message=r"conflicting Content-Length headers")
def _(d: Path) -> Path:
    return _write(d, "content_length_conflicting", head(b"Content-Length: 5", b"Content-Length: 6") + GOOD)


@case("content_length_and_chunked", "recorder", code=400, message=r"both Content-Length and .*chunked")
def _(d: Path) -> Path:
    body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(GOOD), GOOD)
    return _write(
        d, "content_length_and_chunked", head(b"Content-Length: 5", b"Transfer-Encoding: chunked") + body
    )


@case(
    "chunked_bad_size",
    "recorder",
    code=400,
    message=r"malformed chunked body: chunk size .* is not hexadecimal",
)
def _(d: Path) -> Path:
    return _write(d, "chunked_bad_size", head(b"Transfer-Encoding: chunked") + b"zz\r\n" + GOOD)


@case("chunked_truncated", "recorder", code=400, message=r"request body cut off", send="half_close")
def _(d: Path) -> Path:
    return _write(d, "chunked_truncated", head(b"Transfer-Encoding: chunked") + b"400\r\n" + GOOD[:10])


@case("body_missing", "recorder", code=408, message=r"arrived incompletely: 0 of 100 bytes", send="stall")
def _(d: Path) -> Path:
    return _write(d, "body_missing", head(b"Content-Length: 100"))


@case(
    "body_shorter_than_length", "recorder", code=408, message=r"incompletely: 10 of 100 bytes", send="stall"
)
def _(d: Path) -> Path:
    return _write(d, "body_shorter_than_length", head(b"Content-Length: 100") + GOOD[:10])


@case(
    "body_cut_off_by_close",
    "recorder",
    code=400,
    message=r"cut off: the client closed after 10 of 100",
    send="half_close",
)
def _(d: Path) -> Path:
    return _write(d, "body_cut_off_by_close", head(b"Content-Length: 100") + GOOD[:10])


@case(
    "slowloris_body",
    "recorder",
    code=408,
    message=r"request body arrived (too slowly|incompletely)",
    send="trickle",
    whole=True,
)
def _(d: Path) -> Path:
    return _write(d, "slowloris_body", request(b"x" * 20000))


@case(
    "slowloris_headers",
    "recorder",
    code=408,
    message=r"request headers did not arrive within the read timeout",
    send="trickle",
)
def _(d: Path) -> Path:
    endless = b"".join(b"X-Slow-%d: 1\r\n" % i for i in range(90))
    return _write(d, "slowloris_headers", f"POST {CHAT} HTTP/1.1\r\nHost: hostile\r\n".encode() + endless)


@case("headers_stalled", "recorder", code=408, message=r"request headers did not arrive", send="stall")
def _(d: Path) -> Path:
    return _write(d, "headers_stalled", f"POST {CHAT} HTTP/1.1\r\nHost: hostile\r\nContent-Le".encode())


@case("header_line_huge", "recorder", code=431, message=r"Line too long")
def _(d: Path) -> Path:
    return _write(d, "header_line_huge", request(GOOD, b"X-Huge: " + b"a" * 70000))


@case("headers_too_many", "recorder", code=431, message=r"Too many headers")
def _(d: Path) -> Path:
    return _write(d, "headers_too_many", request(GOOD, *[b"X-H%d: 1" % i for i in range(150)]))


@case("headers_total_huge", "recorder", code=431, message=r"request headers total \d+ bytes, over the limit")
def _(d: Path) -> Path:
    return _write(
        d, "headers_total_huge", request(GOOD, *[b"X-H%d: %s" % (i, b"a" * 1000) for i in range(90)])
    )


@case("request_line_huge", "recorder", code=414, message=r"URI Too Long")
def _(d: Path) -> Path:
    return _write(d, "request_line_huge", request(GOOD, path=CHAT + "?q=" + "a" * 70000))


def _unparsed(reason: str, status: str) -> Callable[[Outcome], None]:
    def check(out: Outcome) -> None:
        calls = [e for e in out.added if e["type"] == "model_call"]
        assert len(calls) == 1, out.added
        req = calls[0]["request"]
        assert req["messages"] == [] and req["unparsed_body"], req.keys()
        assert reason in req["unparsed_reason"], req["unparsed_reason"]
        assert calls[0]["status"] == status

    return check


@case(
    "json_nested_100k",
    "recorder",
    code=400,
    message=r"invalid JSON",  # the upstream's own answer, relayed
    added=1,
    check=_unparsed("too deep for the JSON parser", "error"),
)
def _(d: Path) -> Path:
    return _write(d, "json_nested_100k", request(deep(100_000)))


@case(
    "json_nested_past_limit",
    "recorder",
    code=200,  # the upstream parses 500 levels and answers: the agent gets its answer
    message=r"",
    added=1,
    check=_unparsed("nested deeper than 100 levels", "ok"),
)
def _(d: Path) -> Path:
    body = b'{"model": "m", "messages": [{"role": "user", "content": "x", "meta": %s}]}' % deep(500)
    return _write(d, "json_nested_past_limit", request(body))


@case(
    "body_not_json",
    "recorder",
    code=400,
    message=r"invalid JSON",
    added=1,
    check=_unparsed("request body is not JSON", "error"),
)
def _(d: Path) -> Path:
    return _write(d, "body_not_json", request(b"\xff\xfe{not json at all"))


@case(
    "annotation_nested_100k", "recorder", code=400, message=r"annotation body nested deeper than 100 levels"
)
def _(d: Path) -> Path:
    return _write(d, "annotation_nested_100k", request(deep(100_000), path="/_memuse/annotate"))


# -- the runner ----------------------------------------------------------------------------------
def _read_all(sock: socket.socket) -> bytes:
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except OSError:  # reset or timeout: keep what came
        pass
    return data


def _answered(sock: socket.socket) -> bool:
    return bool(select.select([sock], [], [], 0)[0])


def _play(port: int, raw: bytes, opts: dict) -> bytes:
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(ANSWER_WAIT)
    try:
        mode = opts.get("send", "all")
        if mode == "trickle":
            cut = raw.index(b"\r\n\r\n") + 4 if opts.get("whole") else 0
            s.sendall(raw[:cut])
            for i in range(cut, len(raw), 20):
                if _answered(s):
                    break
                try:
                    s.sendall(raw[i : i + 20])
                except OSError:
                    break
                time.sleep(0.02)
        else:
            try:
                s.sendall(raw)
            except OSError:  # the proxy may refuse before it has read everything
                pass
            if mode == "half_close":
                s.shutdown(socket.SHUT_WR)
        return _read_all(s)
    finally:
        s.close()


def _parse(answer: bytes) -> tuple[int | None, str]:
    if not answer.startswith(b"HTTP/1."):
        return None, answer[:200].decode("latin-1")
    status_line, _, rest = answer.partition(b"\r\n")
    parts = status_line.decode("latin-1").split(" ", 2)
    body = rest.partition(b"\r\n\r\n")[2]
    try:
        msg = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        msg = parts[2] if len(parts) > 2 else ""
    return int(parts[1]), str(msg)


def _good(port: int) -> int | None:
    return _parse(_play(port, request(GOOD), {}))[0]


def run_recorder(c: Case, raw_path: Path, scratch: Path) -> Outcome:
    up = ScriptedUpstream(lambda body: {"content": "ok"}).start()
    out = scratch / "run.jsonl"
    rec = Recorder(out, run_id="hostile")
    px = RecordingProxy(rec, up.url, read_timeout=READ_TIMEOUT).start()
    port = px.server_address[1]
    try:
        assert _good(port) == 200 and rec.calls_recorded == 1
        size, before = out.stat().st_size, sha256_file(out)
        code, message = _parse(_play(port, raw_path.read_bytes(), c.options))
        data = out.read_bytes()
        added = [json.loads(line) for line in data[size:].splitlines()]
        after = sha256_file(out, limit=size)
        n = rec.calls_recorded
        continued = _good(port) == 200 and rec.calls_recorded == n + 1
    finally:
        px.stop()
        up.stop()
        rec.close()
    return Outcome(code, message, before, after, added, continued)


RUNNERS["recorder"] = run_recorder
