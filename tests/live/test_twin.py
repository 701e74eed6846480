"""The hardware twin against the real sandbox: placement changes runtimes as the simulator's
physics says, memory over a node's capacity is an OOM kill, GPUs are assigned as the simulated
kubelet does, and the signals reach Prometheus under the node agent's names."""

from __future__ import annotations

import calendar
import json
import time
import urllib.parse
import urllib.request
from typing import Any

from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.live.pods import decode_pod
from dagpilot.live.task_annotations import task_of
from dagpilot.sandbox import rest
from dagpilot.sandbox.state import SandboxState
from dagpilot.sandbox.twin_model import TwinModel
from tests.live.conftest import SANDBOX_CLUSTER
from tests.live.kube import admin, items, namespace, wait_for

CPU_NODE = "node-0000"  # 16 cores, 64 GiB, on the shared network pool
# 64 cores on one 204.8 GB/s socket: enough cores to pass the channels' knee (16 cannot: at
# 8 GB/s a busy core they stream at most 128 GB/s, 0.63 of their socket).
BIG_NODE = "node-0003"
GPU_NODE = "node-0007"  # 8 A100s, 4 + 4 on two root complexes
GIB = 2**30


def _pod(name: str, node: str, notes: dict[str, str], *, cpu: str = "2",
         memory: str = "1Gi", gpus: int = 0) -> dict[str, Any]:
    requests = {"cpu": cpu, "memory": memory, **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": notes},
            "spec": {"nodeName": node, "containers": [
                {"name": "main", "image": "busybox",
                 "resources": {"requests": requests, "limits": requests}}],
                "tolerations": [{"operator": "Exists"}]}}


def _create(api: rest.Endpoint, ns: str, pods: list[dict[str, Any]]) -> None:
    for pod in pods:
        rest.create(api, f"/api/v1/namespaces/{ns}/pods", pod)


def _ended(api: rest.Endpoint, ns: str, count: int) -> list[dict[str, Any]] | None:
    pods = items(api, f"/api/v1/namespaces/{ns}/pods")
    done = [p for p in pods if p["status"].get("phase") in ("Succeeded", "Failed")]
    return pods if len(done) == count else None


def _seconds(stamp: str) -> int:
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def _duration_s(pod: dict[str, Any]) -> int:
    finished = pod["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"]
    return _seconds(finished) - _seconds(pod["status"]["startTime"])


def _expected_s(pods: list[dict[str, Any]]) -> list[float]:
    """What the simulator's physics says for these pods started together, in wall seconds."""
    settings = SimSettings()
    model = TwinModel(load_cluster(SANDBOX_CLUSTER), settings.effects, settings.physics)
    for pod in pods:
        name = pod["metadata"]["name"]
        requests = decode_pod({**pod, "metadata": {**pod["metadata"], "namespace": "ns"}}).requests
        task = task_of(name, pod["metadata"]["annotations"], requests, name)
        model.start(name, "job", task, pod["spec"]["nodeName"])
    ends: dict[str, float] = {}
    while model.running:
        clock = model.kernel.next_time()
        for end in model.advance(clock):
            ends[end.key] = clock
    return [ends[p["metadata"]["name"]] for p in pods]


MEMBW_HEAVY = {"dagpilot.io/runtime": "3s", "dagpilot.io/membw-intensity": "0.9"}


def test_co_located_memory_bound_pods_run_as_long_as_the_simulator_says(
        sandbox: SandboxState) -> None:
    api = admin(sandbox)
    assert sandbox.time_scale == 1.0
    # 8 x 4 cores x 0.9 x 8 GB/s = 230 GB/s on 204.8 GB/s: past saturation, 3.6x slower.
    alone = [_pod("alone", BIG_NODE, MEMBW_HEAVY, cpu="4")]
    crowd = [_pod(f"crowd-{i}", BIG_NODE, MEMBW_HEAVY, cpu="4") for i in range(8)]
    with namespace(api, "twin-alone") as ns:
        _create(api, ns, alone)
        measured_alone = _duration_s(wait_for("alone ended", lambda: _ended(api, ns, 1), 60)[0])
    with namespace(api, "twin-crowd") as ns:
        _create(api, ns, crowd)
        ended = wait_for("crowd ended", lambda: _ended(api, ns, 8), 120)
        measured_crowd = [_duration_s(pod) for pod in ended]
    expected_alone, expected_crowd = _expected_s(alone)[0], max(_expected_s(crowd))
    assert expected_crowd > 1.5 * expected_alone  # the physics bites
    # Second-resolution timestamps, and pods created a little apart: within 1.5 s.
    assert abs(measured_alone - expected_alone) <= 1.5
    assert abs(max(measured_crowd) - expected_crowd) <= 1.5
    assert all(p["status"]["phase"] == "Succeeded" for p in ended)


def test_memory_beyond_the_node_is_an_oom_kill(sandbox: SandboxState) -> None:
    api = admin(sandbox)
    big = {"dagpilot.io/runtime": "2s", "dagpilot.io/peak-memory": str(40 * GIB)}
    with namespace(api, "twin-oom") as ns:
        # Long enough that the second starts while the first still runs.
        _create(api, ns, [_pod("first", CPU_NODE, {**big, "dagpilot.io/runtime": "8s"})])
        wait_for("first running", lambda: any(
            p["status"].get("phase") == "Running"
            for p in items(api, f"/api/v1/namespaces/{ns}/pods")), 30)
        _create(api, ns, [_pod("second", CPU_NODE, big)])
        pods = wait_for("both ended", lambda: _ended(api, ns, 2), 60)
    failed = [p for p in pods if p["status"]["phase"] == "Failed"]
    assert len(failed) == 1
    terminated = failed[0]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (failed[0]["status"]["reason"], terminated["reason"], terminated["exitCode"]) == (
        "OOMKilled", "OOMKilled", 137)


def _get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return reply.read().decode()


def test_gpus_are_assigned_and_reported_and_prometheus_scrapes_the_twin(
        sandbox: SandboxState) -> None:
    api = admin(sandbox)
    twin = f"http://127.0.0.1:{sandbox.ports['twin']}"
    notes = {"dagpilot.io/runtime": "30s"}
    with namespace(api, "twin-gpu") as ns:
        _create(api, ns, [_pod("trainer", GPU_NODE, notes, cpu="8", memory="64Gi", gpus=2)])
        listing = wait_for("devices reported", lambda: json.loads(
            _get_text(f"{twin}/podresources")).get(GPU_NODE), 30)
        devices = listing[0]["containers"][0]["devices"][0]
        assert (listing[0]["namespace"], devices["resourceName"]) == (ns, "nvidia.com/gpu")
        assert len(devices["deviceIds"]) == 2
        query = urllib.parse.urlencode({"query": f'dagpilot_gpus_free{{node="{GPU_NODE}"}}'})
        url = f"http://127.0.0.1:{sandbox.ports['prometheus']}/api/v1/query?{query}"

        def free_per_complex() -> dict[str, str] | None:
            result = json.loads(_get_text(url))["data"]["result"]
            free = {r["metric"]["root_complex"]: r["value"][1] for r in result}
            return free if sum(float(v) for v in free.values()) == 6 else None

        free = wait_for("Prometheus sees 6 free GPUs", free_per_complex, 30)
        assert sorted(free.values()) == ["2", "4"]  # both GPUs on one root complex
