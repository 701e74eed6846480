"""The flat tables a native run reads (csrc/model.h): tasks, nodes, jobs and storage pools as
numpy columns, with every figure the Python simulator derives from them computed here by the
same functions (sim.physics, sim.nodes.millicores), so that there is one source of truth."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Job, Task
from dagpilot.sim import physics
from dagpilot.sim.cluster_state import NOT_READY_TAINT
from dagpilot.sim.nodes import millicores
from dagpilot.sim.sampling import MAX_SAMPLES

Columns = dict[str, np.ndarray]
NONE = -1
MAX_GPUS_PER_NODE = 64  # the core keeps a node's GPUs as the bits of one 64-bit word


def supported(cluster: Cluster) -> bool:
    """Whether the core can hold the cluster (else the run takes the Python path)."""
    return all(len(spec.gpus) <= MAX_GPUS_PER_NODE for spec in cluster.nodes)


def params(settings: SimSettings) -> dict[str, float]:
    """The run's settings, switches (ANDed with the master switch) and physics parameters."""
    on, effects = settings.physics.effective(), settings.effects
    values: dict[str, float] = {
        "horizon_s": settings.horizon_s, "poll_interval_s": settings.poll_interval_s,
        "submit_latency_s": settings.submit_latency_s,
        "sample_interval_s": settings.sample_interval_s,
        "startup_median_s": settings.startup_median_s, "startup_sigma": settings.startup_sigma,
        "retry_backoff_s": settings.retry_backoff_s,
        "retry_backoff_max_s": settings.retry_backoff_max_s,
        "eviction_delay_s": settings.faults.eviction_delay_s,
        "release_at_poll": float(settings.release_at_poll),
        "engine_queue_size": float(settings.engine_queue_size),
        "oom_retry_limit": float(settings.oom_retry_limit),
        "startup_slots": float(settings.startup_slots_per_node),
        "max_samples": float(MAX_SAMPLES),
        "on_membw": float(on.memory_bandwidth), "on_storage": float(on.storage_io),
        "on_network": float(on.network), "on_pcie": float(on.gpu_pcie),
        "on_memory": float(on.memory), "on_faults": float(on.faults),
    }
    for field in dataclasses.fields(effects):
        values[field.name] = float(getattr(effects, field.name))
    return values


def tables(jobs: Sequence[Job], cluster: Cluster, settings: SimSettings,
           classes: np.ndarray, phases: np.ndarray) -> dict[str, Any]:
    """Everything csrc/module.c reads: `classes` is kube_statics' class of every task, `phases`
    each job's polling phase."""
    nodes, pools, pool_nodes, racks, zones, root_complexes = _nodes(cluster, settings)
    tasks, children, runtimes, instance_iops, groups = _tasks(jobs, settings, classes)
    firsts = np.cumsum([0] + [len(job.tasks) for job in jobs])[:-1]
    job_columns = {"arrival_s": _f64([job.arrival_s for job in jobs]),
                   "phase_s": _f64(phases),
                   "first_task": _i32(firsts),
                   "task_count": _i32([len(job.tasks) for job in jobs])}
    return {
        "tasks": tasks, "nodes": nodes, "jobs": job_columns, "pools": pools,
        "arrays": {"children": _i32(children), "instance_runtimes_s": _f64(runtimes),
                   "instance_iops": _f64(instance_iops), "gpu_root_complex": _i32(root_complexes),
                   "pool_nodes": _i32(pool_nodes)},
        "counts": {"tasks": float(len(tasks["job"])), "nodes": float(len(cluster.nodes)),
                   "jobs": float(len(jobs)), "pools": float(len(pools["shared"])),
                   "groups": float(groups), "racks": float(racks), "zones": float(zones)},
    }


def _nodes(cluster: Cluster, settings: SimSettings) -> tuple[Columns, Columns, list[int], int,
                                                              int, list[int]]:
    effects = settings.effects
    pool_index: dict[str, int] = {}
    pool_members: list[list[int]] = []
    pool_rows: list[tuple[float, float, int]] = []
    zones: dict[str, int] = {}
    racks: dict[tuple[str, str], int] = {}
    rows: dict[str, list[Any]] = {name: [] for name in (
        "cpu_cap_m", "cpu", "memory", "gpus", "root_complexes", "speed",
        "membw_capacity", "mem_capacity", "pool", "zone", "rack")}
    root_complexes: list[int] = []
    for index, spec in enumerate(cluster.nodes):
        if spec.allocatable.gpus != len(spec.gpus):
            raise ValueError(f"node {spec.name}: allocatable.gpus {spec.allocatable.gpus} is not "
                             f"the {len(spec.gpus)} GPUs it lists")
        key = spec.disk.shared_pool or f"local:{spec.name}"
        if key not in pool_index:
            pool_index[key] = len(pool_rows)
            pool_rows.append((float(spec.disk.iops), physics.service_ms(spec.disk.kind, effects),
                              int(spec.disk.shared_pool is not None)))
            pool_members.append([])
        pool_members[pool_index[key]].append(index)
        values = (millicores(spec.allocatable.cpu), spec.allocatable.cpu, spec.allocatable.memory,
                  spec.allocatable.gpus, len(root_complexes), spec.cpu_speed,
                  float(spec.memory_bandwidth_bytes_s),
                  physics.memory_capacity(spec, effects), pool_index[key],
                  zones.setdefault(spec.zone, len(zones)),
                  racks.setdefault((spec.zone, spec.rack), len(racks)))
        for name, value in zip(rows, values, strict=True):
            rows[name].append(value)
        root_complexes.extend(gpu.root_complex for gpu in spec.gpus)
    nodes = _typed(rows, floats=("cpu", "speed", "membw_capacity"),
                   wide=("cpu_cap_m", "memory", "mem_capacity"))
    offsets = np.cumsum([0] + [len(m) for m in pool_members])[:-1]
    pools = {"nominal_iops": _f64([r[0] for r in pool_rows]),
             "service_ms": _f64([r[1] for r in pool_rows]),
             "shared": _i32([r[2] for r in pool_rows]), "nodes": _i32(offsets),
             "node_count": _i32([len(m) for m in pool_members])}
    flat = [index for members in pool_members for index in members]
    return nodes, pools, flat, len(racks), len(zones), root_complexes


