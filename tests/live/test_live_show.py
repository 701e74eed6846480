"""`dagpilot live show --json` against the sandbox: one object whose nodes, capacities, labels and
taints are exactly what `kubectl get nodes -o json` says, and whose pending pods and jobs are
the API server's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dagpilot.core import quantity
from dagpilot.sandbox import rest
from dagpilot.sandbox.state import SandboxState
from tests.live.kube import admin, namespace, wait_for

pytestmark = pytest.mark.live


def _show(sandbox: SandboxState, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dagpilot.cli", "live", "show", "--kubeconfig",
         sandbox.kubeconfig, *extra], capture_output=True, text=True, timeout=120, check=False)


def _kubectl_nodes(sandbox: SandboxState) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    done = subprocess.run([kubectl, "get", "nodes", "-o", "json"], capture_output=True,
                          text=True, timeout=60, check=True,
                          env={**os.environ, "KUBECONFIG": sandbox.kubeconfig})
    return list(json.loads(done.stdout)["items"])


def test_the_json_nodes_are_exactly_kubectls(sandbox: SandboxState) -> None:
    done = _show(sandbox, "--json", "--prometheus",
                 f"http://127.0.0.1:{sandbox.ports['prometheus']}")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert set(document) == {"nodes", "pending", "jobs", "refused"}
    theirs = {n["metadata"]["name"]: n for n in _kubectl_nodes(sandbox)}
    ours = {n["name"]: n for n in document["nodes"]}
    assert set(ours) == set(theirs)
    for name, node in ours.items():
        kube = theirs[name]
        allocatable = kube["status"]["allocatable"]
        assert node["allocatable"] == {
            "cpu": quantity.milli_value(allocatable["cpu"]) / 1000,
            "memory": quantity.value(allocatable["memory"]),
            "gpus": quantity.value(allocatable.get("nvidia.com/gpu", "0"))}, name
        assert node["labels"] == kube["metadata"].get("labels", {}), name
        assert node["taints"] == kube["spec"].get("taints", []), name
        ready = any(c["type"] == "Ready" and c["status"] == "True"
                    for c in kube["status"]["conditions"])
        assert node["ready"] is ready
        assert set(node["allocated"]) == {"cpu", "memory", "gpus"}
        assert {"cpu_used", "memory_used", "memory_current", "membw_utilisation",
                "io_await_ms", "placed_since_sample", "age_s"} == set(node["signals"])
        if node["allocatable"]["gpus"]:
            assert sum(v for v in node["free_gpus"].values() if v is not None) <= node[
                "allocatable"]["gpus"]


def test_pending_pods_their_jobs_and_the_refused_are_shown(sandbox: SandboxState) -> None:
    api = admin(sandbox)
    with namespace(api, "lv-show") as ns:
        apart = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {}, "topologyKey": "kubernetes.io/hostname"}]}}
        for name, rules in (("one", {}), ("two", {}), ("apart", {"affinity": apart})):
            rest.create(api, f"/api/v1/namespaces/{ns}/pods", {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"schedulerName": "dagpilot-test-nobody", **rules, "containers": [
                    {"name": "main", "image": "busybox",
                     "resources": {"requests": {"cpu": "250m", "memory": "1Mi"}}}]}})
            wait_for(f"{name} created", lambda n=name: rest.get(
                api, f"/api/v1/namespaces/{ns}/pods/{n}"))

        def shown() -> dict[str, Any] | None:
            done = _show(sandbox, "--json")
            assert done.returncode == 0, done.stderr
            document: dict[str, Any] = json.loads(done.stdout)
            mine = [p for p in document["pending"] if p["namespace"] == ns]
            refused = [p for p in document["refused"] if p["namespace"] == ns]
            return document if len(mine) == 2 and refused else None

        document = wait_for("both pending in live show", shown, 120)
        mine = [p for p in document["pending"] if p["namespace"] == ns]
        assert [p["name"] for p in mine] == ["one", "two"]
        assert mine[0]["requests"] == {"cpu": 0.25, "memory": 2**20, "gpus": 0}
        assert document["jobs"][f"{ns}/one"] == {"nodes": [], "finished_tasks": [],
                                                 "pending": [f"{ns}/one"]}
        refused = [p for p in document["refused"] if p["namespace"] == ns]
        assert [p["name"] for p in refused] == ["apart"]
        assert refused[0]["reason"].startswith("required pod anti-affinity")


def test_an_unreachable_cluster_is_one_line_and_exit_2(sandbox: SandboxState,
                                                       tmp_path: Path) -> None:
    text = Path(sandbox.kubeconfig).read_text().replace(
        f"127.0.0.1:{sandbox.ports['apiserver']}", "127.0.0.1:1")
    config = tmp_path / "kubeconfig"
    config.write_text(text)
    done = subprocess.run([sys.executable, "-m", "dagpilot.cli", "live", "show",
                           "--kubeconfig", str(config)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: kube-apiserver https://127.0.0.1:1: unreachable")
