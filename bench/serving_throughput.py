"""Serving throughput and latency: kube-scheduler alone, with the dagpilot extender, and
`dagpilot serve scheduler`, on the sandbox's real control plane.

    NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" \\
        .venv/bin/python bench/serving_throughput.py [--nodes 100,1000] [--pods 300] \\
        [--window 60] [--pin-cpus N|none] [--verbs prioritize] [--out FILE.json]
        [--profile DIR] [--pprof DIR]

For each node count, one sandbox (`builtin:scale-N`, twin off) and, for each scheduler in
turn, the same stream of pods: the built-in mix's tasks (GPU tasks left out: scale-N nodes
have no GPUs) rendered by live/pod_manifest without the runtime annotation, so kwok keeps
them running; each pod's schedulerName is the scheduler's under test, each run has a fresh
namespace, deleted after. Two measurements per scheduler, each with the scheduler started
for it:

- saturation: `--pods` pods created (4 threads on keep-alive connections) and seen pending
  on the watch, then the scheduler started: it meets a standing backlog, so neither the
  creating client (a 2-core host creates ~100 pods/s, about what kube-scheduler binds) nor
  its start-up sets the figure; pods/s from its first bind seen on the watch to its last,
  and the CPU milliseconds per pod that span cost each process (/proc, all threads: the
  dagpilot processes, the kube-scheduler under test, kube-apiserver, etcd and kwok; on a
  loaded host the figures that move least);
- latency: the scheduler warmed with two pods, then pods offered at 0.8x kube-scheduler
  alone's saturated rate (measured first, in the same run) for `--window` seconds, from 4
  threads on one schedule; per pod, from the watch's receipt of the pending pod to the
  watch's receipt of its binding, on this client's monotonic clock (not the API's 1 s
  timestamps). Bound pods are deleted as they bind so the cluster never fills. A shorter
  `--window` shortens the run (the 1,000-node run on a busy host), at fewer samples;
  `--rate` offers a fixed rate instead (a host whose client cannot offer 0.8x: the run's
  `achieved_offer_per_s` says what it reached). Before the pods, every process's cores at
  rest for IDLE_S (`idle_cores`: kwok's node heartbeats and what they cost the control
  plane); during them, every process's CPU milliseconds a pod, this client's too (creating,
  watching, deleting). The line through those two points gives `demand_at_issue_rate`: the
  cores the issue's rate would ask of this host, for each scheduler.

Schedulers: (a) kube-scheduler alone: a second kube-scheduler of the sandbox's build and
configuration, for its own profile (the sandbox's default-scheduler is always running, so it
cannot meet a backlog); (a') the same with percentageOfNodesToScore 100, the extender's
scheduler without the extender (its ratio is taken against both); (b) a kube-scheduler with
the shipped extenders entry (deploy/scheduler-extender, percentageOfNodesToScore 100;
`--verbs prioritize`: without its filterVerb) calling `dagpilot serve extender` over mTLS
(the extender runs through both phases); (b') the same calling bench/protocol_extender.py,
the extender's process answering without the policy (every node passes and scores alike),
started for each phase: the protocol's own cost, apart from dagpilot's decision; (c)
`dagpilot serve scheduler`; (a'') kube-scheduler alone again, last: a phase runs slower the
later it comes in a run, so the ratios to kube-scheduler alone are taken against the mean of
its first and last saturated pods/s, and `kube_last_over_first` reports the drift; (a''')
kube-scheduler scoring every node again, last, for the extender's ratios likewise
(`score_all_last_over_first`). The dagpilot servers run as their own processes, started by
the CLI (b': by the script), each pinned to one CPU (`--cpus`, from `--pin-cpus`: by default
the host's last CPU; `none` leaves them free, as before the ninth measurement), as
docs/SERVING.md advises: the GIL's hand-offs between their threads then stay on one core.
`--profile DIR`: py-spy samples of each dagpilot process; `--pprof DIR`: each kube-scheduler's
Go CPU profile over the first PPROF_S seconds of its saturation phase."""

from __future__ import annotations

import argparse
import dataclasses
import http.client
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from dagpilot.live.pod_manifest import pod_manifest
from dagpilot.live.task_annotations import RUNTIME
from dagpilot.sandbox import build, components, launcher, process, rest
from dagpilot.sandbox.components import Ports
from dagpilot.sandbox.errors import SandboxError
from dagpilot.sandbox.layout import Layout, free_ports
from dagpilot.workloads import load

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the live tests' setup
from tests.live.serve.setup import extender_entry

