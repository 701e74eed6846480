"""A scheduler's two writes per pod (bind, Event) go out on the client's pool past its
generated methods: the same request (method, URL, credentials, body) the generated method
sends, and the same errors in words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client import rest

from dagpilot.live.errors import KubeApiError
from dagpilot.live.kube_api import KubeApi

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
        self.released = False

    def release_conn(self) -> None:
        self.released = True


class Pool:
    """The client's pool manager and its pool for the server, answering every request with
    `reply`."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.server = ""
        self.sent: list[tuple[str, str, dict[str, str], Any]] = []

    def connection_from_url(self, url: str) -> Pool:
        self.server = url
        return self

    def urlopen(self, method: str, url: str, **options: Any) -> Reply:
        body = options.get("body")
        self.sent.append((method, self.server + url, dict(options.get("headers") or {}),
                          json.loads(body) if body else None))
        return self.reply


def _api(tmp_path: Path, reply: Reply) -> tuple[KubeApi, Pool]:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    api = KubeApi(path)
    pool = Pool(reply)
    api._client.rest_client.pool_manager = pool
    return api, pool


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


def test_bind_and_event_send_what_the_generated_methods_send(tmp_path: Path) -> None:
    api, pool = _api(tmp_path, Reply(201, {"kind": "Status"}))
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
        assert headers["Content-Type"] == "application/json"
    assert pool.sent[0][1] == "https://127.0.0.1:6443/api/v1/namespaces/ns/pods/p-1/binding"
    assert pool.reply.released


@pytest.mark.parametrize("status", [404, 409, 403])
def test_a_refused_write_is_a_kube_api_error_with_the_servers_message(
        tmp_path: Path, status: int) -> None:
    api, pool = _api(tmp_path, Reply(status, {"kind": "Status", "message": "pods \"p\" gone"}))
    with pytest.raises(KubeApiError) as raised:
        api.bind("ns", "p", "n1")
    assert raised.value.status == status
    assert 'pods "p" gone' in raised.value.message
    assert pool.reply.released  # the connection went back to the pool
