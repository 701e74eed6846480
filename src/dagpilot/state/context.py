"""EncodeContext: what the encoder remembers between the decisions of one episode or session.

Per cluster: the node statics (layout, topology, measured distance levels), the last signals
read, the congestion streaks. Per job: its DAG arrays and its last progress. Start one context
per training episode or live session; `encode` without one works, but rebuilds the statics
every call and cannot see "three samples running".
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Set
from dataclasses import dataclass

import numpy as np

from dagpilot.core.types import Job
from dagpilot.core.view import ClusterView
from dagpilot.state.calibration import Calibration
from dagpilot.state.job_graph import DEFAULT_GRAPH_TASKS
from dagpilot.state.job_statics import JobProgress, JobStatics, progress
from dagpilot.state.node_statics import NodeStatics
from dagpilot.state.schema import FixedColumns
from dagpilot.state.signals import SignalArrays, SignalTable
from dagpilot.state.streaks import AwaitStreaks
from dagpilot.state.task_features import JobNow, task_table

DEFAULT_JOB_CACHE = 4096  # jobs whose arrays are kept; the least recently used go first


class EncodeContext:
    """Caches and memory of one encoder; `graph_tasks` is K, the slots of each job graph."""

    __slots__ = ("_jobs", "_nodes", "_signals", "calibration", "graph_tasks", "job_cache",
                 "streaks")

    def __init__(self, calibration: Calibration | None = None,
                 graph_tasks: int = DEFAULT_GRAPH_TASKS,
                 job_cache: int = DEFAULT_JOB_CACHE) -> None:
        if graph_tasks < 1 or job_cache < 1:
            raise ValueError("graph_tasks and job_cache must be at least 1")
        self.calibration = calibration or Calibration()
        self.graph_tasks = graph_tasks
        self.job_cache = job_cache
        self.streaks = AwaitStreaks()
        self._nodes: NodeStatics | None = None
        self._signals = SignalTable()
        self._jobs: OrderedDict[str, _JobMemory] = OrderedDict()

    def nodes(self, view: ClusterView) -> NodeStatics:
        """The statics of the view's cluster; a new cluster starts the node memory afresh."""
        if self._nodes is None or self._nodes.cluster is not view.cluster:
            self._nodes = NodeStatics.of(view, self.calibration)
            self._signals = SignalTable()
            self.streaks = AwaitStreaks()
        return self._nodes

    def signals(self, view: ClusterView) -> SignalArrays:
        return self._signals.read(view.nodes)

    def job(self, view: ClusterView, job: Job) -> JobNow:
        """The job's arrays, its progress now, and the nodes its pods run on."""
        memory = self._jobs.pop(job.id, None)
        if memory is None or memory.statics.job is not job:
            statics = JobStatics.of(job)
            memory = _JobMemory(statics, task_table(job, statics), None, None)
        finished = view.finished_tasks(job.id)
        now = memory.progress
        if now is None or finished is not memory.finished:
            now = progress(memory.statics, finished)
            memory = dataclasses.replace(memory, finished=finished, progress=now)
        self._jobs[job.id] = memory
        while len(self._jobs) > self.job_cache:
            self._jobs.popitem(last=False)
        nodes = self.nodes(view)
        hosts = np.array(sorted({nodes.index_of[name] for name in view.job_nodes(job.id)
                                 if name in nodes.index_of}), dtype=np.int64)
        return JobNow(memory.statics, memory.table, now, hosts,
                      len(set(nodes.network.cell[hosts].tolist())),
                      len(set(nodes.network.zone[hosts].tolist())))


@dataclass(frozen=True)
class _JobMemory:
    """What the context keeps per job: its arrays, and its progress at the last look."""

    statics: JobStatics
    table: FixedColumns
    finished: Set[str] | None  # the finished-ids object the progress was computed from
    progress: JobProgress | None
