"""The webhook on the real API server: signed submissions mutated by the API server's own call
of the webhook (over mTLS with its AdmissionConfiguration certificate), created with the
shipped least-privilege RBAC, and every way around the signature refused with nothing created."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
import uuid
from collections import Counter
from typing import Any

import pytest
import yaml

from dagpilot.sandbox import rest
from dagpilot.serve.admission import go_duration
from dagpilot.serve.run_history import parse_history
from dagpilot.workloads.argo_pod import EXPECTED_DURATION
from tests.live import kube
from tests.live.serve.conftest import WebhookEnv
from tests.live.serve.setup import apply
from tests.serve.helpers import WORKFLOW, key, write_keys


def unique(body: bytes = WORKFLOW) -> bytes:
    """A body no other test signs: two signatures of one body in one second are one nonce."""
    return body + f"# {uuid.uuid4().hex}\n".encode()


def submit_cli(env: WebhookEnv, body: bytes, name: str = "workflow.yaml",
               cert: str = "dagpilot-submit") -> subprocess.CompletedProcess[str]:
    path = env.folder / name
    path.write_bytes(body)
    certificate, private = env.certs[cert]
    return subprocess.run(
        [sys.executable, "-m", "dagpilot.cli", "submit", str(path),
         "--url", f"https://127.0.0.1:{env.port}", "--keys", str(env.keys_file),
         "--cert", str(certificate), "--key", str(private), "--ca", str(env.ca)],
        capture_output=True, text=True, timeout=120, check=False)


def workflow(env: WebhookEnv, name: str) -> dict[str, Any]:
    return rest.get(env.api, f"{kube.WORKFLOWS.format(ns=env.namespace)}/{name}")


def annotations(item: dict[str, Any]) -> dict[str, str | None]:
    return {t["name"]: t.get("metadata", {}).get("annotations", {}).get(EXPECTED_DURATION)
            for t in item["spec"]["templates"]}


def test_a_signed_submission_is_mutated_by_the_api_servers_call_and_created(
        webhook_env: WebhookEnv) -> None:
    env = webhook_env
    done = submit_cli(env, unique())
    assert done.returncode == 0, done.stderr
    namespace, name = done.stdout.strip().split("/")
    assert namespace == env.namespace and name.startswith("etl-")
    created = workflow(env, name)
    assert created["spec"]["schedulerName"] == "dagpilot"
    assert annotations(created) == {"main": None, "work": "42s"}


def test_direct_creation_in_a_managed_namespace_is_refused_even_for_an_admin(
        webhook_env: WebhookEnv) -> None:
    env = webhook_env
    before = len(env.workflows())
    reply = rest.request(env.api, "POST", kube.WORKFLOWS.format(ns=env.namespace),
                         yaml.safe_load(WORKFLOW))
    assert reply.status == 403, reply.body
    assert b"created only through dagpilot signed submissions" in reply.body
    assert len(env.workflows()) == before


def test_an_unmanaged_namespace_is_neither_refused_nor_mutated(webhook_env: WebhookEnv) -> None:
    env = webhook_env
    with kube.namespace(env.api, "plain") as plain:
        created = rest.request(env.api, "POST", kube.WORKFLOWS.format(ns=plain),
                               yaml.safe_load(WORKFLOW))
        assert created.status == 201, created.body
        assert "schedulerName" not in created.json()["spec"]


def test_only_suspend_and_shutdown_of_a_signed_workflow_may_change(
        webhook_env: WebhookEnv) -> None:
    """mallory may update Workflows here (RBAC), as a careless Role would allow: the policy
    still keeps the signed spec."""
    env = webhook_env
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "mallory", "namespace": env.namespace},
            "rules": [{"apiGroups": ["argoproj.io"], "resources": ["workflows"],
                       "verbs": ["get", "update", "patch"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "mallory", "namespace": env.namespace},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                           "name": "mallory"},
               "subjects": [{"kind": "User", "name": "mallory"}]}
    apply(env.api, [role, binding])
    body = unique()
    status, answer = env.client().submit(body, env.signer.sign(body, time.time()))
    assert status == 201, answer
    path = f"{kube.WORKFLOWS.format(ns=env.namespace)}/{answer['name']}"
    mallory = env.user("mallory")
    swapped = rest.request(mallory, "PATCH", path, {"spec": {"templates": [
        {"name": "main", "container": {"image": "evil"}}]}})
    assert swapped.status == 403, swapped.body
    assert b"may change only in suspend, shutdown and activeDeadlineSeconds; this update " \
        b"changes templates" in swapped.body
    suspended = rest.request(mallory, "PATCH", path, {"spec": {"suspend": True}})
    assert suspended.status == 200, suspended.body
    assert workflow(env, answer["name"])["spec"]["templates"][1]["container"]["image"] == \
        "busybox"


def handshake_refused(env: WebhookEnv, client: str | None, body: bytes, header: str) -> bool:
    try:
        env.client(client).submit(body, header)
    except OSError:  # ssl.SSLError, or the connection reset by the refusing server
        return True
    return False


def test_every_forged_submission_is_refused_and_nothing_is_created(
        webhook_env: WebhookEnv) -> None:
    env = webhook_env
    before = {item["metadata"]["name"] for item in env.workflows()}
    tried: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    submitter = env.client()
    now = time.time()
    body = unique()
    good = env.signer.sign(body, now)
    status, answer = submitter.submit(body, good)
    assert status == 201, answer
    before.add(answer["name"])

    def attempt(kind: str, status: int, header: str | None, body: bytes = WORKFLOW) -> None:
        tried[kind] += 1
        got, document = submitter.submit(body, header)
        assert got == status, (kind, document)
        refused[kind] += 1

    forged = good[:-1] + ("0" if good[-1] != "0" else "1")
    attempt("forged", 401, forged, body)
    attempt("forged", 401, env.signer.sign(WORKFLOW, now + 1),
            WORKFLOW.replace(b"busybox", b"attacker/image"))
    attempt("forged", 401, env.signer.sign(WORKFLOW, now + 2), WORKFLOW[:-25])  # truncated
    attempt("replayed", 403, good, body)
    attempt("expired-key", 403, key("expired").sign(WORKFLOW, now))
    attempt("wrong-kid", 401, key("unknown-kid").sign(WORKFLOW, now))
    attempt("oversized", 413, env.signer.sign(WORKFLOW, now + 3),
            WORKFLOW + b"#" * (1 << 20))
    for kind, client in (("wrong-CA", "other-ca"), ("no-certificate", None)):
        tried[kind] += 1
        assert handshake_refused(env, client, WORKFLOW, env.signer.sign(WORKFLOW, now + 4)), kind
        refused[kind] += 1
    tried["wrong-subject"] += 1
    status, _ = env.client("intruder").submit(WORKFLOW, env.signer.sign(WORKFLOW, now + 5))
    assert status == 403
    refused["wrong-subject"] += 1
    assert refused == tried
    assert tried == {"forged": 3, "replayed": 1, "expired-key": 1, "wrong-kid": 1,
                     "oversized": 1, "wrong-CA": 1, "no-certificate": 1, "wrong-subject": 1}
    assert {item["metadata"]["name"] for item in env.workflows()} == before


def test_a_key_rotated_during_the_run(webhook_env: WebhookEnv) -> None:
    env = webhook_env
    old = env.signer
    new = key("rotated", start=old.not_before, hours=20)
    original = env.keys_file.read_bytes()
    try:
        write_keys(env.keys_file, old, new)  # the next key published beside the current one
        done = submit_cli(env, unique(), "rotation.yaml")  # the client picks the newer key
        assert done.returncode == 0, done.stderr
        body = unique()
        assert env.client().submit(body, old.sign(body, time.time()))[0] == 201
        write_keys(env.keys_file, new)  # the old key retired
        status, answer = env.client().submit(body, old.sign(body, time.time() + 1))
        assert (status, answer) == (401, {"error": f"unknown key id {old.key_id}"})
        assert env.client().submit(body, new.sign(body, time.time() + 2))[0] == 201
    finally:
        scratch = env.keys_file.with_name("restored.yaml")
        scratch.write_bytes(original)
        scratch.replace(env.keys_file)


@pytest.mark.parametrize(("change", "words"), [
    ((b"{name: extract, template: work}", b"{name: extract, template: work, depends: load}"),
     "task 'extract'"),
    ((b"depends: extract", b"depends: 'extract ||'"), "task 'load'"),
])
def test_a_bad_dag_is_422_naming_the_task_and_nothing_is_created(
        webhook_env: WebhookEnv, change: tuple[bytes, bytes], words: str) -> None:
    env = webhook_env
    before = len(env.workflows())
    done = submit_cli(env, WORKFLOW.replace(*change), "bad.yaml")
    assert done.returncode == 2
    assert "HTTP 422" in done.stderr and words in done.stderr, done.stderr
    assert len(env.workflows()) == before


def test_the_admission_route_takes_only_the_api_servers_certificate(
        webhook_env: WebhookEnv) -> None:
    env = webhook_env
    review = b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}'
    status, answer = env.client("dagpilot-submit").post("/mutate", review, {})
    assert status == 403 and "may not call /mutate" in answer["error"]
    try:
        env.client(None).post("/mutate", review, {})
        raise AssertionError("a call without a client certificate was answered")
    except OSError:
        pass


def test_the_submitted_workflow_runs_with_dagpilots_scheduler_name(
        webhook_env: WebhookEnv) -> None:
    """Its pods wait for dagpilot (kube-scheduler leaves them); the test binds them as a
    scheduler would, the twin runs them, Argo finishes the Workflow, and its durations,
    recorded with `dagpilot serve record`, come back as the next submission's annotations."""
    env = webhook_env
    body = unique(yaml.safe_dump(timed_workflow()).encode())
    status, answer = env.client().submit(body, env.signer.sign(body, time.time()))
    assert status == 201, answer
    pods_path = f"/api/v1/namespaces/{env.namespace}/pods"
    bound: set[str] = set()

    def finished() -> dict[str, Any] | None:
        for pod in kube.items(env.api, pods_path):
            name = pod["metadata"]["name"]
            if pod["metadata"]["labels"].get("workflows.argoproj.io/workflow") != answer["name"]:
                continue
            assert pod["spec"]["schedulerName"] == "dagpilot"
            if name not in bound and not pod["spec"].get("nodeName"):
                bind(env, name)
                bound.add(name)
        item = workflow(env, answer["name"])
        phase = item.get("status", {}).get("phase")
        assert phase not in ("Failed", "Error"), item.get("status")
        return item if phase == "Succeeded" else None
    done = kube.wait_for("the signed Workflow to succeed", finished, deadline_s=120, poll_s=0.5)
    assert len(bound) == 2
    listing = env.folder / "workflows.json"  # what `kubectl get workflows -o json` prints
    listing.write_text(json.dumps(rest.get(env.api, kube.WORKFLOWS.format(ns=env.namespace))))
    recorded = subprocess.run([sys.executable, "-m", "dagpilot.cli", "serve", "record",
                               str(listing), "--history", str(env.history_file)],
                              capture_output=True, text=True, timeout=120, check=False)
    assert recorded.returncode == 0, recorded.stderr
    history = parse_history(env.history_file.read_bytes(), "h")
    assert done["metadata"]["uid"] in history.workflows
    expected = history.expected_s("timed", "step")
    assert expected is not None and expected >= 2
    again = unique(yaml.safe_dump(timed_workflow()).encode())
    status, answer = env.client().submit(again, env.signer.sign(again, time.time()))
    assert status == 201, answer
    assert annotations(workflow(env, answer["name"]))["step"] == go_duration(expected)


def timed_workflow() -> dict[str, Any]:
    """Two pods of two simulated seconds each, one after the other."""
    item = copy.deepcopy(yaml.safe_load(WORKFLOW))
    item["metadata"] = {"generateName": "timed-"}
    item["spec"]["entrypoint"] = "main"
    item["spec"]["templates"] = [
        {"name": "main", "dag": {"tasks": [{"name": "a", "template": "step"},
                                           {"name": "b", "template": "step", "depends": "a"}]}},
        {"name": "step", "metadata": {"annotations": {"dagpilot.io/runtime": "2s"}},
         "container": {"image": "busybox", "command": ["sh", "-c", "true"],
                       "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}}]
    return item


def bind(env: WebhookEnv, pod: str) -> None:
    nodes = kube.items(env.api, "/api/v1/nodes?labelSelector=type%3Dkwok")
    target = sorted(node["metadata"]["name"] for node in nodes
                    if not node["spec"].get("taints") and not node["spec"].get("unschedulable"))[0]
    reply = rest.request(env.api, "POST", f"/api/v1/namespaces/{env.namespace}/pods/{pod}/binding",
                         {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod},
                          "target": {"apiVersion": "v1", "kind": "Node", "name": target}})
    assert reply.status == 201, reply.body
