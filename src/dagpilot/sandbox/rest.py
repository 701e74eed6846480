"""A small JSON-over-HTTPS client for the sandbox's own bootstrap calls and health probes.

The launcher needs a handful of calls (create an object unless it exists, read a list, probe
/readyz) before anything else runs; the live side's client (live/kube_api.py) is the product's.
Every request has a deadline; every failure names the component and what was asked.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagpilot.sandbox.errors import SandboxError


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a component listens and how to trust it (no TLS when `ca` is None)."""

    component: str
    port: int
    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None

    def context(self) -> ssl.SSLContext | None:
        if self.ca is None:
            return None
        context = ssl.create_default_context(cafile=str(self.ca))
        if self.cert is not None:
            context.load_cert_chain(str(self.cert), str(self.key) if self.key else None)
        return context


class NoDelayHTTPConnection(http.client.HTTPConnection):
    """http.client writes a request's headers and its body separately; with Nagle on, the
    body waits for the server's delayed ACK of the headers (40 ms on Linux) on every POST."""

    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class NoDelayHTTPSConnection(http.client.HTTPSConnection):
    """The same over TLS: each write is a TLS record, each record its own segment."""

    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Response:
    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


def request(endpoint: Endpoint, method: str, path: str, body: object = None,
            timeout_s: float = 10.0) -> Response:
    """One request; OSError and TLS failures become SandboxError naming the component."""
    context = endpoint.context()
    connection: http.client.HTTPConnection = (
        NoDelayHTTPSConnection("127.0.0.1", endpoint.port, timeout=timeout_s, context=context)
        if context else NoDelayHTTPConnection("127.0.0.1", endpoint.port, timeout=timeout_s))
    payload = None if body is None else json.dumps(body).encode()
    headers = {"Accept": "application/json"}
    if payload is not None:
        headers["Content-Type"] = ("application/merge-patch+json" if method == "PATCH"
                                   else "application/json")
    try:
        connection.request(method, path, body=payload, headers=headers)
        reply = connection.getresponse()
        return Response(reply.status, reply.read())
    except (OSError, http.client.HTTPException) as error:
        raise SandboxError(endpoint.component,
                           f"{method} {path} on 127.0.0.1:{endpoint.port}: {error}") from None
    finally:
        connection.close()


def create(endpoint: Endpoint, path: str, manifest: dict[str, Any]) -> bool:
    """POSTs `manifest` to the collection at `path`; False when it already exists."""
    reply = request(endpoint, "POST", path, manifest)
    if reply.status == 409:
        return False
    if reply.status >= 300:
        name = manifest.get("metadata", {}).get("name", "?")
        raise SandboxError(endpoint.component, f"creating {manifest.get('kind')} {name}: "
                                               f"HTTP {reply.status}: {reply.body[:300]!r}")
    return True


def get(endpoint: Endpoint, path: str) -> Any:
    reply = request(endpoint, "GET", path)
    if reply.status >= 300:
        raise SandboxError(endpoint.component, f"GET {path}: HTTP {reply.status}: "
                                               f"{reply.body[:300]!r}")
    return reply.json()


def healthy(endpoint: Endpoint, path: str) -> bool:
    """Whether GET `path` answers 200 now (a probe: never raises)."""
    try:
        return request(endpoint, "GET", path, timeout_s=2.0).status == 200
    except SandboxError:
        return False


def watch(endpoint: Endpoint, path: str, resource_version: str,
          timeout_s: int = 60) -> Iterator[dict[str, Any]]:
    """The watch events of a collection after `resource_version`, until the server ends the
    watch (after `timeout_s`); a 410 arrives as an ERROR event, as the API sends it."""
    context = endpoint.context()
    connection = NoDelayHTTPSConnection("127.0.0.1", endpoint.port, timeout=timeout_s + 30,
                                        context=context)
    query = (f"watch=1&resourceVersion={resource_version}&allowWatchBookmarks=true"
             f"&timeoutSeconds={timeout_s}")
    try:
        connection.request("GET", f"{path}{'&' if '?' in path else '?'}{query}",
                           headers={"Accept": "application/json"})
        reply = connection.getresponse()
        if reply.status != 200:
            raise SandboxError(endpoint.component, f"watch {path}: HTTP {reply.status}: "
                                                   f"{reply.read()[:300]!r}")
        for line in reply:
            if line.strip():
                yield json.loads(line)
    except (OSError, http.client.HTTPException, ValueError) as error:
        raise SandboxError(endpoint.component, f"watch {path}: {error}") from None
    finally:
        connection.close()
