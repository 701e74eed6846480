"""diagnose-node against the sandbox's API server: conditions a test sets on a kwok node stay
(kwok's stages set a node's conditions only while it has no Ready condition, and keep renewing
its Lease), and a node whose Lease nobody renews is a network finding."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from typer.testing import CliRunner

from dagpilot.cli import app
from dagpilot.sandbox import rest
from dagpilot.sandbox.state import SandboxState
from tests.conftest import FIXTURES
from tests.live.kube import admin, items

pytestmark = pytest.mark.live
STALE_NODE = "diagnose-stale-lease"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"


def _status(api: rest.Endpoint, node: str) -> dict[str, Any]:
    status: dict[str, Any] = rest.get(api, f"/api/v1/nodes/{node}")["status"]
    return status


def _set_conditions(api: rest.Endpoint, node: str, conditions: list[dict[str, Any]]) -> None:
    reply = rest.request(api, "PATCH", f"/api/v1/nodes/{node}/status",
                         {"status": {"conditions": conditions}})
    assert reply.status == 200, reply.body


@pytest.fixture
def not_ready_node(sandbox: SandboxState) -> Iterator[str]:
    """A kwok node marked NotReady with NetworkUnavailable, restored at the end."""
    api = admin(sandbox)
    kwok_nodes = items(api, "/api/v1/nodes?labelSelector=type%3Dkwok")
    node = str(kwok_nodes[0]["metadata"]["name"])
    original = _status(api, node)["conditions"]
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    changed = [c for c in original if c["type"] not in ("Ready", "NetworkUnavailable")] + [
        {"type": "Ready", "status": "False", "reason": "KubeletNotReady",
         "message": "container runtime network not ready", "lastHeartbeatTime": now,
         "lastTransitionTime": now},
        {"type": "NetworkUnavailable", "status": "True", "reason": "NoRouteCreated",
         "message": "route controller failed", "lastHeartbeatTime": now,
         "lastTransitionTime": now}]
    _set_conditions(api, node, changed)
    try:
        yield node
    finally:
        _set_conditions(api, node, original)


def _diagnose(sandbox: SandboxState, node: str, *extra: str) -> str:
    result = CliRunner().invoke(app, [
        "ops", "diagnose-node", node, "--kubeconfig", sandbox.kubeconfig,
        "--prometheus", f"http://127.0.0.1:{sandbox.ports['prometheus']}", *extra])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_not_ready_kwok_node_shows_its_network_condition_and_a_fresh_lease(
        sandbox: SandboxState, not_ready_node: str) -> None:
    output = _diagnose(sandbox, not_ready_node, "--kernel-log",
                       str(FIXTURES / "ops" / "journal-link.log"))
    lines = output.splitlines()
    assert lines[0].startswith(f"node {not_ready_node}: NotReady (Ready=False; reason "
                               "KubeletNotReady; message container runtime network not ready")
    assert "[network] condition NetworkUnavailable=True" in lines
    assert "[network] link eno1 down (not up again in the log)" in lines
    assert not any("Lease not renewed" in line for line in lines)  # kwok renews it
    assert any(line.startswith("checked: conditions and Lease: Lease renewed") for line in lines)
    assert "checked: ping mesh: no series for this node" in lines  # the twin has no mesh
    ready = {c["type"]: c for c in _status(admin(sandbox), not_ready_node)["conditions"]}
    assert ready["Ready"]["status"] == "False", "kwok left the test's condition alone"


@pytest.fixture
def stale_lease_node(sandbox: SandboxState) -> Iterator[str]:
    """A Node kwok does not manage (no type=kwok label), with a Lease renewed 10 min ago."""
    api = admin(sandbox)
    rest.create(api, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                            "metadata": {"name": "kube-node-lease"}})
    rest.create(api, "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                       "metadata": {"name": STALE_NODE}})
    renewed = datetime.fromtimestamp(time.time() - 600, UTC).strftime(
        "%Y-%m-%dT%H:%M:%S.000000Z")
    rest.create(api, LEASES, {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": STALE_NODE},
        "spec": {"holderIdentity": STALE_NODE, "leaseDurationSeconds": 40,
                 "renewTime": renewed}})
    _set_conditions(api, STALE_NODE, [{
        "type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
        "message": "Kubelet stopped posting node status."}])
    try:
        yield STALE_NODE
    finally:
        rest.request(api, "DELETE", f"{LEASES}/{STALE_NODE}")
        rest.request(api, "DELETE", f"/api/v1/nodes/{STALE_NODE}")


def test_a_lease_nobody_renews_is_a_network_finding(sandbox: SandboxState,
                                                     stale_lease_node: str) -> None:
    output = _diagnose(sandbox, stale_lease_node)
    lines = output.splitlines()
    assert lines[0].startswith(f"node {stale_lease_node}: NotReady (Ready=Unknown")
    assert "[network] node Lease not renewed" in lines
    evidence = lines[lines.index("[network] node Lease not renewed") + 1].strip()
    age = int(evidence.split()[2])
    assert 600 <= age < 900 and "(duration 40 s" in evidence


def test_an_unknown_node_is_a_clear_error(sandbox: SandboxState) -> None:
    result = CliRunner().invoke(app, ["ops", "diagnose-node", "no-such-node",
                                      "--kubeconfig", sandbox.kubeconfig])
    assert result.exit_code != 0
    assert "no node of that name" in str(result.exception)
