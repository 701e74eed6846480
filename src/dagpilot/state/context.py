"""EncodeContext: what the encoder remembers between the decisions of one episode or session.

Per cluster: the node statics (layout, topology, measured distance levels), the last signals
read and node features computed (the next decision updates only the nodes that changed), the
congestion streaks. Per job: its DAG arrays and its last progress; for the jobs of recent
candidates also their graphs at that progress and their distance features for the nodes they
last ran on. Start one context
per training episode or live session; `encode` without one works, but rebuilds the statics
every call and cannot see "three samples running".
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Sequence, Set
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from dagpilot.core.types import Job
from dagpilot.core.view import ClusterView
from dagpilot.state import signals as sig
from dagpilot.state.calibration import Calibration
from dagpilot.state.job_distance import distance_features
from dagpilot.state.job_graph import DEFAULT_GRAPH_TASKS, JobGraph, job_graphs
from dagpilot.state.job_statics import JobProgress, JobStatics, progress
from dagpilot.state.node_features import node_features
from dagpilot.state.node_memory import NodeFeatureMemory
from dagpilot.state.node_statics import NodeStatics
from dagpilot.state.schema import FixedColumns
from dagpilot.state.streaks import AwaitStreaks
from dagpilot.state.task_features import JobNow, task_table
from dagpilot.state.topology import NetworkTopology

DEFAULT_JOB_CACHE = 4096  # jobs whose arrays are kept; the least recently used go first
FULL_PASS_NODES = 2048
"""Up to this many nodes every decision computes every node's features: finding and updating
the changed rows (`NodeFeatureMemory`) costs more than a full pass there (measured with the
simulator: 163 against 93 us at 48 nodes, 341 against 232 at 1,000; 785 against 719 at
5,000, where one scrape's full pass costs milliseconds). The rows are the same either way."""
RECENT_JOBS = 128  # jobs whose graphs and distance features are kept (recent candidates')


class EncodeContext:
    """Caches and memory of one encoder; `graph_tasks` is K, the slots of each job graph."""

    __slots__ = ("_jobs", "_node_memory", "_nodes", "_recent_jobs", "calibration",
                 "full_pass_nodes", "graph_tasks", "job_cache", "streaks")

    def __init__(self, calibration: Calibration | None = None,
                 graph_tasks: int = DEFAULT_GRAPH_TASKS,
                 job_cache: int = DEFAULT_JOB_CACHE,
                 full_pass_nodes: int = FULL_PASS_NODES) -> None:
        if graph_tasks < 1 or job_cache < 1:
            raise ValueError("graph_tasks and job_cache must be at least 1")
        self.calibration = calibration or Calibration()
        self.graph_tasks = graph_tasks
        self.job_cache = job_cache
        self.full_pass_nodes = full_pass_nodes  # up to this many: no node memory
        self.streaks = AwaitStreaks()
        self._nodes: NodeStatics | None = None
        self._node_memory = NodeFeatureMemory()
        self._jobs: OrderedDict[str, _JobMemory] = OrderedDict()
        self._recent_jobs: OrderedDict[str, _Recent] = OrderedDict()

    def nodes(self, view: ClusterView) -> NodeStatics:
        """The statics of the view's cluster; a new cluster starts the node memory afresh."""
        if self._nodes is None or self._nodes.cluster is not view.cluster:
            self._nodes = NodeStatics.of(view, self.calibration)
            self._node_memory = NodeFeatureMemory()
            self.streaks = AwaitStreaks()
        return self._nodes

    def node_features(self, view: ClusterView) -> npt.NDArray[np.float32]:
        """(nodes, NODE.dim) raw features of the view's nodes; counts new samples into the
        streaks. Beyond `full_pass_nodes`, only the nodes that changed since the last call are
        computed again."""
        statics = self.nodes(view)
        if len(view.nodes) <= self.full_pass_nodes:
            return node_features(view, statics, sig.read(view), self.streaks, self.calibration)
        return self._node_memory.features(view, statics, sig.read(view), self.streaks,
                                          self.calibration)

    def job(self, view: ClusterView, job: Job) -> JobNow:
        """The job's arrays, its progress now, and the nodes its pods run on."""
        memory = self._jobs.pop(job.id, None)
        if memory is None or memory.statics.job is not job:
            statics = JobStatics.of(job)
            memory = _JobMemory(statics, task_table(job, statics), None, None)
        finished = view.finished_tasks(job.id)
        now = memory.progress
        if now is None or _moved(memory.finished, finished):
            now = progress(memory.statics, finished)
            memory = dataclasses.replace(memory, finished=finished, progress=now)
        nodes = self.nodes(view)
        names = tuple(view.job_nodes(job.id))
        last = memory.now
        if last is None or last[0] is not nodes or last[1] != names \
                or last[2].progress is not now:
            last = (nodes, names, _job_now(memory, now, nodes, names))
            memory = dataclasses.replace(memory, now=last)
        self._jobs[job.id] = memory
        while len(self._jobs) > self.job_cache:
            self._jobs.popitem(last=False)
        return last[2]

    def job_graphs(self, job: JobNow, tasks: Sequence[int]) -> list[JobGraph]:
        """`job_graphs` of these task positions of the job: a graph depends on the job's
        progress alone, so each is remembered until the progress moves."""
        known = self._recent(job).graphs
        missing = [task for task in dict.fromkeys(tasks) if task not in known]
        if missing:
            known.update(zip(missing, job_graphs(job.statics, job.progress, missing,
                                                 self.graph_tasks), strict=True))
        return [known[task] for task in tasks]

    def job_pairs(self, view: ClusterView, job: JobNow) -> npt.NDArray[np.float32]:
        """(nodes, PAIR.dim) `distance_features` of the job's hosts, remembered for the
        hosts they were computed for (read-only)."""
        topology = self.nodes(view).network
        recent = self._recent(job)
        key = job.hosts.tobytes()
        if recent.pairs is not None:
            known_topology, known_key, known = recent.pairs
            if known_topology is topology and known_key == key:
                return known
        rows = distance_features(topology, job.hosts)
        rows.flags.writeable = False
        recent.pairs = (topology, key, rows)
        return rows

    def _recent(self, job: JobNow) -> _Recent:
        """What recent decisions built for the job; its graphs go when its progress moved."""
        recent = self._recent_jobs.pop(job.statics.job.id, None)
        if recent is None:
            recent = _Recent(job.progress)
        elif recent.progress is not job.progress:
            recent = _Recent(job.progress, pairs=recent.pairs)  # the hosts decide the pairs
        self._recent_jobs[job.statics.job.id] = recent
        while len(self._recent_jobs) > RECENT_JOBS:
            self._recent_jobs.popitem(last=False)
        return recent


def _job_now(memory: _JobMemory, now: JobProgress, nodes: NodeStatics,
             names: tuple[str, ...]) -> JobNow:
    hosts = np.array(sorted({nodes.index_of[name] for name in names
                             if name in nodes.index_of}), dtype=np.int64)
    return JobNow(memory.statics, memory.table, now, hosts,
                  len(set(nodes.network.cell[hosts].tolist())),
                  len(set(nodes.network.zone[hosts].tolist())))


def _moved(known: Set[str] | None, finished: Set[str]) -> bool:
    """Whether the job's finished tasks differ from those its progress was computed from.
    A live view hands out a new set on every workflow status update (and an empty one for
    every call on a single-pod job), so identity alone would recompute the progress, and so
    drop the job's graphs, at nearly every decision: equal contents keep both."""
    return known is None or (finished is not known and finished != known)


@dataclass(frozen=True)
class _JobMemory:
    """What the context keeps per job: its arrays, and its progress at the last look."""

    statics: JobStatics
    table: FixedColumns
    finished: Set[str] | None  # the finished-ids object the progress was computed from
    progress: JobProgress | None
    # the last JobNow, with the node statics and host names it was built for (the hosts
    # change on a bind or a pod's end, far less often than decisions come)
    now: tuple[NodeStatics, tuple[str, ...], JobNow] | None = None


@dataclass
class _Recent:
    """What the last decisions built for a job among their candidates: graphs at one
    progress, and distance features for one set of hosts (nodes x PAIR.dim floats, so only
    RECENT_JOBS jobs keep them)."""

    progress: JobProgress
    graphs: dict[int, JobGraph] = field(default_factory=dict)  # by task position
    # (the topology and hosts bytes they are for, the (nodes, PAIR.dim) rows)
    pairs: tuple[NetworkTopology, bytes, npt.NDArray[np.float32]] | None = None
