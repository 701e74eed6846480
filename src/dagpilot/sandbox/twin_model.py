"""The hardware twin's model: the simulator's own cluster state and progress model (sim/),
driven by the pods the real API server runs instead of by the simulated workflow engine.

Time is simulated seconds; the twin maps wall time onto it with its time scale. A pod starts
doing nominal work when kwok marks it Running; its rate is what `sim.progress` gives for
whatever else runs on its node, pool and communication group, so co-location changes runtimes
exactly as in the simulator. GPUs are picked as the simulated kubelet picks them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from dagpilot.core.config import PhysicsParameters, PhysicsSwitches
from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster, Job, Task
from dagpilot.core.view import PodRef
from dagpilot.sim.cluster_state import ClusterState, InvalidPlacement
from dagpilot.sim.kernel import Kernel
from dagpilot.sim.nodes import SimNode
from dagpilot.sim.pod import Phase, PodRun
from dagpilot.sim.progress import Progress

if TYPE_CHECKING:
    from dagpilot.sim.engine import JobRun


@dataclass(frozen=True, slots=True)
class Ended:
    """A pod the model has finished: `outcome` is "succeeded" or "oom-killed"."""

    key: str
    outcome: str


class TwinModel:
    def __init__(self, cluster: Cluster, params: PhysicsParameters,
                 switches: PhysicsSwitches) -> None:
        self.kernel = Kernel()
        self.state = ClusterState(cluster, self.kernel, params)
        self.progress = Progress(self.kernel, params, switches, self._on_complete)
        self.running: dict[str, PodRun] = {}  # by "namespace/name"
        self.gpus: dict[str, tuple[int, ...]] = {}
        self.ended: list[Ended] = []
        self._keys: dict[int, str] = {}
        self._uids = itertools.count()
        self._tasks: dict[Task, Task] = {}

    @property
    def now_s(self) -> float:
        return self.kernel.now_s

    def advance(self, now_s: float) -> list[Ended]:
        """Runs the physics up to `now_s`; returns the pods that finished meanwhile."""
        self.kernel.run_until(now_s)
        self.kernel.now_s = max(self.kernel.now_s, now_s)
        ended, self.ended = self.ended, []
        return ended

    def start(self, key: str, job_id: str, task: Task, node_name: str) -> list[Ended]:
        """A pod the API server runs on `node_name` starts its work now; returns the pods an
        OOM kill ended at once (maybe this one)."""
        node = self.state.node(node_name)
        if node is None or key in self.running:
            return []
        # The simulator caches per-task figures by id(task): keep one live Task per profile, so
        # an id is never reused by a later, different task.
        task = self._tasks.setdefault(task, task)
        uid = next(self._uids)
        ref = PodRef(uid, Job(job_id, (task,)), task, 0, self.now_s)
        self.state.add_pending(ref)
        gpus = self._gpus(ref, node)
        cpu_m = self.state.bind(ref, node, gpus)
        # The simulated workflow engine is not involved: the real Argo controller is.
        pod = PodRun(ref, cast("JobRun", None), node, gpus, cpu_m=cpu_m, now_s=self.now_s)
        node.bound[uid] = pod
        self.running[key] = pod
        self.gpus[key] = gpus
        self._keys[uid] = key
        for victim in self.progress.start(pod):
            self._end(victim, "oom-killed")
        ended, self.ended = self.ended, []
        return ended

    def _gpus(self, ref: PodRef, node: SimNode) -> tuple[int, ...]:
        """The simulated kubelet's device pick; the real scheduler already decided the node,
        so a disagreement about room is the API server's word against ours: it wins."""
        if not ref.requests.gpus:
            return ()
        try:
            return self.state.target(Placement(ref, node.spec.name))[2]
        except InvalidPlacement:
            return node.free_gpus[:ref.requests.gpus]

    def stop(self, key: str) -> None:
        """The pod left outside the model (deleted, or ended by someone else)."""
        pod = self.running.pop(key, None)
        if pod is None:
            return
        if pod.phase == Phase.RUNNING:
            self.progress.stop(pod)
        self._release(pod)

    def _on_complete(self, pod: PodRun, version: int) -> None:
        if version != pod.version or pod.phase != Phase.RUNNING:
            return  # a stale completion: the pod's rate changed since
        self.progress.stop(pod)
        pod.phase = Phase.SUCCEEDED
        self._end(pod, "succeeded")

    def _end(self, pod: PodRun, outcome: str) -> None:
        key = self._keys.get(pod.ref.uid)
        if key is None or self.running.get(key) is not pod:
            return
        if outcome != "succeeded":
            pod.phase = Phase.KILLED
            pod.version += 1
        del self.running[key]
        self._release(pod)
        self.ended.append(Ended(key, outcome))

    def _release(self, pod: PodRun) -> None:
        pod.node.bound.pop(pod.ref.uid, None)
        self.state.release(pod)
        key = self._keys.pop(pod.ref.uid, None)
        if key is not None:
            self.gpus.pop(key, None)

    def scrape(self) -> None:
        """A metrics sample now, of the nodes and pools whose load changed."""
        progress = self.progress
        self.state.scrape(self.now_s, list(progress.touched_nodes.values()),
                          list(progress.touched_pools.values()))
        progress.touched_nodes.clear()
        progress.touched_pools.clear()

    def remaining_s(self, key: str) -> float | None:
        pod = self.running.get(key)
        return None if pod is None else self.progress.remaining_at(pod, self.now_s)
