"""`python -m dagpilot.sandbox.twin`: the sandbox's hardware twin, one process beside kwok.

kwok pods are not processes, so on their own their runtimes could not depend on placement.
The twin watches the pods the real API server runs on kwok nodes and runs the simulator's
physics for them in real time (`--time-scale` simulated seconds per wall second): a pod's
nominal work is its `dagpilot.io/runtime` annotation, its intensities the other `dagpilot.io/`
annotations (live/task_annotations.py). When the work is done the twin patches the pod's status
to Succeeded, or to Failed (OOMKilled) when the memory model kills it, as a kubelet would. It
serves each kwok node's simulated signals on /metrics under the node agent's names, and the
GPUs it gave each pod on /podresources.
"""

from __future__ import annotations

import argparse
import json
import logging
import queue
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from dagpilot.core.config import PhysicsSwitches, SimSettings
from dagpilot.core.endpoints import Endpoint
from dagpilot.core.errors import DagpilotError
from dagpilot.live.inventory import cluster_of
from dagpilot.live.pods import decode_pod
from dagpilot.live.task_annotations import task_of
from dagpilot.sandbox import components, rest
from dagpilot.sandbox.errors import SandboxError
from dagpilot.sandbox.layout import Layout
from dagpilot.sandbox.twin_metrics import exposition
from dagpilot.sandbox.twin_model import Ended, TwinModel

log = logging.getLogger("dagpilot.twin")
SAMPLE_EVERY_S = 1.0  # wall seconds between the twin's own metric samples
RETRY_S = 1.0
WORKFLOW_LABEL = "workflows.argoproj.io/workflow"
Event = tuple[str, Any]
# docs/API_REFERENCE.md; tests/test_api_reference.py requests each one from _server.
ENDPOINTS = (
    Endpoint("GET", "/healthz", "Whether the twin has synced with the API server", "",
             ((200, "ok"), (503, "syncing"))),
    Endpoint("GET", "/metrics", "Each kwok node's simulated signals under the node agent's "
             "names (Prometheus text format)", "", ((200, "the exposition"),)),
    Endpoint("GET", "/podresources", "The GPUs the twin gave each running pod, per node, "
             "shaped as the kubelet's PodResources v1 ListPodResourcesResponse", "",
             ((200, "JSON {node: [{name, namespace, containers: [{name, devices}]}]}"),)),
)


def _key(pod: dict[str, Any]) -> str:
    meta = pod["metadata"]
    return f"{meta['namespace']}/{meta['name']}"


