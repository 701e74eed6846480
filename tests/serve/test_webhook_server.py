"""The webhook process over real mTLS on loopback (creating into a list): who may call which
route, and every attempt to get a Workflow created without the right to, counted.

The same attempts against the real API server are tests/live/serve/test_signed_submissions.py.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
import time
from collections import Counter

import pytest

from dagpilot.serve import signature
from tests.serve.conftest import Served
from tests.serve.helpers import WORKFLOW, key, write_keys

REVIEW = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                     "request": {"uid": "u", "operation": "CREATE",
                                 "kind": {"group": "argoproj.io", "version": "v1alpha1",
                                          "kind": "Workflow"},
                                 "object": {"spec": {"templates": []}}}}).encode()


def handshake_fails(served: Served, client: str | None) -> bool:
    try:
        served.client(client).submit(WORKFLOW, served.signer.sign(WORKFLOW, time.time()))
    except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
        return True
    return False


def test_every_forbidden_attempt_is_refused_and_creates_nothing(served: Served) -> None:
    submitter = served.client()
    tried: Counter[str] = Counter()
    refused: Counter[str] = Counter()

    def attempt(kind: str, status: int, header: str | None, body: bytes = WORKFLOW) -> None:
        tried[kind] += 1
        got, document = submitter.submit(body, header)
        assert got == status, (kind, document)
        refused[kind] += 1

    now = time.time()
    good = served.signer.sign(WORKFLOW, now)
    assert submitter.submit(WORKFLOW, good)[0] == 201
    for flip in range(3):  # forged: one hex digit of the MAC changed, at three places
        digest = good.rsplit("=", 1)[1]
        position = 10 + 20 * flip
        changed = digest[:position] + ("0" if digest[position] != "0" else "1") \
            + digest[position + 1:]
        attempt("forged", 401, good.rsplit("=", 1)[0] + "=" + changed)
    attempt("forged", 401, served.signer.sign(WORKFLOW, now + 1), WORKFLOW + b"# more\n")
    attempt("truncated", 401, served.signer.sign(WORKFLOW, now + 2), WORKFLOW[:-30])
    attempt("replayed", 403, good)
    attempt("replayed", 403, good)
    attempt("expired-key", 403, key("expired").sign(WORKFLOW, now))
    attempt("wrong-kid", 401, key("nobody").sign(WORKFLOW, now))
    attempt("unsigned", 401, None)
    attempt("stale", 403, served.signer.sign(WORKFLOW, now - 600))
    attempt("oversized", 413, served.signer.sign(WORKFLOW, now + 3), b"#" * ((1 << 20) + 1))
    for client in ("other-ca", None, "expired"):  # wrong CA, no certificate, expired cert
        kind = {"other-ca": "wrong-CA", None: "no-certificate", "expired": "expired-cert"}[client]
        tried[kind] += 1
        assert handshake_fails(served, client), kind
        refused[kind] += 1
    for client in ("someone-else", "dagpilot-webhook-client"):  # the API server's may not
        tried["wrong-subject"] += 1
        status, _ = served.client(client).submit(WORKFLOW, served.signer.sign(WORKFLOW, now + 4))
        assert status == 403, client
        refused["wrong-subject"] += 1
    assert refused == tried
    assert sum(tried.values()) == 17
    assert len(served.created) == 1
    outcomes = served.process.submissions.outcomes
    assert outcomes == {"created": 1, "forged": 5, "replayed": 2, "key-not-valid": 1,
                        "unknown-key": 1, "malformed-signature": 1, "stale": 1, "oversized": 1}
    assert sum(served.process.server.refused_handshakes.values()) >= 3


def test_a_key_rotated_while_serving(served: Served) -> None:
    submitter = served.client()
    old = served.signer
    new = key("next", start=old.not_before, hours=20)
    assert submitter.submit(WORKFLOW, old.sign(WORKFLOW, time.time()))[0] == 201
    write_keys(served.keys_file, old, new)  # the next key published: both sign
    assert submitter.submit(WORKFLOW, new.sign(WORKFLOW, time.time()))[0] == 201
    assert submitter.submit(WORKFLOW, old.sign(WORKFLOW, time.time() + 1))[0] == 201
    write_keys(served.keys_file, new)  # the old key retired
    assert submitter.submit(WORKFLOW, old.sign(WORKFLOW, time.time() + 2))[0] == 401
    assert submitter.submit(WORKFLOW, new.sign(WORKFLOW, time.time() + 3))[0] == 201
    served.keys_file.write_text("keys: [")  # a broken rewrite keeps the last good keys
    assert submitter.submit(WORKFLOW, new.sign(WORKFLOW, time.time() + 4))[0] == 201
    assert len(served.created) == 5
    assert served.process.keys.reloads == 2


def test_only_the_api_servers_subject_may_call_the_admission_route(served: Served) -> None:
    status, answer = served.client("dagpilot-webhook-client").post(
        "/mutate", REVIEW, {"Content-Type": "application/json"})
    assert status == 200
    patch = json.loads(base64.b64decode(answer["response"]["patch"]))
    assert patch == [{"op": "add", "path": "/spec/schedulerName", "value": "dagpilot"}]
    for client in ("dagpilot-submit", "someone-else"):
        status, answer = served.client(client).post("/mutate", REVIEW, {})
        assert status == 403, client
        assert "may not call /mutate" in answer["error"]
    assert served.client("dagpilot-webhook-client").post("/mutate", b"{}", {})[0] == 400
    assert handshake_fails(served, None)


def test_connections_are_kept_alive(served: Served) -> None:
    client = served.client("dagpilot-webhook-client")
    connection = http.client.HTTPSConnection("127.0.0.1", client.port, context=client.context())
    ports = set()
    for _ in range(3):
        connection.request("POST", "/mutate", body=REVIEW)
        reply = connection.getresponse()
        assert reply.status == 200
        reply.read()
        ports.add(connection.sock.getsockname()[1])
    connection.close()
    assert len(ports) == 1


@pytest.mark.parametrize(("request_head", "status"), [
    (b"POST /v1/workflows HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
    (b"POST /v1/workflows HTTP/1.1\r\nHost: x\r\n\r\n", 411),
    (b"POST /v1/workflows HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n", 413),
    (b"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n", 404),
])
def test_bodies_need_a_length_within_the_limit(served: Served, request_head: bytes,
                                               status: int) -> None:
    client = served.client()
    with socket.create_connection(("127.0.0.1", client.port), timeout=10) as raw, \
            client.context().wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall(request_head)  # the 413 comes before any of the 2 MiB is sent
        reply = tls.recv(4096)
    assert reply.startswith(f"HTTP/1.1 {status} ".encode()), reply[:80]
    assert served.created == []


def test_a_body_cut_short_by_the_client_closing_creates_nothing(served: Served) -> None:
    client = served.client()
    header = served.signer.sign(WORKFLOW, time.time())
    head = (f"POST /v1/workflows HTTP/1.1\r\nHost: x\r\nContent-Length: {len(WORKFLOW)}\r\n"
            f"{signature.HEADER}: {header}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", client.port), timeout=10) as raw, \
            client.context().wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall(head + WORKFLOW[:-40])
        tls.shutdown(socket.SHUT_WR)  # the server reads end of stream mid-body
    outcomes = served.process.submissions.outcomes
    deadline = time.monotonic() + 10
    while not outcomes and time.monotonic() < deadline:
        time.sleep(0.05)
    assert outcomes == {"forged": 1}
    assert served.created == []


def test_health_answers_any_client_of_the_ca(served: Served) -> None:
    client = served.client("someone-else")
    connection = http.client.HTTPSConnection("127.0.0.1", client.port, context=client.context())
    connection.request("GET", "/healthz")
    reply = connection.getresponse()
    assert (reply.status, json.loads(reply.read())) == (200, {"ok": True, "submissions": {}})
    connection.close()
