"""Reading a request off the wire before it is forwarded: framing checks, limits and deadlines.

The recording proxy answers for every request it accepts, so a request it cannot frame is refused
at once with one clear sentence and a 4xx status, and the connection is closed:

* `Content-Length` must be one plain decimal number of bytes (`-1`, `1e3`, `0x10`, `+5`, non-ASCII
  digits and two different values are refused with 400), at most `max_body` bytes (413);
  `Content-Length` together with `Transfer-Encoding: chunked` is refused (400: the two framings
  could disagree about where the body ends);
* the headers together may be at most `MAX_HEADER_BYTES` (431); the standard library already
  refuses a request line over 64 KiB (414), a header line over 64 KiB and more than 100 headers (431);
* the head (request line and headers) must be complete within `read_timeout` of its first byte
  (`HeadReader`; 408 once the request line is in), however slowly it trickles in; a kept-alive
  connection may wait `idle_timeout` for that first byte;
* the body must keep arriving: no gap longer than `read_timeout`, and all of it within
  `read_timeout + length / MIN_BODY_RATE` seconds (408), so a client that sends less than it
  announced, or trickles it (slowloris), frees its handler after a short wait; a client that hangs
  up early gets 400.

Nothing here records anything: refused requests never reach the recorder.
"""

from __future__ import annotations

import re
import socket
import time
from email.message import Message
from io import BufferedIOBase

MAX_HEADER_BYTES = 64 * 1024
"""Largest total size of a request's header lines."""
MIN_BODY_RATE = 64 * 1024
"""Bytes per second a body must average, beyond the first `read_timeout` seconds."""

_DECIMAL = re.compile(r"[0-9]{1,19}")
_HEX = re.compile(rb"[0-9a-fA-F]{1,15}")