class Twin:
    def __init__(self, api: rest.Endpoint, model: TwinModel, time_scale: float) -> None:
        self.api = api
        self.model = model
        self.scale = time_scale
        self.events: queue.Queue[Event] = queue.Queue()
        self.uids: dict[str, str] = {}
        self.specs: dict[str, dict[str, Any]] = {}  # running pods' objects, for the patch
        self.ended_here: set[str] = set()  # pods the twin ended, until their status shows it
        self.skipped = 0
        self.synced = threading.Event()
        self.metrics = ""
        self.devices: dict[str, list[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self._start = time.monotonic()
        self._nodes = {node.name for node in model.state.cluster.nodes}

    def sim_now(self) -> float:
        return (time.monotonic() - self._start) * self.scale

    # --- the main loop: events in, physics forward, statuses out -------------------------

    def run(self, stop: threading.Event) -> None:
        threading.Thread(target=self._watch, args=(stop,), daemon=True).start()
        next_sample = 0.0
        while not stop.is_set():
            wait = min(next_sample, self._next_end_wall()) - time.monotonic()
            try:
                event = self.events.get(timeout=max(0.0, min(wait, 1.0)))
            except queue.Empty:
                event = None
            self._report(self.model.advance(self.sim_now()))
            if event is not None:
                self._apply(*event)
            if time.monotonic() >= next_sample:
                self._sample()
                next_sample = time.monotonic() + SAMPLE_EVERY_S

    def _next_end_wall(self) -> float:
        upcoming = self.model.kernel.next_time()
        if upcoming == float("inf"):
            return float("inf")
        return self._start + upcoming / self.scale

    def _apply(self, kind: str, obj: Any) -> None:
        if kind == "SYNC":
            present = {_key(pod) for pod in obj}
            for key in [k for k in self.model.running if k not in present]:
                self._forget(key)
            for pod in obj:
                self._pod(pod)
            self.synced.set()
        elif kind == "DELETED":
            self._forget(_key(obj))
        else:
            self._pod(obj)

    def _pod(self, pod: dict[str, Any]) -> None:
        key = _key(pod)
        phase = (pod.get("status") or {}).get("phase")
        node = (pod.get("spec") or {}).get("nodeName")
        if phase in ("Succeeded", "Failed"):
            self._forget(key)
            return
        if phase != "Running" or node not in self._nodes or key in self.model.running \
                or key in self.ended_here:
            return
        meta = pod["metadata"]
        record = decode_pod(pod)
        try:
            if record.error is not None or record.task is None:
                raise record.error or SandboxError("twin", f"pod {key} does not parse")
            # One task id for all: pods of one profile share a Task (see TwinModel.start).
            task = task_of("pod", meta.get("annotations") or {}, record.task.requests, key)
        except DagpilotError as error:
            self.skipped += 1
            log.warning("not simulated (it keeps running): %s", error)
            return
        job = (meta.get("labels") or {}).get(WORKFLOW_LABEL) or meta["name"]
        self.uids[key] = meta.get("uid", "")
        self.specs[key] = pod
        self._report(self.model.start(key, f"{meta['namespace']}/{job}", task, node))

    def _forget(self, key: str) -> None:
        self.model.stop(key)
        self.ended_here.discard(key)
        self.uids.pop(key, None)
        self.specs.pop(key, None)

    def _report(self, ended: Sequence[Ended]) -> None:
        for end in ended:
            pod = self.specs.pop(end.key, None)
            self.uids.pop(end.key, None)
            if pod is None:
                continue
            self.ended_here.add(end.key)
            self._patch(pod, end.outcome)

    def _patch(self, pod: dict[str, Any], outcome: str) -> None:
        meta = pod["metadata"]
        path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status"
        try:
            reply = rest.request(self.api, "PATCH", path, end_status(pod, outcome))
        except SandboxError as error:
            log.warning("status of %s not written: %s", _key(pod), error)
            return
        if reply.status >= 300 and reply.status != 404:  # 404: deleted meanwhile
            log.warning("status of %s not written: HTTP %s", _key(pod), reply.status)

    def _sample(self) -> None:
        self.model.scrape()
        text = exposition(self.model, dict(self.uids), time.time())
        devices = pod_resources(self.model)
        with self.lock:
            self.metrics, self.devices = text, devices

    # --- the watch: a list, then events from its resourceVersion, relisted on 410 ----------

    def _watch(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                listing = rest.get(self.api, "/api/v1/pods")
                self.events.put(("SYNC", listing.get("items", [])))
                version = listing["metadata"]["resourceVersion"]
                while not stop.is_set():
                    version = self._follow(version)
            except (SandboxError, KeyError, _Expired) as error:
                log.info("pod watch restarts: %s", error)
                stop.wait(RETRY_S)

    def _follow(self, version: str) -> str:
        for event in rest.watch(self.api, "/api/v1/pods", version):
            kind, obj = str(event.get("type")), event.get("object") or {}
            if kind == "ERROR":
                raise _Expired(str(obj.get("message", obj))[:200])
            version = obj.get("metadata", {}).get("resourceVersion", version)
            if kind != "BOOKMARK":
                self.events.put((kind, obj))
        return version


class _Expired(Exception):
    """The watch's resourceVersion is too old (410): list again."""


def end_status(pod: dict[str, Any], outcome: str) -> dict[str, Any]:
    """The status a kubelet reports when the pod's containers exit: all with code 0, or the
    main ones OOM-killed (Argo's `wait` sidecar still exits cleanly)."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    started = (pod.get("status") or {}).get("startTime", now)
    oom = outcome != "succeeded"
    statuses = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        killed = oom and container.get("name") != "wait"
        statuses.append({"name": container.get("name"), "image": container.get("image", ""),
                         "ready": False, "restartCount": 0, "started": False,
                         "state": {"terminated": {
                             "exitCode": 137 if killed else 0,
                             "reason": "OOMKilled" if killed else "Completed",
                             "startedAt": started, "finishedAt": now}}})
    ended = {"status": "False", "reason": "PodCompleted", "lastTransitionTime": now}
    return {"status": {"phase": "Failed" if oom else "Succeeded",
                       **({"reason": "OOMKilled"} if oom else {}),
                       "containerStatuses": statuses,
                       "conditions": [
                           {"type": "Initialized", "status": "True", "lastTransitionTime": now},
                           {"type": "Ready", **ended}, {"type": "ContainersReady", **ended},
                           {"type": "PodScheduled", "status": "True",
                            "lastTransitionTime": now}]}}


def pod_resources(model: TwinModel) -> dict[str, list[dict[str, Any]]]:
    """Per node, the GPUs each running pod holds, shaped as the kubelet's PodResources API
    (v1 ListPodResourcesResponse, as JSON) reports device assignments."""
    listing: dict[str, list[dict[str, Any]]] = {}
    for key, gpus in model.gpus.items():
        pod = model.running.get(key)
        if pod is None or not gpus:
            continue
        namespace, name = key.split("/", 1)
        listing.setdefault(pod.node.spec.name, []).append({
            "name": name, "namespace": namespace, "containers": [{"name": "main", "devices": [
                {"resourceName": "nvidia.com/gpu", "deviceIds": [str(g) for g in gpus]}]}]})
    return listing


def _server(twin: Twin, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/healthz":
                body, status = (b"ok", 200) if twin.synced.is_set() else (b"syncing", 503)
            elif self.path == "/metrics":
                with twin.lock:
                    body, status = twin.metrics.encode(), 200
            elif self.path == "/podresources":
                with twin.lock:
                    body, status = json.dumps(twin.devices).encode(), 200
            else:
                body, status = b"not found", 404
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            del format, args  # Prometheus scrapes every few seconds: no access log

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="dagpilot-twin", description=__doc__)
    parser.add_argument("--dir", type=Path, required=True, help="the sandbox's folder")
    parser.add_argument("--api-port", type=int, required=True)
    parser.add_argument("--port", type=int, required=True, help="/metrics and /healthz")
    parser.add_argument("--time-scale", type=float, default=1.0,
                        help="simulated seconds per wall second")
    parser.add_argument("--physics", choices=("on", "off"), default="on")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if not 0 < args.time_scale <= 10_000:
        parser.error("--time-scale must be above 0 and at most 10000")
    api = components.api_endpoint(Layout(args.dir.resolve()), args.api_port)
    key, value = components.KWOK_NODE_LABEL
    nodes = rest.get(api, f"/api/v1/nodes?labelSelector={key}%3D{value}").get("items", [])
    settings = SimSettings(physics=PhysicsSwitches(enabled=args.physics == "on"))
    # The twin's clock follows the wall: no scripted faults or storage collapses run in it.
    switches = settings.physics.effective()
    model = TwinModel(cluster_of(nodes, "sandbox"), settings.effects, switches)
    twin = Twin(api, model, args.time_scale)
    server = _server(twin, args.port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    log.info("twin: %d kwok nodes, time scale %g, physics %s", len(nodes), args.time_scale,
             args.physics)
    twin.run(threading.Event())


if __name__ == "__main__":
    main()
