"""A proxy in front of the test S3 server that injects faults into the requests its rules match and
forwards every other request unchanged, so that the clients' retries, and what the jobs do when the
retries run out, are what is tested.

A rule says which requests (``Match``: method, a pattern in the object key, query parameters, the
``Range`` header), what to do with them (``S3Error``: an error answer such as 503 SlowDown or 500
InternalError; ``Reset``: a TCP reset after part of the request body, as a connection dropped
mid-upload; ``Stall``: the request read and nothing answered for longer than the client waits), and how
often (``times``: the first n matching requests, a transient fault; None, every one, a persistent
fault; ``every``: every n-th matching request). Each rule counts the requests it matched and the faults
it injected, in all and by operation (an object, or one part of its upload).

Requests are forwarded byte for byte, Host header included, so their signatures still verify.
"""

from __future__ import annotations

import http.client
import re
import socket
import struct
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


@dataclass(frozen=True)
class Request:
    """What a rule looks at: the method, the path's bucket and key, the query's parameters, the headers."""

    method: str
    bucket: str
    key: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names in lower case

    @property
    def target(self) -> str:
        """What one operation acts on, retried or not: the object, and the part of an upload in parts."""
        part = self.query.get("partNumber")
        return f"{self.key} part {part[0]}" if part else self.key

    @classmethod
    def parse(cls, method: str, target: str, headers: Iterable[tuple[str, str]]) -> Request:
        parts = urlsplit(target)
        bucket, _, key = unquote(parts.path).lstrip("/").partition("/")
        query = parse_qs(parts.query, keep_blank_values=True)
        return cls(method, bucket, key, query, {name.lower(): value for name, value in headers})


def byte_range(header: str | None) -> tuple[int, int] | None:
    """The first and last byte of a ``Range: bytes=a-b`` header; None for any other."""
    found = re.fullmatch(r"bytes=(\d+)-(\d+)", (header or "").strip())
    return (int(found[1]), int(found[2])) if found else None


def parquet_tail(header: str | None) -> bool:
    """A read of a file's last 8 bytes: the footer's length and the magic number, which every Parquet
    reader reads first (S3A asks for the exact range, as a seek to the end leaves nothing more to read)."""
    ranged = byte_range(header)
    return ranged is not None and ranged[1] - ranged[0] + 1 == 8


@dataclass(frozen=True)
class Match:
    """Which requests a rule is about; every given condition must hold."""

    method: str | None = None
    key: str | None = None  # a regular expression searched in the object key
    query: tuple[str, ...] = ()  # parameters the query holds (``uploadId``, ``partNumber``)
    no_query: tuple[str, ...] = ()  # parameters it does not hold
    range: Callable[[str | None], bool] | None = None  # on the Range header (None when absent)

    def __call__(self, request: Request) -> bool:
        return (
            (self.method is None or request.method == self.method)
            and (self.key is None or re.search(self.key, request.key) is not None)
            and all(p in request.query for p in self.query)
            and not any(p in request.query for p in self.no_query)
            and (self.range is None or self.range(request.headers.get("range")))
        )


ANY = Match()
# What S3A sends: an object's upload in parts, each part, and the request that completes it.
UPLOAD_PART = Match("PUT", query=("uploadId", "partNumber"))
COMPLETE_MULTIPART_UPLOAD = Match("POST", query=("uploadId",))


@dataclass(frozen=True)
class S3Error:
    """An error answer, as S3 gives it: the status, and an XML body with the code (none to a HEAD)."""

    status: int
    code: str
    message: str

    def body(self) -> bytes:
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Error><Code>{self.code}</Code><Message>{self.message}</Message>"
            "<RequestId>fault-proxy</RequestId></Error>"
        ).encode()

    def __str__(self) -> str:
        return f"{self.status} {self.code}"


SLOW_DOWN = S3Error(503, "SlowDown", "Please reduce your request rate.")
INTERNAL_ERROR = S3Error(500, "InternalError", "We encountered an internal error. Please try again.")


@dataclass(frozen=True)
class Reset:
    """Read ``after_bytes`` of the request body (all of a shorter one), then reset the connection: linger
    0, so that closing sends a TCP RST, not a FIN."""

    after_bytes: int

    def __str__(self) -> str:
        return f"reset after {self.after_bytes} B"


