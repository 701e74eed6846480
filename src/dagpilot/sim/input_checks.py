"""What a run refuses before it starts, in the Python simulator and the native core alike
(native/run.py calls `check_inputs` too): settings out of their ranges (core/setting_ranges.py),
a cluster without nodes, figures that are not finite or out of range, a job id used twice.
Each refusal is an InvalidInput naming the node, job or task and the field."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from dagpilot.core.config import SimSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.setting_ranges import check_all
from dagpilot.core.types import Cluster, Job, Resources, Task

MAX_TIME_S = 1e12  # arrivals and runtimes (some 31,700 years): times stay far finer than a sample
MAX_AMOUNT = 2**53  # bytes, IOPS, bandwidths: exact as doubles, and sums far from overflow
MAX_CORES = 1e6  # of a node or a task; csrc/checks.h has the same bounds
MAX_SPEED = 1e6


def check_inputs(jobs: Sequence[Job], cluster: Cluster, settings: SimSettings) -> None:
    check_all(settings, "sim", "settings")
    _check_cluster(cluster)
    _check_jobs(jobs)


class Where(NamedTuple):
    """The file and record an InvalidInput names."""

    file: str
    record: str


def _check_cluster(cluster: Cluster) -> None:
    file = f"cluster {cluster.name}"
    if not cluster.nodes:
        raise InvalidInput(file, "", "nodes", "the cluster has no nodes; a run needs one")
    for spec in cluster.nodes:
        where = Where(file, f"node {spec.name}")
        _check(where, "cpu_speed", spec.cpu_speed, 0.0, MAX_SPEED, above=True)
        _check_resources(where, "allocatable", spec.allocatable)
        _check(where, "memory_bandwidth_bytes_s", spec.memory_bandwidth_bytes_s, 0, MAX_AMOUNT)
        _check(where, "disk.iops", spec.disk.iops, 0, MAX_AMOUNT)


def _check_jobs(jobs: Sequence[Job]) -> None:
    twice = [job_id for job_id, count in Counter(job.id for job in jobs).items() if count > 1]
    if twice:
        raise InvalidInput("workload", f"job {twice[0]}", "id",
                           f"job ids must be unique within a run: {', '.join(twice[:5])} "
                           "appear more than once")
    checked: set[int] = set()  # jobs drawn from one pool share their tasks: check each once
    for job in jobs:
        _check(Where("workload", f"job {job.id}"), "arrival_s", job.arrival_s, 0.0, MAX_TIME_S)
        for task in job.tasks:
            if id(task) not in checked:
                checked.add(id(task))
                _check_task(Where("workload", f"job {job.id}, task {task.id}"), task)


def _check_task(where: Where, task: Task) -> None:
    _check(where, "runtime_s", task.runtime_s, 0.0, MAX_TIME_S)
    for index, runtime_s in enumerate(task.instance_runtimes_s):
        _check(where, f"instance_runtimes_s[{index}]", runtime_s, 0.0, MAX_TIME_S)
    _check(where, "instances", task.instances, 1, 2**31 - 1)
    _check_resources(where, "requests", task.requests)
    if task.limits is not None:
        _check_resources(where, "limits", task.limits)
    if task.peak_memory is not None:
        _check(where, "peak_memory", task.peak_memory, 0, MAX_AMOUNT)
    _check(where, "read_bytes", task.read_bytes, 0, MAX_AMOUNT)
    _check(where, "written_bytes", task.written_bytes, 0, MAX_AMOUNT)
    for name in ("cpu_intensity", "membw_intensity", "io_intensity", "comm_share"):
        _check(where, name, getattr(task, name), 0.0, 1.0)


def _check_resources(where: Where, field: str, amounts: Resources) -> None:
    _check(where, f"{field}.cpu", amounts.cpu, 0.0, MAX_CORES)
    _check(where, f"{field}.memory", amounts.memory, 0, MAX_AMOUNT)
    _check(where, f"{field}.gpus", amounts.gpus, 0, 2**31 - 1)


def _check(where: Where, field: str, value: float, low: float, high: float, *,
           above: bool = False) -> None:
    """`value` a number from `low` (above it, with `above`) to `high`: NaN never is."""
    if (low < value if above else low <= value) and value <= high:
        return
    shown = f"{value:.9g}" if isinstance(value, float) else f"{value!r:.40}"
    raise InvalidInput(where.file, where.record, field,
                       f"{shown} is not a number {'above' if above else 'from'} {low:g} "
                       f"{'and at most' if above else 'to'} {high:g}")