REPO = Path(__file__).resolve().parent.parent
DAGPILOT = str(Path(sys.executable).parent / "dagpilot")
EXTENDER_PROFILE = "dagpilot-extender"
KUBE_PROFILE = "bench-kube"  # kube-scheduler alone, a second one started per phase
# kube-scheduler alone as the extender's scheduler is configured: every node scored (the
# default scores an adaptive share, 42 % at 1,000 nodes), the extender's cost measured apart
SCORE_ALL = "kube-scheduler, percentageOfNodesToScore 100"
EXTENDER = "kube-scheduler + extender"  # with the shipped extenders entry, dagpilot's extender
# the extender's scheduler calling an extender that answers without the policy: what the
# protocol itself costs (both sides' HTTP and JSON, the extender's watches)
PROTOCOL_ONLY = "kube-scheduler + protocol-only extender"
PROTOCOL_PROFILE = "protocol-extender"
# the baselines measured again after every other scheduler (a phase runs slower the later it
# comes in a run): the ratios are taken against the mean of the first and last measurement
KUBE_LAST = "kube-scheduler alone, again"
SCORE_ALL_LAST = f"{SCORE_ALL}, again"
CREATE_THREADS = 4
OFFERED_FRACTION = 0.8
WARM_PODS = 2
SETTLE_S = 30.0  # how long after the last create a pod may still bind
IDLE_S = 3.0  # the window of each latency phase's idle measurement
MEASURED: dict[str, int] = {}  # the processes of the scheduler under test, by role: their CPU
ONLY: set[str] = set()  # --only: the schedulers measured besides kube-scheduler alone
DECISIONS: dict[str, int] = {}  # the custom scheduler's last phase: decisions by outcome
PROFILES: list[Path] = []  # --profile DIR: where py-spy writes each dagpilot process's samples
PPROF: list[Path] = []  # --pprof DIR: where each kube-scheduler's Go CPU profile goes
PPROF_S = 3  # seconds of each profile, from the start of the saturation phase
KUBE_ENDPOINT: list[rest.Endpoint] = []  # the kube-scheduler under test, for --pprof


class Client:
    """One keep-alive HTTPS connection to the API server (one per thread), Nagle off: the
    request's headers and body leave in two writes (rest.NoDelayHTTPSConnection)."""

    def __init__(self, api: rest.Endpoint) -> None:
        self.api = api
        self.connection = rest.NoDelayHTTPSConnection("127.0.0.1", api.port, timeout=30,
                                                      context=api.context())

    def send(self, method: str, path: str, body: object = None) -> int:
        payload = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json", "Content-Type": "application/json"}
        for attempt in (1, 2):
            try:
                self.connection.request(method, path, body=payload, headers=headers)
                reply = self.connection.getresponse()
                reply.read()
                return reply.status
            except (OSError, http.client.HTTPException):
                self.connection.close()  # reconnects on the next request
                if attempt == 2:
                    raise
        return 0

    def close(self) -> None:
        self.connection.close()


class PodWatch:
    """The watch of one namespace's pods: when each pod was first seen pending and when its
    binding was first seen, by this client's monotonic clock; bound names go to `bound_queue`."""

    def __init__(self, api: rest.Endpoint, namespace: str, horizon_s: int) -> None:
        self.pending: dict[str, float] = {}
        self.bound: dict[str, float] = {}
        self.bound_queue: queue.Queue[str] = queue.Queue()
        self.changed = threading.Condition()
        self.rewatches = 0  # watches the server closed early (each resumed where it ended)
        self._closed = threading.Event()
        listed = rest.get(api, f"/api/v1/namespaces/{namespace}/pods")
        self._thread = threading.Thread(target=self._follow, daemon=True, args=(
            api, namespace, listed["metadata"]["resourceVersion"], horizon_s))
        self._thread.start()

    def _follow(self, api: rest.Endpoint, namespace: str, version: str, horizon_s: int) -> None:
        """The API server closes a watch that falls behind a burst (its watch cache cannot
        buffer for it): watch again from the last resourceVersion seen, until the horizon."""
        end = time.monotonic() + horizon_s
        while (left := int(end - time.monotonic())) > 0 and not self._closed.is_set():
            try:
                for event in rest.watch(api, f"/api/v1/namespaces/{namespace}/pods", version,
                                        left):
                    if event.get("type") == "ERROR":
                        raise SystemExit(f"watch of {namespace}: {event.get('object')}")
                    version = event.get("object", {}).get("metadata", {}).get(
                        "resourceVersion", version)
                    self._note(event)
            except SandboxError:
                if self._closed.is_set():
                    return  # the measurement is over and its sandbox is going
                raise
            self.rewatches += 1

    def close(self) -> None:
        """The measurement is over: the watch ends at its next event or error, quietly."""
        self._closed.set()

    def _note(self, event: dict[str, Any]) -> None:
        seen = time.monotonic()
        pod = event.get("object") or {}
        name = pod.get("metadata", {}).get("name")
        if event.get("type") in ("ADDED", "MODIFIED") and name is not None:
            with self.changed:
                self.pending.setdefault(name, seen)
                if pod.get("spec", {}).get("nodeName") and name not in self.bound:
                    self.bound[name] = seen
                    self.bound_queue.put(name)
                self.changed.notify_all()

    def wait_seen(self, names: set[str], deadline_s: float) -> bool:
        deadline = time.monotonic() + deadline_s
        with self.changed:
            while not names <= self.pending.keys():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
        return True

    def wait_bound(self, names: set[str], deadline_s: float) -> bool:
        deadline = time.monotonic() + deadline_s
        with self.changed:
            while not names <= self.bound.keys():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
        return True