def _tasks(jobs: Sequence[Job], settings: SimSettings,
           classes: np.ndarray) -> tuple[Columns, list[int], list[float], list[float], int]:
    groups: dict[tuple[str, str], int] = {}
    derived: dict[int, tuple[Any, ...]] = {}  # by id(task): jobs made from one pool share tasks
    per_instance: dict[int, list[float]] = {}  # each instance's IOPS, by id(task)
    rows: list[tuple[Any, ...]] = []
    children: list[int] = []
    runtimes: list[float] = []
    instance_iops: list[float] = []
    for job_index, job in enumerate(jobs):
        position = {task.id: len(rows) + i for i, task in enumerate(job.tasks)}
        for task in job.tasks:
            values = derived.get(id(task))
            if values is None:
                values = derived[id(task)] = _derived(task, settings)
            group = NONE
            if task.comm_group is not None:
                group = groups.setdefault((job.id, task.comm_group), len(groups))
            offset = NONE
            if task.instance_runtimes_s:
                offset = len(runtimes)
                runtimes.extend(task.instance_runtimes_s)
                iops = per_instance.get(id(task))
                if iops is None:
                    iops = per_instance[id(task)] = [physics.pod_iops(task, runtime,
                                                                      settings.effects)
                                                     for runtime in task.instance_runtimes_s]
                instance_iops.extend(iops)
            rows.append((job_index, int(classes[len(rows)]), offset, group, len(children),
                         *values))
            children.extend(position[child] for child in task.children)
    columns = _typed(dict(zip(TASK_COLUMNS, (list(c) for c in zip(*rows, strict=True)),
                              strict=True)) if rows else {name: [] for name in TASK_COLUMNS},
                     floats=("cpu", "runtime_s", "cpu_used", "membw_share", "io_share",
                             "comm_share", "membw", "iops"),
                     wide=("cpu_m", "memory", "working", "cache"),
                     flags=("tolerates_not_ready", "over_limit"))
    return columns, children, runtimes, instance_iops, len(groups)


def _derived(task: Task, settings: SimSettings) -> tuple[Any, ...]:
    """What the simulator derives from a task alone (the TASK_COLUMNS after `children`)."""
    effects = settings.effects
    working, cache = physics.memory_footprint(task, effects, settings.physics.effective().memory)
    return (task.requests.cpu, millicores(task.requests.cpu), task.requests.memory,
            task.requests.gpus, int(_tolerates_not_ready(task)), task.instances, task.runtime_s,
            task.requests.cpu * task.cpu_intensity, task.membw_intensity, task.io_intensity,
            task.comm_share, working, cache, physics.pod_membw_demand(task, effects),
            physics.pod_iops(task, task.runtime_s, effects),
            int(physics.over_own_limit(task, working, True)), len(task.parents),
            len(task.children))


TASK_COLUMNS = ("job", "klass", "runtimes", "comm_group", "children",  # per job's copy
                "cpu", "cpu_m", "memory", "gpus",  # per task: _derived
                "tolerates_not_ready", "instances", "runtime_s", "cpu_used", "membw_share",
                "io_share", "comm_share", "working", "cache", "membw", "iops", "over_limit",
                "parents", "child_count")


def _tolerates_not_ready(task: Task) -> bool:
    return any(toleration.tolerates(NOT_READY_TAINT) for toleration in task.tolerations)


def _typed(rows: dict[str, list[Any]], floats: tuple[str, ...] = (), wide: tuple[str, ...] = (),
           flags: tuple[str, ...] = ()) -> Columns:
    """Columns as C reads them: float64, int64 (`wide`), uint8 (`flags`), else int32."""
    columns: Columns = {}
    for name, values in rows.items():
        if name in floats:
            columns[name] = _f64(values)
        elif name in wide:
            columns[name] = np.asarray(values, dtype=np.int64)
        elif name in flags:
            columns[name] = np.asarray(values, dtype=np.uint8)
        else:
            columns[name] = _i32(values)
    return columns


def _f64(values: Any) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.float64)


def _i32(values: Any) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int32)
