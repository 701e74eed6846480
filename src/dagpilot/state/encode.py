"""The one entry point from a ClusterView to the policy's arrays, for training, benchmarking and
serving alike: `encode(view, candidates, normaliser, context)`.

`observe` gives the raw features (physical units after the semantic mapping); training feeds
them to `Normaliser.update` before normalising, serving only normalises.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import ClusterView, PodRef
from dagpilot.state.context import EncodeContext
from dagpilot.state.job_graph import JobGraph
from dagpilot.state.normaliser import Normaliser
from dagpilot.state.observation import Observation
from dagpilot.state.schema import GRAPH, PAIR, POSITION
from dagpilot.state.task_features import JobNow, task_features


def encode(view: ClusterView, candidates: Sequence[PodRef], normaliser: Normaliser,
           context: EncodeContext | None = None) -> Observation:
    """Normalised features of the view's nodes and of the candidate pods."""
    return normaliser.normalise(observe(view, candidates, context))


def observe(view: ClusterView, candidates: Sequence[PodRef],
            context: EncodeContext | None = None, *,
            nodes: npt.NDArray[np.float32] | None = None) -> Observation:
    """Raw (not normalised) features of the view's nodes and of the candidate pods; `nodes`:
    the node rows computed already (`state.lane_nodes`, several views at once)."""
    context = context or EncodeContext()
    if nodes is None:
        nodes = context.node_features(view)
    jobs = candidate_jobs(view, candidates, context)
    return assemble(view, candidates, context, nodes=nodes, jobs=jobs,
                    tasks=task_features(candidates, jobs, view.now_s))


def candidate_jobs(view: ClusterView, candidates: Sequence[PodRef],
                   context: EncodeContext) -> dict[str, JobNow]:
    """The candidates' jobs as they stand now, by job id in order of first candidate."""
    jobs: dict[str, JobNow] = {}
    for pod in candidates:
        if pod.job.id not in jobs:
            jobs[pod.job.id] = context.job(view, pod.job)
    return jobs


def assemble(view: ClusterView, candidates: Sequence[PodRef], context: EncodeContext, *,
             nodes: npt.NDArray[np.float32], jobs: dict[str, JobNow],
             tasks: npt.NDArray[np.float32]) -> Observation:
    """The raw observation from its node and task rows (computed already, one view at a
    time or several together) and the candidates' jobs: their graphs and distances."""
    pairs, job_row = _pairs(view, context, jobs)
    graphs = _graphs(candidates, jobs, context)
    return Observation(
        node_features=nodes,
        task_features=tasks,
        pair_features=pairs,
        pair_job=np.array([job_row[pod.job.id] for pod in candidates], dtype=np.int64),
        graph_features=_stack([g.features for g in graphs], (context.graph_tasks, GRAPH.dim)),
        graph_positions=_stack([g.positions for g in graphs],
                               (context.graph_tasks, POSITION.dim)),
        graph_valid=np.array([g.valid for g in graphs], dtype=np.bool_).reshape(
            len(graphs), context.graph_tasks),
        graph_status=np.array([g.status for g in graphs], dtype=np.int8).reshape(
            len(graphs), context.graph_tasks),
        candidates=tuple(candidates),
    )


def _pairs(view: ClusterView, context: EncodeContext,
           jobs: dict[str, JobNow]) -> tuple[npt.NDArray[np.float32], dict[str, int]]:
    """(rows, nodes, PAIR.dim): one-hot distance levels to the nearest and farthest host, one
    row per distinct set of hosts (jobs running on the same nodes, or nowhere yet, are as far
    from every node: a backlog of pods of their own jobs makes one row, not one per pod), and
    each job's row (read-only: with one row, the context's own)."""
    rows: list[npt.NDArray[np.float32]] = []
    row_of_hosts: dict[bytes, int] = {}
    job_row: dict[str, int] = {}
    for job_id, job in jobs.items():
        hosts = job.hosts.tobytes()
        if hosts not in row_of_hosts:
            row_of_hosts[hosts] = len(rows)
            rows.append(context.job_pairs(view, job))
        job_row[job_id] = row_of_hosts[hosts]
    if len(rows) == 1:
        return rows[0][None], job_row
    if not rows:
        return np.zeros((0, len(view.nodes), PAIR.dim), dtype=np.float32), job_row
    out = np.stack(rows)
    out.flags.writeable = False
    return out, job_row


def _graphs(candidates: Sequence[PodRef], jobs: dict[str, JobNow],
            context: EncodeContext) -> list[JobGraph]:
    """The candidates' job graphs in candidate order, built job by job."""
    members: dict[str, list[int]] = {job_id: [] for job_id in jobs}
    for c, pod in enumerate(candidates):
        members[pod.job.id].append(c)
    graphs: list[JobGraph | None] = [None] * len(candidates)
    for job_id, job in jobs.items():
        mine = members[job_id]
        tasks = [job.statics.index_of[candidates[c].task.id] for c in mine]
        for c, graph in zip(mine, context.job_graphs(job, tasks), strict=True):
            graphs[c] = graph
    return [graph for graph in graphs if graph is not None]


def _stack(arrays: list[npt.NDArray[np.float32]],
           shape: tuple[int, int]) -> npt.NDArray[np.float32]:
    if not arrays:
        return np.zeros((0, *shape), dtype=np.float32)
    return np.stack(arrays).astype(np.float32, copy=False)
