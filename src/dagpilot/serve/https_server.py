"""A small threaded HTTPS/1.1 server with mTLS, for the webhook and the signed endpoint.

The standard library's server, because the routes need the verified client certificate,
which ASGI servers do not pass on. Each connection runs in a thread of its own (at most
`max_connections` at once; more are closed at once): the TLS handshake happens there, so a
slow or failing client holds up no one, and a failed handshake (no certificate, another CA's,
not TLS) is counted in `refused_handshakes` and closed before any HTTP is read. Connections
are kept alive (HTTP/1.1, every reply has a Content-Length) until `timeout_s` of silence; a
handshake gets HANDSHAKE_TIMEOUT_S, so clients without a certificate cannot hold the slots.

Per request: the route (method and path), then the subject allow-list of that route (403),
then the body: a Content-Length is required (no chunked bodies: 411), one over the route's
limit is answered at once (413), then what the client still sends is read and dropped (up
to DISCARD_LIMIT_BYTES) before the connection closes, so the client sees the 413 (and the
403 of a subject not allowed). A body cut
short by the client closing its side is handed on as it is: the signature check refuses it.
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socket import IPPROTO_TCP, TCP_NODELAY, socket
from typing import Any

from dagpilot.serve.tls import AllowList, Subject, subject_of

log = logging.getLogger(__name__)

DEFAULT_MAX_CONNECTIONS = 64
DEFAULT_TIMEOUT_S = 15.0
HANDSHAKE_TIMEOUT_S = 5.0  # a client that stalls its handshake holds a slot this long at most
DISCARD_LIMIT_BYTES = 8 << 20  # of a refused body, read and dropped so the 413 arrives


@dataclass(frozen=True, slots=True)
class Request:
    body: bytes
    headers: Mapping[str, str]  # lower-case names
    subject: Subject


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"

    @classmethod
    def json(cls, status: int, document: Any) -> Reply:
        return cls(status, json.dumps(document).encode())


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    path: str
    handle: Callable[[Request], Reply]
    allowed: AllowList | None  # None: any client whose certificate the CA signed
    max_body_bytes: int = 0
    too_large: Callable[[int], Reply] | None = None


class HttpsServer:
    def __init__(self, host: str, port: int, context: ssl.SSLContext, routes: Sequence[Route],
                 *, max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self._server = _Server((host, port), context, {(r.method, r.path): r for r in routes},
                               max_connections, timeout_s)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def refused_handshakes(self) -> Counter[str]:
        return self._server.refused

    @property
    def refused_subjects(self) -> Counter[str]:
        return self._server.forbidden

    def serve_forever(self) -> None:
        self._server.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        """Stops serve_forever (from another thread) and closes the listening socket."""
        self._server.shutdown()
        self._server.server_close()

    def serve_until(self, stop: threading.Event, name: str) -> None:
        """Serves from a thread called `name` until `stop` is set, then closes the listener."""
        thread = threading.Thread(target=self.serve_forever, name=name, daemon=True)
        thread.start()
        try:
            stop.wait()
        finally:
            self.shutdown()
            thread.join()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], context: ssl.SSLContext,
                 routes: dict[tuple[str, str], Route], max_connections: int,
                 timeout_s: float) -> None:
        self.context = context
        self.routes = routes
        self.timeout_s = timeout_s
        self.slots = threading.BoundedSemaphore(max_connections)
        self.refused: Counter[str] = Counter()
        self.forbidden: Counter[str] = Counter()
        self.count_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.count(self.refused, "too many connections")
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def finish_request(self, request: Any, client_address: Any) -> None:
        raw: socket = request
        raw.settimeout(HANDSHAKE_TIMEOUT_S)
        try:
            raw.setsockopt(IPPROTO_TCP, TCP_NODELAY, 1)  # a reply is sent when complete
            connection = self.context.wrap_socket(raw, server_side=True)
            connection.settimeout(self.timeout_s)
        except (ssl.SSLError, OSError) as error:
            reason = getattr(error, "reason", None) or type(error).__name__
            self.count(self.refused, str(reason))
            log.info("TLS handshake with %s refused: %s", client_address[0], error)
            return
        try:
            _Handler(connection, client_address, self)
        finally:
            connection.close()

    def count(self, counter: Counter[str], reason: str) -> None:
        with self.count_lock:
            counter[reason] += 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    # Buffered, so a reply's headers and body leave in one write when the request ends: as two
    # writes, Nagle's algorithm holds the body until the client's delayed ACK of the headers,
    # 40 ms per reply on Linux.
    wbufsize = 1 << 16
    server: _Server

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def _dispatch(self, method: str) -> None:
        route = self.server.routes.get((method, self.path.split("?", 1)[0]))
        if route is None:
            self._refuse_early(Reply.json(404, {"error": f"no {method} {self.path[:100]} "
                                                "here"}))
            return
        subject = self._subject()
        if route.allowed is not None and not route.allowed.allows(subject):
            self.server.count(self.server.forbidden, str(subject))
            self._refuse_early(Reply.json(403, {"error": f"client certificate {subject} "
                                                f"may not call {route.path}"}))
            return
        body = self._body(route)
        if body is None:
            return
        try:
            reply = route.handle(Request(body, _headers(self.headers.items()), subject))
        except Exception:
            log.exception("%s %s failed", method, route.path)
            reply = Reply.json(500, {"error": "internal error (logged)"})
        self._reply(reply)

    def _subject(self) -> Subject:
        """The client certificate's subject, read once per connection: it cannot change on
        a connection (tls.server_context refuses renegotiation), and a keep-alive client such as
        kube-scheduler sends thousands of requests on one."""
        subject: Subject | None = getattr(self, "_peer", None)
        if subject is None:
            subject = self._peer = subject_of(self.connection.getpeercert() or {})
        return subject

    def _body(self, route: Route) -> bytes | None:
        """The body, or None when the request was answered already."""
        if self.command == "GET":
            return b""
        if "Transfer-Encoding" in self.headers:
            self._reply(Reply.json(411, {"error": "send a Content-Length, not a chunked "
                                         "body"}), close=True)
            return None
        text = self.headers.get("Content-Length")
        if text is None or not text.isascii() or not text.isdigit():
            self._reply(Reply.json(411, {"error": "a Content-Length is required"}), close=True)
            return None
        length = int(text)
        if length > route.max_body_bytes:
            reply = route.too_large(length) if route.too_large else Reply.json(
                413, {"error": f"at most {route.max_body_bytes} bytes"})
            self._refuse_early(reply)
            return None
        body = self.rfile.read(length)
        if len(body) < length:
            self.close_connection = True  # the client closed its side: reply, then close
        return body

    def _refuse_early(self, reply: Reply) -> None:
        """Answers before the body is read, then reads what the client is still sending (up
        to DISCARD_LIMIT_BYTES) before the close: closing with unread bytes resets the
        connection, and the client would lose the answer it was sent."""
        self._reply(reply, close=True)
        self.wfile.flush()
        text = self.headers.get("Content-Length", "")
        left = min(int(text), DISCARD_LIMIT_BYTES) if text.isascii() and text.isdigit() else 0
        try:
            while left > 0 and (chunk := self.rfile.read1(min(left, 1 << 16))):
                left -= len(chunk)
        except OSError:
            pass  # the client gave up or the timeout passed: close anyway

    def _reply(self, reply: Reply, close: bool = False) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(reply.body)


def _headers(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Lower-case names; a header sent twice is one, its values joined with ',' (RFC 9110),
    so two signatures read as one malformed header, not as the last one."""
    joined: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        joined[key] = f"{joined[key]},{value}" if key in joined else value
    return joined