def stream_tasks() -> list[Any]:
    tasks = []
    for job in load("builtin:mix"):
        for task in job.tasks:
            if not task.requests.gpus:
                tasks.extend([task] * task.instances)
    return tasks


def manifests(tasks: list[Any], prefix: str, count: int, scheduler: str
              ) -> list[dict[str, Any]]:
    pods = []
    for index in range(count):
        pod = pod_manifest(tasks[index % len(tasks)], f"{prefix}-{index}", scheduler=scheduler)
        pod["metadata"]["annotations"].pop(RUNTIME, None)  # no runtime: kwok keeps it running
        pods.append(pod)
    return pods


@contextmanager
def namespace(api: rest.Endpoint, prefix: str) -> Iterator[str]:
    """A fresh namespace; its pods deleted and the namespace finalised on exit (no controller
    manager runs in the sandbox)."""
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    rest.create(api, "/api/v1/namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        rest.request(api, "DELETE", f"/api/v1/namespaces/{name}/pods?gracePeriodSeconds=0",
                     timeout_s=300)  # thousands left behind by a scheduler that fell behind
        rest.request(api, "DELETE", f"/api/v1/namespaces/{name}")
        rest.request(api, "PUT", f"/api/v1/namespaces/{name}/finalize",
                     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
                      "spec": {"finalizers": []}})


def warm(api: rest.Endpoint, ns: str, watch: PodWatch, tasks: list[Any], scheduler: str
         ) -> None:
    """Two pods bound before the clock starts: every scheduler is running and has its caches."""
    client = Client(api)
    pods = manifests(tasks, "warm", WARM_PODS, scheduler)
    for pod in pods:
        client.send("POST", f"/api/v1/namespaces/{ns}/pods", pod)
    client.close()
    if not watch.wait_bound({p["metadata"]["name"] for p in pods}, 180):
        raise SystemExit(f"{scheduler}: warm-up pods not bound in 180 s")


def saturation(api: rest.Endpoint, tasks: list[Any], scheduler: str, count: int,
               start: Callable[[], AbstractContextManager[str]]) -> dict[str, Any]:
    """`count` pods created and seen pending before the scheduler under test starts: it meets
    a standing backlog, so neither the creating client nor the scheduler's start-up sets the
    rate; pods/s from its first bind to its last."""
    with namespace(api, "sat") as ns, closing(PodWatch(api, ns, 900)) as watch:
        pods = manifests(tasks, "p", count, scheduler)
        names = {p["metadata"]["name"] for p in pods}
        created = _create(api, ns, pods)
        if not watch.wait_seen(names, 60):
            raise SystemExit(f"{scheduler}: {count} pods not all seen pending in 60 s")
        with start(), CpuSampler() as cpu, go_profile(scheduler):
            watch.wait_bound(names, SETTLE_S + 120 + count / 5)
        binds = sorted(watch.bound[n] for n in names if n in watch.bound)
        elapsed = binds[-1] - binds[0] if len(binds) > 1 else float("nan")
        return {"pods": count, "bound": len(binds), "create_s": round(created, 2),
                "first_to_last_bind_s": round(elapsed, 2), "rewatches": watch.rewatches,
                "pods_per_s": round((len(binds) - 1) / elapsed, 1) if len(binds) > 1 else 0.0,
                "cpu_ms_per_pod": cpu.per_pod(binds)}


