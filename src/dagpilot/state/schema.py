"""The feature schema: every feature's name, unit and kind, in the order of the arrays.

A model is trained against one schema. Changing a name, the order, a unit or a mapping
threshold changes what the model reads, so it bumps FEATURE_SCHEMA_VERSION, and the registry
refuses to load a model saved under another version. docs/STATE.md explains every feature.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cached_property

import numpy as np
import numpy.typing as npt

FEATURE_SCHEMA_VERSION = 2  # 2: signal age in whole scrapes missed

GPU_MODELS = ("A100", "H100", "V100", "V100M16", "V100M32", "P100", "T4", "A10", "G2", "G3")
"""GPU model vocabulary (built-in clusters, Alibaba GPU 2023); anything else is `other`."""
GPU_MODEL_SLOTS = (*GPU_MODELS, "other")
AWAIT_LEVELS = 4
MBPI_BANDS = ("none", "moderate", "high", "saturated")
DISTANCES = ("same_node", "same_rack", "cross_rack", "cross_zone")
DISK_KINDS = ("nvme", "ssd", "network", "hdd")
TASK_CLASSES = ("cpu", "memory", "io", "network", "gpu")
TASK_STATUSES = ("finished", "ready", "blocked")


class Kind(Enum):
    SCALAR = "scalar"  # z-scored by the normaliser
    FLAG = "flag"  # 0 or 1 (a flag, or one slot of a one-hot): passes through un-normalised


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    unit: str
    kind: Kind = Kind.SCALAR


def _flags(prefix: str, slots: tuple[str, ...]) -> tuple[Feature, ...]:
    return tuple(Feature(f"{prefix}_{slot}", "one-hot", Kind.FLAG) for slot in slots)


def _flag(name: str) -> Feature:
    return Feature(name, "flag", Kind.FLAG)


@dataclass(frozen=True)
class FeatureGroup:
    """The ordered features of one array (its last axis)."""

    name: str
    features: tuple[Feature, ...]

    def __post_init__(self) -> None:
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"feature group {self.name!r} repeats a name")

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(feature.name for feature in self.features)

    @cached_property
    def _positions(self) -> dict[str, int]:
        return {name: position for position, name in enumerate(self.names)}

    @property
    def dim(self) -> int:
        return len(self.features)

    @cached_property
    def passthrough(self) -> npt.NDArray[np.bool_]:
        """True for the features the normaliser leaves alone (flags and one-hot slots)."""
        mask = np.array([f.kind is Kind.FLAG for f in self.features], dtype=np.bool_)
        mask.flags.writeable = False
        return mask

    @cached_property
    def scaled(self) -> npt.NDArray[np.intp]:
        """The positions of the features the normaliser scales (every one not passed through)."""
        positions = np.flatnonzero(~self.passthrough)
        positions.flags.writeable = False
        return positions

    def index(self, name: str) -> int:
        return self._positions[name]

    def fixed(self, columns: Mapping[str, npt.ArrayLike], rows: int) -> FixedColumns:
        """Columns that never change (a node's disk kind, GPU models), stacked once."""
        unknown = [name for name in columns if name not in self._positions]
        if unknown:
            raise ValueError(f"feature group {self.name!r}: unknown {unknown}")
        array = np.zeros((rows, self.dim), dtype=np.float32)
        for name, column in columns.items():
            array[:, self._positions[name]] = column
        array.flags.writeable = False
        return FixedColumns(frozenset(columns), array)

    def stack(self, columns: Mapping[str, npt.ArrayLike], rows: int,
              fixed: FixedColumns | None = None) -> npt.NDArray[np.float32]:
        """The (rows, dim) float32 array of named columns, in schema order.

        Refuses a missing, unknown or doubly given name, so the arrays cannot drift from the
        schema. A column may be a scalar (broadcast to every row). `fixed` columns come
        pre-stacked.
        """
        fixed_names = fixed.names if fixed is not None else frozenset()
        given = len(columns) + len(fixed_names)
        names = columns.keys()  # set operations in C: this runs several times a decision
        if given != self.dim or not (names <= self._positions.keys()
                                     and names.isdisjoint(fixed_names)):
            missing = [n for n in self.names if n not in columns and n not in fixed_names]
            unknown = [n for n in columns if n not in self._positions]
            twice = [n for n in columns if n in fixed_names]
            raise ValueError(f"feature group {self.name!r}: missing {missing}, unknown "
                             f"{unknown}, given twice {twice}")
        out = (fixed.array.copy() if fixed is not None
               else np.empty((rows, self.dim), dtype=np.float32))
        for name, column in columns.items():
            out[:, self._positions[name]] = column
        return out


@dataclass(frozen=True)
class FixedColumns:
    """Some columns of a group, stacked in place; the other columns are zero."""

    names: frozenset[str]
    array: npt.NDArray[np.float32]


NODE = FeatureGroup("node", (
    Feature("cpu_allocatable_cores", "cores"),
    Feature("cpu_free_cores", "cores"),
    Feature("cpu_free_share", "share of allocatable"),
    Feature("memory_free_gib", "GiB"),
    Feature("memory_free_share", "share of allocatable"),
    Feature("gpus_free", "GPUs"),
    Feature("gpus_free_best_complex", "GPUs"),
    Feature("cpu_used_effective_share", "share of allocatable"),
    Feature("memory_current_effective_share", "share of allocatable"),
    Feature("placed_since_sample_cpu_share", "share of allocatable"),
    Feature("mbpi", "index 0..1"),
    Feature("membw_utilisation", "share of bandwidth"),
    Feature("await_log2_ratio", "log2(await / nominal await)"),
    Feature("await_log1p_ms", "log(1 + ms)"),
    Feature("await_congested_samples", "samples"),
    Feature("page_cache_ratio", "memory.current / usage"),
    Feature("signal_scrapes_missed", "scrapes"),
    Feature("cpu_speed", "x reference core"),
    *_flags("await_level", tuple(str(level) for level in range(AWAIT_LEVELS))),
    _flag("await_sustained"),
    *_flags("mbpi_band", MBPI_BANDS),
    _flag("page_cache_polluted"),
    _flag("not_ready"),
    _flag("unschedulable"),
    _flag("signals_stale"),
    *_flags("disk", DISK_KINDS),
    *_flags("gpu_model", GPU_MODEL_SLOTS),
))

TASK = FeatureGroup("task", (
    Feature("cpu_request_cores", "cores"),
    Feature("memory_request_gib", "GiB"),
    Feature("gpu_request", "GPUs"),
    Feature("peak_memory_share", "peak / request"),
    Feature("runtime_log1p_s", "log(1 + s)"),
    Feature("instances_log1p", "log(1 + pods)"),
    Feature("depth", "edges from a source"),
    Feature("parents", "tasks"),
    Feature("children", "tasks"),
    Feature("b_level_log1p_s", "log(1 + s)"),
    Feature("b_level_share", "share of the job's critical path"),
    Feature("job_remaining_work_log1p_core_s", "log(1 + core-s)"),
    Feature("job_remaining_work_share", "share of the job's work"),
    Feature("job_age_log1p_s", "log(1 + s)"),
    Feature("job_tasks_log1p", "log(1 + tasks)"),
    Feature("wait_log1p_s", "log(1 + s)"),
    Feature("cpu_intensity", "share 0..1"),
    Feature("io_intensity", "share 0..1"),
    Feature("membw_intensity", "share 0..1"),
    Feature("membw_bound_cores", "cores"),
    Feature("io_rate_log1p_mb_s", "log(1 + MB/s)"),
    Feature("comm_share", "share 0..1"),
    Feature("comm_group_size_log1p", "log(1 + pods)"),
    Feature("comm_group_active_share", "share of the group's pods"),
    Feature("job_nodes_log1p", "log(1 + nodes)"),
    Feature("job_racks", "racks"),
    Feature("job_zones", "zones"),
    Feature("attempt", "restarts"),
    Feature("priority", "priority"),
    _flag("comm_group_member"),
    _flag("job_running"),
    *_flags("gpu_model", GPU_MODEL_SLOTS),
    *_flags("class", TASK_CLASSES),
))

PAIR = FeatureGroup("pair", (
    *_flags("distance_min", DISTANCES),
    *_flags("distance_max", DISTANCES),
))

GRAPH = FeatureGroup("graph", (
    Feature("cpu_request_cores", "cores"),
    Feature("memory_request_gib", "GiB"),
    Feature("gpu_request", "GPUs"),
    Feature("runtime_log1p_s", "log(1 + s)"),
    Feature("instances_log1p", "log(1 + pods)"),
    Feature("io_intensity", "share 0..1"),
    Feature("membw_intensity", "share 0..1"),
    Feature("comm_share", "share 0..1"),
    _flag("comm_group_member"),
    *_flags("status", TASK_STATUSES),
    _flag("is_candidate"),
))

POSITION = FeatureGroup("position", (
    Feature("depth_share", "share of the job's depth"),
    Feature("parents_log1p", "log(1 + tasks)"),
    Feature("children_log1p", "log(1 + tasks)"),
    Feature("b_level_share", "share of the job's critical path"),
))

GROUPS: tuple[FeatureGroup, ...] = (NODE, TASK, PAIR, GRAPH, POSITION)
"""Every group, in the order the normaliser stores them."""
