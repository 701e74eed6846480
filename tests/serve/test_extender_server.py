"""The extender over real mTLS on loopback: kube-scheduler's subject only, keep-alive, and a
clear JSON error for every bad request."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.serve.extender import Extender
from dagpilot.serve.extender_app import MAX_ARGS_BYTES, routes
from dagpilot.serve.extender_process import SCHEDULER_CLIENT
from dagpilot.serve.https_server import HttpsServer
from dagpilot.serve.tls import AllowList, server_context
from tests.live.certs import Authority
from tests.serve.extender_helpers import by_names
from tests.test_agent import agent, filtered_cluster
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]  # autouse: torch on one thread here too

NODES = ["tiny", "fit-a", "fit-b", "fit-c"]


@dataclass
class Served:
    port: int
    ca: Path
    certs: dict[str, tuple[Path, Path]]

    def connection(self, name: str = "dagpilot-extender-client") -> http.client.HTTPSConnection:
        context = ssl.create_default_context(cafile=str(self.ca))
        context.load_cert_chain(*map(str, self.certs[name]))
        return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=30, context=context)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    authority = Authority("extender-test-ca")
    ca = authority.write(tmp_path / "ca.crt")
    cert, key = authority.issue(tmp_path, "serving", server=True)
    certs = {name: authority.issue(tmp_path, name)
             for name in ("dagpilot-extender-client", "someone-else")}
    extender = Extender(ClusterSnapshot.of(filtered_cluster(), ()), agent().rank)
    server = HttpsServer("127.0.0.1", 0, server_context(cert, key, ca),
                         routes(extender, AllowList.of([SCHEDULER_CLIENT])))
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    try:
        yield Served(server.port, ca, certs)
    finally:
        server.shutdown()
        thread.join(timeout=30)
    assert not thread.is_alive()


def post(connection: http.client.HTTPSConnection, path: str, body: bytes,
         length: int | None = None) -> tuple[int, object]:
    headers = {"Content-Type": "application/json",
               "Content-Length": str(len(body) if length is None else length)}
    connection.request("POST", path, body=body, headers=headers)
    reply = connection.getresponse()
    return reply.status, json.loads(reply.read())


def test_filter_then_prioritize_on_one_kept_alive_connection(served: Served) -> None:
    connection = served.connection()
    try:
        status, result = post(connection, "/filter", by_names(NODES))
        assert status == 200
        assert isinstance(result, dict) and result["NodeNames"] == ["fit-a", "fit-b", "fit-c"]
        socket_before = connection.sock
        status, scores = post(connection, "/prioritize", by_names(result["NodeNames"]))
        assert status == 200 and connection.sock is socket_before  # the same connection
        assert isinstance(scores, list)
        assert sorted(entry["Score"] for entry in scores)[-1] == 10
        assert {entry["Host"] for entry in scores} == {"fit-a", "fit-b", "fit-c"}
    finally:
        connection.close()


@pytest.mark.parametrize(("body", "says"), [
    (b"{", "not valid JSON"),
    (b'{"Pod": {}}', "the pod has no name"),
    (json.dumps({"Pod": {"metadata": {"name": "p"}, "spec": {"containers": [
        {"resources": {"requests": {"cpu": "two"}}}]}}, "NodeNames": NODES}).encode(), "cpu"),
])
def test_a_bad_request_is_a_400_with_the_reason_in_error(served: Served, body: bytes,
                                                          says: str) -> None:
    connection = served.connection()
    try:
        for verb in ("/filter", "/prioritize"):
            status, result = post(connection, verb, body)
            assert status == 400
            assert isinstance(result, dict) and says in result["Error"]
        status, _ = post(connection, "/filter", by_names(NODES))
        assert status == 200  # the connection still serves
    finally:
        connection.close()


def test_a_huge_body_is_refused_before_it_is_read(served: Served) -> None:
    connection = served.connection()
    try:
        status, result = post(connection, "/prioritize", b"{}", length=MAX_ARGS_BYTES + 1)
        assert status == 413 and isinstance(result, dict) and "at most" in result["Error"]
    finally:
        connection.close()


def test_only_the_schedulers_subject_may_call(served: Served) -> None:
    connection = served.connection("someone-else")
    try:
        status, _ = post(connection, "/filter", by_names(NODES))
        assert status == 403
    finally:
        connection.close()
    health = served.connection("someone-else")
    try:
        health.request("GET", "/healthz")
        reply = health.getresponse()
        document = json.loads(reply.read())
        assert reply.status == 200 and document["nodes"] == 6
    finally:
        health.close()