@contextmanager
def go_profile(scheduler: str) -> Iterator[None]:
    """With --pprof, the kube-scheduler under test's CPU profile over its first PPROF_S
    seconds (/debug/pprof/profile, which the bench's kube-schedulers serve without
    authorization then), written to DIR/<phase number>-<profile>.pb.gz for `go tool pprof`."""
    if not PPROF or not KUBE_ENDPOINT or scheduler == "dagpilot":
        yield
        return
    out = PPROF[0] / f"{len(list(PPROF[0].glob('*.pb.gz')))}-{scheduler}.pb.gz"
    endpoint = KUBE_ENDPOINT[0]

    def fetch() -> None:
        reply = rest.request(endpoint, "GET", f"/debug/pprof/profile?seconds={PPROF_S}",
                             timeout_s=PPROF_S + 30)
        out.write_bytes(reply.body)

    thread = threading.Thread(target=fetch, daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join(PPROF_S + 30)


class CpuSampler:
    """The CPU time (user + system, all threads) of each MEASURED process every 50 ms, so the
    CPU spent between the first and the last bind is known afterwards: per pod, a figure the
    host's other load does not inflate the way it does wall time."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, dict[str, float]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        while not self._stop.wait(0.05):
            seconds = {}
            for role, pid in list(MEASURED.items()):
                try:
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                seconds[role] = (int(fields[11]) + int(fields[12])) / tick
            self.samples.append((time.monotonic(), seconds))

    def per_pod(self, binds: list[float]) -> dict[str, float]:
        if len(binds) < 2:
            return {}
        first = min(self.samples, key=lambda sample: abs(sample[0] - binds[0]), default=None)
        last = min(self.samples, key=lambda sample: abs(sample[0] - binds[-1]), default=None)
        if first is None or last is None:
            return {}
        return {role: round(1000 * (last[1][role] - first[1][role]) / (len(binds) - 1), 2)
                for role in last[1] if role in first[1]}


def idle_cores() -> dict[str, float]:
    """The cores each MEASURED process (this client's too) uses with no pod coming or going
    for IDLE_S: the host's background (kwok's node heartbeats and what they cost the API
    server and etcd, the schedulers' resyncs), which a rate's demand adds to its pods'."""
    with measured("client", os.getpid()), CpuSampler() as cpu:
        time.sleep(IDLE_S)  # a measurement window, not a wait on a condition
    (begun, first), (ended, last) = cpu.samples[0], cpu.samples[-1]
    return {role: round((last[role] - first[role]) / (ended - begun), 3)
            for role in last if role in first}


def _create(api: rest.Endpoint, ns: str, pods: list[dict[str, Any]]) -> float:
    """Creates `pods` from CREATE_THREADS keep-alive connections; the seconds it took."""
    def create(share: list[dict[str, Any]]) -> None:
        client = Client(api)
        for pod in share:
            client.send("POST", f"/api/v1/namespaces/{ns}/pods", pod)
        client.close()

    threads = [threading.Thread(target=create, args=(pods[i::CREATE_THREADS],))
               for i in range(CREATE_THREADS)]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - start


def offered(api: rest.Endpoint, tasks: list[Any], scheduler: str, rate: float,
            window_s: float) -> dict[str, Any]:
    horizon_s = int(window_s + SETTLE_S + 240)
    with namespace(api, "lat") as ns, closing(PodWatch(api, ns, horizon_s)) as watch:
        warm(api, ns, watch, tasks, scheduler)
        idle = idle_cores()
        count = max(1, int(rate * window_s))
        pods = manifests(tasks, "p", count, scheduler)
        done = threading.Event()
        deleters = [threading.Thread(target=_delete_bound, args=(api, ns, watch, done))
                    for _ in range(CREATE_THREADS)]
        for deleter in deleters:
            deleter.start()
        start = time.monotonic() + 0.1
        offerers = [threading.Thread(target=_offer, args=(api, ns, pods, i),
                                     kwargs={"rate": rate, "start": start})
                    for i in range(CREATE_THREADS)]
        names = {p["metadata"]["name"] for p in pods}
        with measured("client", os.getpid()), CpuSampler() as cpu:
            for offerer in offerers:
                offerer.start()
            for offerer in offerers:
                offerer.join()
            offering_s = time.monotonic() - start
            watch.wait_bound(names, SETTLE_S)
        done.set()
        for deleter in deleters:
            deleter.join()
        latencies = np.array([watch.bound[n] - watch.pending[n] for n in names
                              if n in watch.bound and n in watch.pending]) * 1000
        binds = sorted(watch.bound[n] for n in names if n in watch.bound)
        return {"offered_per_s": round(rate, 1), "pods": count,
                "achieved_offer_per_s": round(count / offering_s, 1),
                "idle_cores": idle, "cpu_ms_per_pod": cpu.per_pod(binds),
                "binds_per_s": round((len(binds) - 1) / (binds[-1] - binds[0]), 1)
                if len(binds) > 1 else 0.0,
                "bound": int(latencies.size), "rewatches": watch.rewatches,
                "p50_ms": round(float(np.percentile(latencies, 50)), 1) if latencies.size else None,
                "p99_ms": round(float(np.percentile(latencies, 99)), 1) if latencies.size else None,
                "max_ms": round(float(latencies.max()), 1) if latencies.size else None}


def _offer(api: rest.Endpoint, ns: str, pods: list[dict[str, Any]], share: int, *,
           rate: float, start: float) -> None:
    """Pod i is created at start + i / rate; this thread creates every CREATE_THREADS-th one
    (one connection cannot keep up with the higher rates on its own)."""
    client = Client(api)
    for index in range(share, len(pods), CREATE_THREADS):
        wait = start + index / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)  # pacing the offered rate, not waiting on a result
        client.send("POST", f"/api/v1/namespaces/{ns}/pods", pods[index])
    client.close()


def _delete_bound(api: rest.Endpoint, ns: str, watch: PodWatch, done: threading.Event) -> None:
    """Deletes pods as they bind, so a 60 s stream never fills the cluster."""
    client = Client(api)
    while not (done.is_set() and watch.bound_queue.empty()):
        try:
            name = watch.bound_queue.get(timeout=0.5)
        except queue.Empty:
            continue
        if not name.startswith("warm"):
            client.send("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}?gracePeriodSeconds=0")
    client.close()


def _started(command: list[str], log: Path, ready: Callable[[], bool]) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
    deadline = time.monotonic() + 180
    while not ready():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            raise SystemExit(f"{command[1:3]} did not start: see {log}")
        time.sleep(0.5)  # polling a process's readiness
    if PROFILES:
        _profiled[child.pid] = _sampler(child.pid, PROFILES[0] / f"{log.stem}-{child.pid}.txt")
    return child


_profiled: dict[int, subprocess.Popen[bytes]] = {}


def _sampler(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """py-spy attached to `pid`, 100 samples/s of the thread holding the GIL (a Python
    process's one serial resource), collapsed stacks (flamegraph.pl's input)."""
    return subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid",
                             str(pid), "--rate", "100", "--format", "raw", "--threads",
                             "--gil", "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _stop(child: subprocess.Popen[bytes]) -> None:
    sampler = _profiled.pop(child.pid, None)
    if sampler is not None:  # SIGINT: py-spy writes its file and exits
        sampler.send_signal(signal.SIGINT)
        sampler.wait(30)
    child.terminate()
    try:
        child.wait(20)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def _listening(port: int) -> Callable[[], bool]:
    def probe() -> bool:
        try:
            http.client.HTTPConnection("127.0.0.1", port, timeout=1).connect()
        except OSError:
            return False
        return True
    return probe


@contextmanager
def extender_server(layout: Layout, cpus: str | None, filter_verb: bool, *,
                    protocol_only: bool = False) -> Iterator[dict[str, Any]]:
    """`dagpilot serve extender` (or bench/protocol_extender.py, the same without the policy);
    the shipped extenders entry pointing at it."""
    port = free_ports(1)[0]
    pki = layout.pki
    program = [sys.executable, str(REPO / "bench/protocol_extender.py")] if protocol_only \
        else [DAGPILOT, "serve", "extender", "--models", str(REPO / "models")]
    extender = _started([*program, "--kubeconfig", str(layout.kubeconfig),
                         "--port", str(port), "--tls-cert", str(pki / "serving.crt"),
                         "--tls-key", str(pki / "serving.key"), "--client-ca",
                         str(pki / "ca.crt"), "--address", "127.0.0.1", *_pinned(cpus)],
                        layout.logs / f"bench-{'protocol-' if protocol_only else ''}extender.log",
                        _listening(port))
    try:
        with measured("protocol extender" if protocol_only else "extender", extender.pid):
            # its CPU counts while it serves
            yield extender_entry(port, pki, filter_verb=filter_verb)
    finally:
        _stop(extender)


@contextmanager
def protocol_only_extender(layout: Layout, ports: Ports, cpus: str | None,
                           filter_verb: bool) -> Iterator[str]:
    """kube-scheduler with the shipped extenders entry, calling an extender that answers
    without the policy (bench/protocol_extender.py), both started for one phase."""
    with extender_server(layout, cpus, filter_verb, protocol_only=True) as entry, kube_scheduler(
            layout, ports, PROTOCOL_PROFILE, entry) as profile:
        yield profile


@contextmanager
def measured(role: str, pid: int) -> Iterator[None]:
    MEASURED[role] = pid
    try:
        yield
    finally:
        MEASURED.pop(role, None)


@contextmanager
def kube_scheduler(layout: Layout, ports: Ports, profile: str,
                   extender: dict[str, Any] | None, *, score_all: bool = False
                   ) -> Iterator[str]:
    """A kube-scheduler of the sandbox's build and configuration for `profile`'s pods alone;
    with `extender`, the shipped extenders entry and percentageOfNodesToScore 100 (as the
    shipped configuration has it); `score_all`: that percentage without the extender."""
    component = components.kube_scheduler(
        layout, build.bin_dir(), ports, extenders=[extender] if extender else None,
        profile=profile, name=f"kube-scheduler-{profile}", port=free_ports(1)[0],
        extra={"percentageOfNodesToScore": 100} if extender or score_all else None)
    if PPROF:  # its profile served to the bench without a token
        component = dataclasses.replace(component, argv=[
            *component.argv, "--authorization-always-allow-paths=/healthz,/readyz,/livez,"
            "/debug/pprof/*"])
    scheduler = process.start(component, layout.logs)
    try:
        process.wait_ready(component, scheduler)
        KUBE_ENDPOINT[:] = [rest.Endpoint(component.name, component.port,
                                          layout.pki / "ca.crt")]
        with measured("kube-scheduler", scheduler.pid):
            yield profile
    finally:
        KUBE_ENDPOINT.clear()
        process.stop([scheduler])


@contextmanager
def custom_scheduler(layout: Layout, cpus: str | None) -> Iterator[str]:
    """`dagpilot serve scheduler` for one phase; its decisions by outcome (model, fallback,
    unschedulable) and fallbacks by reason, read from its /metrics before it stops, go to
    DECISIONS: a fallback decision costs far less CPU than the model's, so the rate and CPU
    figures mean little without them."""
    port = free_ports(1)[0]
    child = _started([DAGPILOT, "serve", "scheduler", "--kubeconfig", str(layout.kubeconfig),
                      "--models", str(REPO / "models"), "--scheduler-name", "dagpilot",
                      "--no-leader-elect", "--metrics-port", str(port),
                      "--metrics-address", "127.0.0.1", *_pinned(cpus)],
                     layout.logs / "bench-scheduler.log", lambda: True)
    try:
        with measured("dagpilot", child.pid):
            yield "dagpilot"  # the warm-up pods (latency) or the first bind (saturation) wait
    finally:
        DECISIONS.clear()
        DECISIONS.update(decision_counts(port))
        _stop(child)


def _pinned(cpus: str | None) -> list[str]:
    """A dagpilot process's --cpus option (none when not pinned)."""
    return ["--cpus", cpus] if cpus else []


def decision_counts(port: int) -> dict[str, int]:
    """`outcome` and `fallback:reason` -> count, from the scheduler's /metrics ({} if none)."""
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
    except OSError:
        return {}
    counts: dict[str, int] = {}
    for family, prefix in (("decisions", ""), ("fallbacks", "fallback:")):
        pattern = rf'^dagpilot_scheduler_{family}_total{{\w+="([^"]+)"}} ([0-9.e+]+)$'
        for label, value in re.findall(pattern, text, flags=re.MULTILINE):
            counts[prefix + label] = int(float(value))
    # how long the decisions took (the histogram's cumulative buckets): the scheduler's own
    # share of a pod's latency, against the queueing and the API's
    for family in ("decision", "bind"):
        pattern = rf'^dagpilot_scheduler_{family}_seconds_bucket{{le="([^"]+)"}} ([0-9.e+]+)$'
        for bound, value in re.findall(pattern, text, flags=re.MULTILINE):
            if bound in ("0.005", "0.01", "0.02", "0.05", "0.1"):
                counts[f"{family}<={float(bound) * 1000:g}ms"] = int(float(value))
    return counts


def run(nodes: int, count: int, window_s: float, directory: Path,
        keep_logs: Path | None = None, *, offered_rate: float = 0.0,
        cpus: str | None, filter_verb: bool) -> dict[str, Any]:
    state = launcher.up(f"builtin:scale-{nodes}", directory, twin=False)
    layout = Layout(directory.resolve())
    ports = Ports.of(list(state.ports.values()))
    api = components.api_endpoint(layout, state.ports["apiserver"])
    tasks = stream_tasks()
    results: dict[str, Any] = {"nodes": nodes, "schedulers": {}}
    for name in ("kube-apiserver", "etcd", "kwok"):  # the host's share that every scheduler pays
        if name in state.components:
            MEASURED[name] = state.components[name].pid
    try:
        rate = offered_rate  # 0: OFFERED_FRACTION of kube-scheduler alone's saturated rate
        with extender_server(layout, cpus, filter_verb) as entry:
            starts: dict[str, tuple[str, Callable[[], AbstractContextManager[str]]]] = {
                "kube-scheduler": (KUBE_PROFILE, lambda: kube_scheduler(
                    layout, ports, KUBE_PROFILE, None)),
                SCORE_ALL: (KUBE_PROFILE, lambda: kube_scheduler(
                    layout, ports, KUBE_PROFILE, None, score_all=True)),
                PROTOCOL_ONLY: (PROTOCOL_PROFILE, lambda: protocol_only_extender(
                    layout, ports, cpus, filter_verb)),
                EXTENDER: (EXTENDER_PROFILE, lambda: kube_scheduler(
                    layout, ports, EXTENDER_PROFILE, entry)),
                "dagpilot serve scheduler": ("dagpilot", lambda: custom_scheduler(layout, cpus)),
                KUBE_LAST: (KUBE_PROFILE, lambda: kube_scheduler(
                    layout, ports, KUBE_PROFILE, None)),
                SCORE_ALL_LAST: (KUBE_PROFILE, lambda: kube_scheduler(
                    layout, ports, KUBE_PROFILE, None, score_all=True))}
            for name, (scheduler, start) in starts.items():
                if not _measured(name):
                    continue
                print(f"[{nodes} nodes] {name}: saturation", file=sys.stderr, flush=True)
                DECISIONS.clear()
                figures = {"saturation": saturation(api, tasks, scheduler, count, start)}
                if DECISIONS:
                    figures["saturation"]["decisions"] = dict(DECISIONS)
                if not rate:
                    rate = OFFERED_FRACTION * figures["saturation"]["pods_per_s"]
                print(f"[{nodes} nodes] {name}: {rate:.1f} pods/s offered", file=sys.stderr,
                      flush=True)
                DECISIONS.clear()
                with start():
                    figures["latency"] = offered(api, tasks, scheduler, rate, window_s)
                if DECISIONS:
                    figures["latency"]["decisions"] = dict(DECISIONS)
                results["schedulers"][name] = figures
                print(json.dumps({name: figures}), file=sys.stderr, flush=True)
    finally:
        MEASURED.clear()
        launcher.down(directory)
        if keep_logs is not None:  # every log, past the sandbox's removal
            keep_logs.mkdir(parents=True, exist_ok=True)
            for log in layout.logs.glob("*.log"):  # the control plane's too
                shutil.copy(log, keep_logs / f"{nodes}-{log.name}")
    results["ratios"] = _ratios(results["schedulers"])
    results["demand_at_issue_rate"] = _demand(results["schedulers"])
    return results


def _demand(schedulers: dict[str, Any]) -> dict[str, Any]:
    """What the issue's offered rate (OFFERED_FRACTION of kube-scheduler alone's first
    saturated rate) would ask of this host, per scheduler: a line through two points of its
    latency phase, idle (`idle_cores`) and at the phase's rate (every measured process's CPU
    a pod, this client's creating, watching and deleting too, times the binds per second),
    in cores. Above the host's cores, no client on this host can offer that rate to it."""
    rate = OFFERED_FRACTION * schedulers["kube-scheduler"]["saturation"]["pods_per_s"]
    per_pod_ms: dict[str, float] = {}
    cores: dict[str, float] = {}
    for name, figures in schedulers.items():
        latency = figures["latency"]
        if not latency.get("cpu_ms_per_pod") or not latency.get("binds_per_s"):
            continue
        idle = sum(latency["idle_cores"].values())
        busy = sum(latency["cpu_ms_per_pod"].values()) * latency["binds_per_s"] / 1000
        per_pod_ms[name] = round(1000 * (busy - idle) / latency["binds_per_s"], 2)
        cores[name] = round(idle + per_pod_ms[name] * rate / 1000, 2)
    return {"issue_rate_per_s": round(rate, 1), "host_cores": os.cpu_count(),
            "marginal_cpu_ms_per_pod": per_pod_ms, "cores": cores}


def _measured(name: str) -> bool:
    """Whether --only leaves `name` in: kube-scheduler alone always (every ratio's baseline),
    the extender with its own baseline and the protocol-only row."""
    if not ONLY or name in ONLY or name in ("kube-scheduler", KUBE_LAST):
        return True
    return EXTENDER in ONLY and name in (SCORE_ALL, PROTOCOL_ONLY, SCORE_ALL_LAST)


def _ratios(schedulers: dict[str, Any]) -> dict[str, float]:
    ratios: dict[str, float] = {}
    alone, ratios["kube_last_over_first"] = _baseline(schedulers, "kube-scheduler", KUBE_LAST)
    names = {"custom_over_kube": "dagpilot serve scheduler",
             "extender_over_kube": EXTENDER}
    ratios.update({ratio: round(schedulers[name]["saturation"]["pods_per_s"] / alone, 2)
                   for ratio, name in names.items() if name in schedulers})
    if SCORE_ALL in schedulers:
        scoring_all, ratios["score_all_last_over_first"] = _baseline(
            schedulers, SCORE_ALL, SCORE_ALL_LAST)
        for ratio, name in (("extender_over_kube_scoring_all", EXTENDER),
                            ("protocol_only_over_kube_scoring_all", PROTOCOL_ONLY)):
            if name in schedulers:
                ratios[ratio] = round(
                    schedulers[name]["saturation"]["pods_per_s"] / scoring_all, 2)
    return ratios


def _baseline(schedulers: dict[str, Any], first: str, last: str) -> tuple[float, float]:
    """A baseline measured first and last: the mean of its saturated pods/s, and the last
    over the first (the run's drift)."""
    early, late = (schedulers[name]["saturation"]["pods_per_s"] for name in (first, last))
    return float((early + late) / 2), round(late / early, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", default="100,1000")
    parser.add_argument("--pods", type=int, default=300)
    parser.add_argument("--window", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=0.0,
                        help="pods/s offered in the latency phase (default: 0.8x kube-scheduler "
                             "alone's saturated rate); for a host whose client cannot offer that")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--logs", type=Path, help="keep every component's log here")
    parser.add_argument("--profile", type=Path,
                        help="py-spy samples of each dagpilot process (scheduler, extender) here")
    parser.add_argument("--pprof", type=Path,
                        help="Go CPU profiles of each kube-scheduler's saturation phase here")
    parser.add_argument("--pin-cpus", default=str(max(os.sched_getaffinity(0))),
                        help="the dagpilot processes' --cpus (default: the host's last CPU, "
                             "one CPU as docs/SERVING.md advises); 'none': not pinned")
    parser.add_argument("--verbs", choices=("filter,prioritize", "prioritize"),
                        default="filter,prioritize",
                        help="the extenders entry's verbs: the shipped two, or prioritize "
                             "alone (the shipped entry without filterVerb: docs/SERVING.md)")
    parser.add_argument("--only", default="",
                        help="'extender' or 'custom' (comma-separated): measure only these "
                             "beside kube-scheduler alone (a profile, a quick check)")
    args = parser.parse_args()
    names = {"extender": EXTENDER, "custom": "dagpilot serve scheduler"}
    ONLY.update(names[name] for name in args.only.split(",") if name)
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
        PROFILES.append(args.profile)
    if args.pprof:
        args.pprof.mkdir(parents=True, exist_ok=True)
        PPROF.append(args.pprof)
    cpus = None if args.pin_cpus == "none" else args.pin_cpus
    report: dict[str, Any] = {"load_average": os.getloadavg(), "cpus": os.cpu_count(),
                              "dagpilot_cpus": cpus, "verbs": args.verbs, "runs": []}
    started = time.monotonic()
    for nodes in (int(n) for n in args.nodes.split(",")):
        with tempfile.TemporaryDirectory(prefix="dagpilot-throughput-") as directory:
            report["runs"].append(run(nodes, args.pods, args.window, Path(directory),
                                      args.logs, offered_rate=args.rate, cpus=cpus,
                                      filter_verb=args.verbs != "prioritize"))
    report["wall_s"] = round(time.monotonic() - started, 1)
    report["load_average_after"] = os.getloadavg()
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