@dataclass(frozen=True)
class Stall:
    """Read the whole request, answer nothing for ``seconds`` (longer than the client's socket timeout),
    then close the connection."""

    seconds: float

    def __str__(self) -> str:
        return f"stall {self.seconds:g} s"


Fault = S3Error | Reset | Stall


@dataclass
class Rule:
    """``fault`` on the requests ``match`` selects: every ``every``-th of them, and at most ``times`` in
    all (None: no limit)."""

    name: str
    match: Match
    fault: Fault
    times: int | None = None
    every: int = 1
    matched: int = 0  # requests it selected
    injected: int = 0  # faults it injected
    by_target: Counter[str] = field(default_factory=Counter)  # faults injected, by ``Request.target``
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def persistent(self) -> bool:
        return self.times is None

    def take(self, request: Request) -> Fault | None:
        """The fault to inject into ``request``, counted; None to forward it."""
        if not self.match(request):
            return None
        with self._lock:
            self.matched += 1
            due = self.matched % self.every == 0 and (self.times is None or self.injected < self.times)
            if due:
                self.injected += 1
                self.by_target[request.target] += 1
            return self.fault if due else None


class FaultProxy:
    """On loopback, in front of the S3 server at ``upstream_port``; ``rules`` may be changed while it runs
    (the first rule that selects a request decides). ``forwarded`` counts the requests passed on."""

    def __init__(self, upstream_port: int, rules: Iterable[Rule] = ()) -> None:
        self.rules: list[Rule] = list(rules)
        self.forwarded = 0
        self.journal: list[str] = []  # each request and what became of it, for a failing test to print
        self._closing = threading.Event()
        self._count_lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:  # quiet
                pass

            def _handle(self) -> None:
                request = Request.parse(self.command, self.path, self.headers.items())
                fault = next((f for r in list(proxy.rules) if (f := r.take(request)) is not None), None)
                length = int(self.headers.get("Content-Length") or 0)
                proxy.journal.append(
                    f"{request.method} {self.path} {request.headers.get('range', '')} -> {fault or 'forwarded'}"
                )
                if isinstance(fault, Reset):
                    self.rfile.read(min(length, fault.after_bytes))
                    self._reset()
                    return
                body = self.rfile.read(length)
                if isinstance(fault, Stall):
                    proxy._closing.wait(fault.seconds)
                    self.close_connection = True
                    return
                if isinstance(fault, S3Error):
                    self._answer(fault.status, None, [("Content-Type", "application/xml")], fault.body())
                    return
                with proxy._count_lock:
                    proxy.forwarded += 1
                upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
                try:
                    upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                    for name, value in self.headers.items():
                        upstream.putheader(name, value)
                    upstream.endheaders(body or None)
                    answer = upstream.getresponse()
                    data = answer.read()
                    headers = [(n, v) for n, v in answer.getheaders() if n.lower() not in _HOP_BY_HOP]
                    length_of_head = answer.getheader("Content-Length") if self.command == "HEAD" else None
                    self._answer(answer.status, answer.reason, headers, data, length_of_head)
                finally:
                    upstream.close()

            def _answer(
                self,
                status: int,
                reason: str | None,
                headers: list[tuple[str, str]],
                data: bytes,
                length: str | None = None,
            ) -> None:
                self.send_response(status, reason)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", length or str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def _reset(self) -> None:
                self.close_connection = True
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.rfile.close()  # the socket closes once no file made from it holds it open
                self.connection.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle  # noqa: N815

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="fault-proxy", daemon=True)

    @contextmanager
    def injecting(self, *rules: Rule) -> Iterator[tuple[Rule, ...]]:
        """``rules`` in force for the block, and none after it."""
        self.rules = list(rules)
        try:
            yield rules
        finally:
            self.rules = []

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._closing.set()  # stalled requests end now
        self._server.shutdown()
        self._server.server_close()


class SlowDownProxy(FaultProxy):
    """Every ``every``-th request answered 503 SlowDown, as S3 answers a prefix over its request rate;
    ``throttled`` counts them."""

    def __init__(self, upstream_port: int, every: int = 4) -> None:
        self._throttling = Rule("throttling", ANY, SLOW_DOWN, every=every)
        super().__init__(upstream_port, [self._throttling])

    @property
    def throttled(self) -> int:
        return self._throttling.injected


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-request (a retry abandoning a stalled or reset upload) is what faults
    cause: not printed, as the standard server prints it, onto the stderr a test reads the job's line from."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)
