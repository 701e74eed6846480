"""Running `dagpilot serve scheduler` in a thread against the sandbox, and what the tests
create for it: Argo Workflows and pods with schedulerName dagpilot, and their outcome."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from dagpilot.core.types import Job
from dagpilot.live.workflow_manifest import workflow_manifest
from dagpilot.sandbox import rest
from dagpilot.sandbox.state import SandboxState
from dagpilot.serve.decisions import PolicySource
from dagpilot.serve.scheduler_process import SchedulerConfig, SchedulerProcess
from tests.live.kube import WORKFLOWS, items, wait_for
from tests.sim.helpers import job, task

SCHEDULER = "dagpilot"
MODELS = Path(__file__).resolve().parents[3] / "models"
# These tests check what the model decided (its annotation, journal, canary routing), on a
# host that also runs the control plane and other tests: one decision past the production
# deadline (100 ms) there would hand a burst of pods to the fallback. The deadline's own path
# is tested with a stalling policy and a 50 ms deadline (test_custom_scheduler.py).
TEST_DEADLINE_S = 10.0


def config(sandbox: SandboxState, **changes: Any) -> SchedulerConfig:
    base = SchedulerConfig(kubeconfig=Path(sandbox.kubeconfig), models=MODELS,
                           metrics_port=0, metrics_address="127.0.0.1", leader_elect=False,
                           reload_period_s=0.5, deadline_s=TEST_DEADLINE_S)
    return replace(base, **changes)


@contextmanager
def running(settings: SchedulerConfig, source: PolicySource | None = None, *,
            release_lease: bool = True) -> Iterator[SchedulerProcess]:
    """The scheduler started and looping in a thread; stopped and closed on exit."""
    process = SchedulerProcess(settings, source)
    stop = threading.Event()
    thread: threading.Thread | None = None
    try:
        process.start()
        thread = threading.Thread(target=process.run, args=(stop,), name="test-scheduler")
        thread.start()
        yield process
    finally:
        stop.set()
        if process.view is not None:
            process.view.wakeup.set()
        if thread is not None:
            thread.join(30)
        process.close(release_lease=release_lease)


def diamond(name: str) -> Job:
    return job(name, task("a", 1.0, cpu=0.5), task("b", 1.0, cpu=0.5, parents=("a",)),
               task("c", 1.0, cpu=0.5, parents=("a",)),
               task("d", 1.0, cpu=0.5, parents=("b", "c")))


def submit_workflow(api: rest.Endpoint, ns: str, name: str) -> None:
    manifest = workflow_manifest(diamond(name), name=name, scheduler=SCHEDULER)
    rest.create(api, WORKFLOWS.format(ns=ns), manifest)


def finished(api: rest.Endpoint, ns: str, name: str, deadline_s: float = 120) -> dict[str, Any]:
    def phase() -> dict[str, Any] | None:
        workflow = rest.get(api, f"{WORKFLOWS.format(ns=ns)}/{name}")
        done = (workflow.get("status") or {}).get("phase") in ("Succeeded", "Failed", "Error")
        return workflow if done else None
    return wait_for(f"Workflow {name} finished", phase, deadline_s)


def pod(name: str, cpu: str = "500m", scheduler: str = SCHEDULER,
        **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": {"dagpilot.io/runtime": "600s"}},
            "spec": {"schedulerName": scheduler, **spec, "containers": [
                {"name": "main", "image": "none",
                 "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}]}}


def create_pods(api: rest.Endpoint, ns: str, pods: list[dict[str, Any]]) -> None:
    for one in pods:
        rest.create(api, f"/api/v1/namespaces/{ns}/pods", one)


def all_bound(api: rest.Endpoint, ns: str, count: int,
              deadline_s: float = 60) -> list[dict[str, Any]]:
    def bound() -> list[dict[str, Any]] | None:
        pods = items(api, f"/api/v1/namespaces/{ns}/pods")
        return pods if len(pods) == count and all(p["spec"].get("nodeName")
                                                  for p in pods) else None
    return wait_for(f"{count} pods bound in {ns}", bound, deadline_s)


def events(api: rest.Endpoint, ns: str, reason: str) -> list[dict[str, Any]]:
    return [e for e in items(api, f"/api/v1/namespaces/{ns}/events")
            if e.get("reason") == reason]
