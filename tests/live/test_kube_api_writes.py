"""A scheduler's two writes per pod (bind, Event) go out past the client's generated
methods (on http.client connections, or the client's pool for a proxy): the same request
(method, URL, credentials, body) the generated method sends, and the same errors in words."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, cast

import pytest
from kubernetes.client import rest

from dagpilot.live.errors import KubeApiError
from dagpilot.live.kube_api import Gone, KubeApi
from tests.live.certs import Authority, kubeconfig
from tests.live.tls_server import serve_tls

KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: the-token}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
"""


class Reply:
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status, self.reason = status, "Reason"
        self.data = json.dumps(body).encode()
        self.headers: dict[str, str] = {}
        self.keep = True

    def release_conn(self) -> None:
        pass


class Writes:
    """The API's write connections (http.client, or the urllib3 pool for a proxy): what was
    POSTed, each answered with `reply`."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.server = "https://127.0.0.1:6443"
        self.sent: list[tuple[str, str, dict[str, str], Any]] = []

    def post(self, path: str, body: bytes) -> Reply:  # HttpsWrites
        return self.urlopen("POST", path, body=body, headers=self.headers())

    def connection_from_url(self, url: str) -> Writes:  # the urllib3 pool manager
        self.server = url
        return self

    def urlopen(self, method: str, url: str, **options: Any) -> Reply:
        body = options.get("body")
        self.sent.append((method, self.server + url, dict(options.get("headers") or {}),
                          json.loads(body) if body else None))
        return self.reply

    def headers(self) -> dict[str, str]:
        return {}


def _api(tmp_path: Path, reply: Reply, transport: str = "http.client") -> tuple[
        KubeApi, Writes]:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    api = KubeApi(path)
    writes = Writes(reply)
    if transport == "http.client":
        assert api._writes is not None  # an https server, no proxy
        writes.headers = api._writes.headers  # type: ignore[method-assign]
        api._writes = cast(Any, writes)
    else:
        api._writes = None
        api._client.rest_client.pool_manager = writes
    return api, writes


def _generated(api: KubeApi, call: Any) -> tuple[str, str, dict[str, str], Any]:
    """What the generated method sends for the same write (its transport stubbed)."""
    sent: list[tuple[str, str, dict[str, str], Any]] = []

    def request(method: str, url: str, headers: Any = None, body: Any = None,
                **_: Any) -> rest.RESTResponse:
        sent.append((method, url, dict(headers or {}), body))
        return rest.RESTResponse(Reply(201, {}))
    api._client.rest_client.request = request  # type: ignore[method-assign]
    call()
    return sent[0]


@pytest.mark.parametrize("transport", ["http.client", "urllib3"])
def test_bind_and_event_send_what_the_generated_methods_send(tmp_path: Path,
                                                             transport: str) -> None:
    api, pool = _api(tmp_path, Reply(201, {"kind": "Status"}), transport)
    annotations = {"dagpilot.io/decision": '{"node":"n1"}'}
    api.bind("ns", "p-1", "n1", "uid-1", annotations)
    event = {"apiVersion": "v1", "kind": "Event",
             "metadata": {"generateName": "p-1.", "namespace": "ns"},
             "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": "ns",
                                "name": "p-1"},
             "type": "Normal", "reason": "Scheduled", "message": "assigned",
             "source": {"component": "dagpilot"}, "count": 1}
    api.create_event("ns", event)
    body = {"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": "p-1", "namespace": "ns", "uid": "uid-1",
                         "annotations": annotations},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
    old_bind = _generated(api, lambda: api._core.create_namespaced_pod_binding(
        "p-1", "ns", body, _preload_content=False))
    old_event = _generated(api, lambda: api._core.create_namespaced_event(
        "ns", event, _preload_content=False))
    for (method, url, headers, sent), old in zip(pool.sent, (old_bind, old_event),
                                                 strict=True):
        assert (method, url, sent) == (old[0], old[1], old[3])
        assert headers["authorization"] == old[2]["authorization"] == "Bearer the-token"
    assert pool.sent[0][1] == "https://127.0.0.1:6443/api/v1/namespaces/ns/pods/p-1/binding"


def test_a_410_is_gone_on_a_write_and_on_a_watch_and_other_errors_keep_their_status(
        tmp_path: Path) -> None:
    """Every path that reads an error status (a generated call, a write, a watch's ERROR
    event) raises the same way: Gone for 410, else a KubeApiError with the status."""
    api, _ = _api(tmp_path, Reply(410, {"kind": "Status", "message": "too old"}))
    with pytest.raises(Gone, match="too old"):
        api.bind("ns", "p", "n1")
    with pytest.raises(Gone, match="resourceVersion too old"):
        api._event({"type": "ERROR", "object": {"code": 410}})
    with pytest.raises(KubeApiError) as raised:
        api._event({"type": "ERROR", "object": {"code": 500, "message": "etcd down"}})
    assert raised.value.status == 500 and "etcd down" in raised.value.message


@pytest.mark.parametrize("status", [404, 409, 403])
def test_a_refused_write_is_a_kube_api_error_with_the_servers_message(
        tmp_path: Path, status: int) -> None:
    api, pool = _api(tmp_path, Reply(status, {"kind": "Status", "message": "pods \"p\" gone"}))
    with pytest.raises(KubeApiError) as raised:
        api.bind("ns", "p", "n1")
    assert raised.value.status == status
    assert 'pods "p" gone' in raised.value.message
    assert len(pool.sent) == 1


@pytest.fixture
def recording_server(tmp_path: Path) -> Iterator[tuple[Path, list[tuple[str, str, bytes]],
                                                         list[int]]]:
    """An mTLS server on loopback answering 201 to every POST, closing each connection after
    its second request; (kubeconfig, requests as (path, content type, body), connections)."""
    authority = Authority("server-ca")
    cert, key = authority.issue(tmp_path, "server", server=True)
    client_cert, client_key = authority.issue(tmp_path, "client")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.load_verify_locations(cafile=authority.write(tmp_path / "ca.crt"))
    context.verify_mode = ssl.CERT_REQUIRED
    requests: list[tuple[str, str, bytes]] = []
    connections: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            connections.append(1)
            self.served = 0

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            requests.append((self.path, self.headers["Content-Type"], body))
            self.served += 1
            reply = b'{"kind":"Status"}'
            self.send_response(201)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
            if self.served == 2:  # as a server closing an idle keep-alive connection
                self.close_connection = True

        def log_message(self, *_: object) -> None:
            pass

    server = serve_tls(context, Handler)
    try:
        yield (kubeconfig(tmp_path / "kubeconfig", f"https://127.0.0.1:{server.server_port}",
                          tmp_path / "ca.crt", client_cert, client_key), requests, connections)
    finally:
        server.shutdown()
        server.server_close()


def test_writes_reuse_a_connection_and_replace_one_the_server_closed(
        recording_server: tuple[Path, list[tuple[str, str, bytes]], list[int]]) -> None:
    path, requests, connections = recording_server
    api = KubeApi(path)
    try:
        assert api._writes is not None
        for index in range(5):
            api.bind("ns", f"p-{index}", "n1")
    finally:
        api.close()
    assert [request[0] for request in requests] == [
        f"/api/v1/namespaces/ns/pods/p-{index}/binding" for index in range(5)]
    assert {request[1] for request in requests} == {"application/json"}
    assert json.loads(requests[4][2])["target"]["name"] == "n1"
    assert len(connections) == 3  # two requests a connection, each closed one replaced