class Refused(Exception):
    """A request the proxy will not forward: HTTP status and the one-sentence reason."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def header_bytes(headers: Message) -> int:
    """Size of the header lines as sent (name, `: `, value, CRLF)."""
    return sum(len(k) + len(v) + 4 for k, v in headers.items())


def content_length(values: list[str], max_body: int) -> int:
    """The announced body length, or `Refused` (see module docstring)."""
    distinct = {v.strip() for v in values}
    if len(distinct) > 1:
        shown = ", ".join(sorted(repr(v[:20]) for v in distinct))
        raise Refused(400, f"conflicting Content-Length headers ({shown}); send exactly one")
    (v,) = distinct
    if not _DECIMAL.fullmatch(v):
        raise Refused(400, f"Content-Length {v[:40]!r} is not a whole number of bytes")
    n = int(v)
    if n > max_body:
        raise Refused(413, f"Content-Length {n} is over the proxy's limit of {max_body} bytes")
    return n


def _arm(sock: socket.socket, timeout: float) -> None:
    """Make the next read wait at most `timeout` (and not much less): a syscall only on change."""
    cur = sock.gettimeout()
    if cur is None or cur > timeout or cur < timeout / 2:
        sock.settimeout(timeout)


class HeadReader(BufferedIOBase):
    """The handler's `rfile` while request heads are read: a `readline` with a deadline.

    The first byte of a request may take `idle` seconds (a kept-alive connection between calls);
    from then on the whole head must arrive within `read_timeout`, or `readline` raises
    `TimeoutError` (which the standard library's handler turns into a closed connection). Bodies
    are read from `inner` by `read_body`.
    """

    def __init__(self, inner: BufferedIOBase, sock: socket.socket, *, idle: float, read_timeout: float):
        self.inner = inner
        self.sock = sock
        self.idle = idle
        self.read_timeout = read_timeout
        self.until: float | None = None

    def new_request(self) -> None:
        self.until = None

    def close(self) -> None:
        self.inner.close()
        super().close()

    def readable(self) -> bool:
        return True

    def readline(self, limit: int | None = -1) -> bytes:
        limit = -1 if limit is None else limit
        out = bytearray()
        while limit < 0 or len(out) < limit:
            if self.until is None:
                _arm(self.sock, self.idle)
            else:
                left = self.until - time.monotonic()
                if left <= 0:
                    raise TimeoutError("request head not complete within the read timeout")
                _arm(self.sock, min(left, self.read_timeout))
            buffered = self.inner.peek(1)  # type: ignore[attr-defined]
            if not buffered:
                break
            if self.until is None:
                self.until = time.monotonic() + self.read_timeout
            want = len(buffered) if limit < 0 else min(len(buffered), limit - len(out))
            nl = buffered.find(b"\n", 0, want)
            out += self.inner.read(nl + 1 if nl >= 0 else want)
            if nl >= 0:
                break
        return bytes(out)


class _Deadline:
    """A per-read gap timeout and an overall deadline on one socket."""

    def __init__(self, sock: socket.socket, read_timeout: float, expected: int):
        self.sock = sock
        self.gap = read_timeout
        self.until = time.monotonic() + read_timeout + expected / MIN_BODY_RATE

    def arm(self, got: int, expected: int | None) -> None:
        left = self.until - time.monotonic()
        if left <= 0:
            raise Refused(408, _late(got, expected, "too slowly"))
        _arm(self.sock, min(left, self.gap))


def _late(got: int, expected: int | None, how: str) -> str:
    of = f" of {expected}" if expected is not None else ""
    return f"request body arrived {how}: {got}{of} bytes before the read timeout; nothing was forwarded"


def _read_exact(rfile: BufferedIOBase, n: int, dl: _Deadline, total: int | None, done: int = 0) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        dl.arm(done + len(buf), total)
        try:
            chunk = rfile.read1(n - len(buf))
        except TimeoutError:
            raise Refused(408, _late(done + len(buf), total, "incompletely")) from None
        if not chunk:
            of = f" of {total}" if total is not None else ""
            raise Refused(400, f"request body cut off: the client closed after {done + len(buf)}{of} bytes")
        buf += chunk
    return bytes(buf)


def _read_line(rfile: BufferedIOBase, dl: _Deadline, got: int) -> bytes:
    dl.arm(got, None)
    try:
        line = rfile.readline(1024)
    except TimeoutError:
        raise Refused(408, _late(got, None, "incompletely")) from None
    if not line.endswith(b"\n"):
        if not line:
            raise Refused(400, f"request body cut off: the client closed after {got} bytes")
        raise Refused(400, "malformed chunked body: a chunk-size line is too long or unterminated")
    return line


def _read_chunked(rfile: BufferedIOBase, dl: _Deadline, max_body: int) -> bytes:
    parts: list[bytes] = []
    got = 0
    while True:
        size_field = _read_line(rfile, dl, got).split(b";", 1)[0].strip()
        if not _HEX.fullmatch(size_field):
            raise Refused(400, f"malformed chunked body: chunk size {size_field[:20]!r} is not hexadecimal")
        size = int(size_field, 16)
        if size == 0:
            while _read_line(rfile, dl, got) not in (b"\r\n", b"\n"):  # trailer fields, ignored
                pass
            return b"".join(parts)
        if got + size > max_body:
            raise Refused(413, f"chunked body is over the proxy's limit of {max_body} bytes")
        dl.until += size / MIN_BODY_RATE
        parts.append(_read_exact(rfile, size, dl, None, got))
        got += size
        if _read_line(rfile, dl, got) not in (b"\r\n", b"\n"):
            raise Refused(400, "malformed chunked body: a chunk is longer than its size says")


def read_body(
    headers: Message, rfile: BufferedIOBase, sock: socket.socket, *, read_timeout: float, max_body: int
) -> bytes:
    """The request body, framed by Content-Length or chunked encoding, or `Refused`."""
    lengths = headers.get_all("Content-Length") or []
    chunked = "chunked" in (headers.get("Transfer-Encoding") or "").lower()
    if chunked and lengths:
        raise Refused(400, "both Content-Length and Transfer-Encoding: chunked were sent; send one")
    if chunked:
        return _read_chunked(rfile, _Deadline(sock, read_timeout, 0), max_body)
    if not lengths:
        return b""
    n = content_length(lengths, max_body)
    return _read_exact(rfile, n, _Deadline(sock, read_timeout, n), n) if n else b""
