"""Keep-alive HTTPS connections for a scheduler's per-pod writes (the binding, the Event).

The kubernetes client sends through urllib3, whose connection pool, header dictionaries,
timeout objects and response wrapper cost about twice the CPU of http.client for the same
small POST (1.24 against 0.6-0.8 ms a bind against the sandbox), and a scheduler makes two
per pod. Here each POST takes an idle connection (or opens one), sends the JSON body with
Nagle off (http.client writes headers and body in two sends: with Nagle on, the body waits
for the server's delayed ACK), reads the whole reply and puts the connection back. A kept
connection the server closed while it was idle fails before any byte of the request is
read; the request then goes once more on a new connection.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

CLOSED_BY_SERVER = (ConnectionError, http.client.RemoteDisconnected, ssl.SSLEOFError,
                    ssl.SSLZeroReturnError)
"""How a kept connection the server has closed fails: reset, or the stream's end."""


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    reason: str
    data: bytes
    keep: bool = True  # the server keeps the connection open


class NoDelayConnection(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class HttpsWrites:
    """POSTs to one server (`host`:`port`, paths after `base_path`) over `context`."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext, *, base_path: str = "",
                 connect_s: float, read_s: float,
                 headers: Callable[[], Mapping[str, str]]) -> None:
        self.host, self.port, self.context = host, port, context
        self.base_path = base_path.rstrip("/")
        self.connect_s, self.read_s = connect_s, read_s
        self.headers = headers  # per request: a token may be refreshed
        self._idle: list[NoDelayConnection] = []
        self._lock = threading.Lock()

    def post(self, path: str, body: bytes) -> Reply:
        """The reply to one POST; OSError or http.client.HTTPException when there is none."""
        headers = {**self.headers(), "Content-Type": "application/json",
                   "Accept": "application/json"}
        connection, kept = self._take()
        try:
            reply = self._send(connection, path, body, headers)
        except CLOSED_BY_SERVER:
            connection.close()
            if not kept:
                raise
            connection = self._open()  # the server closed it while it was idle
            try:
                reply = self._send(connection, path, body, headers)
            except BaseException:
                connection.close()
                raise
        except BaseException:
            connection.close()
            raise
        if reply.keep:
            with self._lock:
                self._idle.append(connection)
        else:
            connection.close()
        return reply

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _take(self) -> tuple[NoDelayConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._open(), False

    def _open(self) -> NoDelayConnection:
        connection = NoDelayConnection(self.host, self.port, timeout=self.connect_s,
                                       context=self.context)
        connection.connect()
        connection.sock.settimeout(self.read_s)
        return connection

    def _send(self, connection: NoDelayConnection, path: str, body: bytes,
              headers: Mapping[str, str]) -> Reply:
        connection.request("POST", self.base_path + path, body=body, headers=dict(headers))
        response = connection.getresponse()
        data = response.read()
        return Reply(response.status, response.reason, data, keep=not response.will_close)
