"""The signed endpoint's checks, in order, without HTTP: each refusal's status and reason, and
that nothing is created unless every check passed."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from dagpilot.live.errors import KubeApiError
from dagpilot.serve import signature
from dagpilot.serve.keys import KeyRing, parse_keys
from dagpilot.serve.replay import NonceCache
from dagpilot.serve.submission import Submissions
from tests.serve.helpers import HOUR, NOW, WORKFLOW, Key, key

CURRENT, EXPIRED, FUTURE = key("current"), key("expired", NOW - 30 * HOUR, 24), \
    key("future", NOW + HOUR, 24)


def ring(*keys: Key) -> KeyRing:
    return parse_keys(yaml.safe_dump({"keys": [k.entry() for k in keys]}).encode(), "keys.yaml")


class Endpoint:
    def __init__(self, *keys: Key, create_error: KubeApiError | None = None) -> None:
        self.created: list[tuple[str, dict[str, Any]]] = []
        self.now = NOW.timestamp()
        self.ring = ring(*(keys or (CURRENT, EXPIRED, FUTURE)))
        self.create_error = create_error
        self.submissions = Submissions(lambda: self.ring, NonceCache(), self.create, "team",
                                       clock=lambda: self.now)

    def create(self, namespace: str, workflow: dict[str, Any]) -> dict[str, Any]:
        if self.create_error is not None:
            raise self.create_error
        self.created.append((namespace, workflow))
        return {"metadata": {"namespace": namespace, "name": "etl-x1"}}

    def submit(self, body: bytes = WORKFLOW, signer: Key = CURRENT, at: float | None = None,
               header: str | None = None, content_type: str = "application/yaml") -> Any:
        header = header if header is not None else signer.sign(body, self.now if at is None
                                                                else at)
        return self.submissions.handle(body, header, content_type)


def test_a_signed_workflow_is_checked_and_created_in_the_namespace() -> None:
    endpoint = Endpoint()
    outcome = endpoint.submit()
    assert (outcome.status, outcome.document) == (201, {"namespace": "team", "name": "etl-x1"})
    [(namespace, workflow)] = endpoint.created
    assert namespace == "team"
    digest = signature.parse(CURRENT.sign(WORKFLOW, endpoint.now)).digest
    assert workflow["metadata"] == {"generateName": "etl-", "namespace": "team",
                                    "name": f"etl-{digest[:10]}"}
    assert workflow["spec"] == yaml.safe_load(WORKFLOW)["spec"]
    assert endpoint.submissions.outcomes == {"created": 1}


def test_json_bodies_are_read_as_json() -> None:
    endpoint = Endpoint()
    body = yaml.safe_load(WORKFLOW)
    outcome = endpoint.submit(json.dumps(body).encode(), content_type="application/json")
    assert outcome.status == 201
    assert endpoint.submit(b"{not json", content_type="application/json").status == 400


def forged(endpoint: Endpoint) -> Any:
    good = CURRENT.sign(WORKFLOW, endpoint.now)
    return endpoint.submit(header=good.replace("v1=", "v1=0")[:-1])


ATTEMPTS = {
    # name: (how, status, reason)
    "no header": (lambda e: e.submissions.handle(WORKFLOW, None, None), 401,
                  "malformed-signature"),
    "malformed": (lambda e: e.submit(header="t=1,kid=current"), 401, "malformed-signature"),
    "forged": (forged, 401, "forged"),
    "other secret": (lambda e: e.submit(signer=Key("current", b"x" * 32, NOW, NOW)), 401,
                     "forged"),
    "truncated body": (lambda e: e.submissions.handle(
        WORKFLOW[:-20], CURRENT.sign(WORKFLOW, e.now), "application/yaml"), 401, "forged"),
    "wrong kid": (lambda e: e.submit(signer=key("nobody")), 401, "unknown-key"),
    "expired key": (lambda e: e.submit(signer=EXPIRED), 403, "key-not-valid"),
    "key not yet valid": (lambda e: e.submit(signer=FUTURE), 403, "key-not-valid"),
    "old timestamp": (lambda e: e.submit(at=e.now - 301), 403, "stale"),
    "future timestamp": (lambda e: e.submit(at=e.now + 301), 403, "stale"),
    "oversized": (lambda e: e.submit(WORKFLOW + b"#" * (1 << 20)), 413, "oversized"),
    "not yaml": (lambda e: e.submit(b"kind: [\n"), 400, "unparsable"),
    "two documents": (lambda e: e.submit(WORKFLOW + b"---\n" + WORKFLOW), 400, "unparsable"),
}


@pytest.mark.parametrize("name", sorted(ATTEMPTS))
def test_each_refusal_has_its_status_and_creates_nothing(name: str) -> None:
    endpoint = Endpoint()
    how, status, reason = ATTEMPTS[name]
    outcome = how(endpoint)
    assert (outcome.status, outcome.reason) == (status, reason), outcome.document
    assert endpoint.created == []
    assert set(outcome.document) == {"error"}
    assert "secret" not in outcome.document["error"]


def test_a_timestamp_within_five_minutes_either_way_is_fresh() -> None:
    endpoint = Endpoint()
    assert endpoint.submit(at=endpoint.now - 299).status == 201
    assert endpoint.submit(at=endpoint.now + 299).status == 201


def test_a_replay_is_refused_even_while_fresh() -> None:
    endpoint = Endpoint()
    header = CURRENT.sign(WORKFLOW, endpoint.now)
    assert endpoint.submit(header=header).status == 201
    endpoint.now += 60
    replayed = endpoint.submit(header=header)
    assert (replayed.status, replayed.reason) == (403, "replayed")
    endpoint.now += 300  # the nonce is forgotten, and the timestamp is stale now
    assert endpoint.submit(header=header).reason == "stale"
    assert len(endpoint.created) == 1


def test_both_keys_sign_during_a_rotation_and_the_old_one_stops_when_removed() -> None:
    old, new = key("old", NOW - 20 * HOUR, 24), key("new", NOW - HOUR, 24)
    endpoint = Endpoint(old)
    assert endpoint.submit(signer=old).status == 201
    endpoint.ring = ring(old, new)
    assert endpoint.submit(signer=old, at=endpoint.now + 1).status == 201
    assert endpoint.submit(signer=new).status == 201
    endpoint.ring = ring(new)
    assert endpoint.submit(signer=old, at=endpoint.now + 2).reason == "unknown-key"
    endpoint.now += 4.5 * 3600  # past the old key's notAfter: kept in the file, it is refused
    endpoint.ring = ring(old, new)
    assert endpoint.submit(signer=old).reason == "key-not-valid"
    assert len(endpoint.created) == 3


CYCLE = WORKFLOW.replace(b"{name: extract, template: work}",
                         b"{name: extract, template: work, depends: load}")


@pytest.mark.parametrize(("body", "words"), [
    (CYCLE, "task 'extract'.*dependency cycle"),
    (WORKFLOW.replace(b"depends: extract", b"depends: 'extract &&'"), "task 'load'.*depends"),
    (WORKFLOW.replace(b"depends: extract", b"depends: nowhere"), "task 'load'"),
    (WORKFLOW.replace(b"kind: Workflow", b"kind: CronWorkflow"), "expected an argoproj"),
    (WORKFLOW.replace(b"  generateName: etl-\n", b"  namespace: other\n  name: x\n"),
     "in namespace team only"),
    (WORKFLOW.replace(b"  generateName: etl-\n", b"  labels: {a: b}\n"), "name or generateName"),
])
def test_a_workflow_the_loader_refuses_is_422_naming_the_task(body: bytes, words: str) -> None:
    endpoint = Endpoint()
    outcome = endpoint.submit(body)
    assert outcome.status == 422, outcome.document
    assert outcome.document["error"].startswith("submission: ")
    assert re.search(words, outcome.document["error"]), outcome.document["error"]
    assert endpoint.created == []


NAMED = WORKFLOW.replace(b"generateName: etl-", b"name: etl-once")


@pytest.mark.parametrize(("body", "status", "expected"), [
    (NAMED, 409, 409), (WORKFLOW, 409, 403), (WORKFLOW, 422, 422), (WORKFLOW, 403, 502),
    (WORKFLOW, None, 503), (WORKFLOW, 500, 503)])
def test_the_api_servers_refusal_is_passed_on(body: bytes, status: int | None,
                                              expected: int) -> None:
    endpoint = Endpoint(create_error=KubeApiError("https://api", "no", status))
    assert endpoint.submit(body).status == expected


def test_a_replay_reaching_another_replica_meets_the_first_creation() -> None:
    """Each replica has its own replay cache; the name derived from the signature makes the
    API server refuse the second creation."""
    stored: dict[str, dict[str, Any]] = {}

    def create(namespace: str, workflow: dict[str, Any]) -> dict[str, Any]:
        name = workflow["metadata"]["name"]
        if name in stored:
            raise KubeApiError("https://api", f"workflows {name} already exists", 409)
        stored[name] = workflow
        return workflow
    first, second = Endpoint(), Endpoint()
    first.submissions.create = second.submissions.create = create
    header = CURRENT.sign(WORKFLOW, first.now)
    assert first.submit(header=header).status == 201
    replayed = second.submit(header=header)
    assert (replayed.status, replayed.reason) == (403, "replayed")
    assert second.submit(at=second.now + 1).status == 201  # a new signature: a new name
    assert len(stored) == 2


def test_a_generated_name_keeps_to_63_characters() -> None:
    long = WORKFLOW.replace(b"generateName: etl-", b"generateName: " + b"x" * 80 + b"-")
    endpoint = Endpoint()
    assert endpoint.submit(long).status == 201
    name = endpoint.created[0][1]["metadata"]["name"]
    assert len(name) == 63 and name.startswith("x" * 53)
