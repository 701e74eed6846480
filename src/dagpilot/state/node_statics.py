"""What stays fixed about a cluster's nodes, computed once per cluster and reused every decision."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.types import Cluster, NodeSpec
from dagpilot.core.view import ClusterView
from dagpilot.state.calibration import Calibration
from dagpilot.state.gpu_layout import GpuLayout
from dagpilot.state.schema import DISK_KINDS, GPU_MODEL_SLOTS, NODE, FixedColumns
from dagpilot.state.topology import NetworkTopology

Floats = npt.NDArray[np.float64]


def gpu_model_slot(model: str | None) -> int | None:
    """The vocabulary slot of a GPU model (`other` for an unknown one); None for no model."""
    if model is None:
        return None
    return GPU_MODEL_SLOTS.index(model) if model in GPU_MODEL_SLOTS[:-1] else (
        len(GPU_MODEL_SLOTS) - 1)


def _gpu_models(spec: NodeSpec) -> Floats:
    row = np.zeros(len(GPU_MODEL_SLOTS))
    for gpu in spec.gpus:
        slot = gpu_model_slot(gpu.model)
        if slot is not None:
            row[slot] = 1.0
    return row


@dataclass(frozen=True)
class NodeStatics:
    cluster: Cluster
    index_of: dict[str, int]
    nominal_await_ms: Floats
    gpus: GpuLayout
    network: NetworkTopology
    fixed: FixedColumns  # the node features that never change, stacked once

    @classmethod
    def of(cls, view: ClusterView, calibration: Calibration) -> NodeStatics:
        cluster = view.cluster
        specs = cluster.nodes
        kinds = np.array([DISK_KINDS.index(spec.disk.kind.value) for spec in specs],
                         dtype=np.int64)
        disk_kind = (kinds[:, None] == np.arange(len(DISK_KINDS))[None, :]).astype(np.float64)
        gpu_models = np.array([_gpu_models(spec) for spec in specs]).reshape(
            len(specs), len(GPU_MODEL_SLOTS))
        fixed = {
            "cpu_allocatable_cores": [spec.allocatable.cpu for spec in specs],
            "cpu_speed": [spec.cpu_speed for spec in specs],
            "unschedulable": [spec.unschedulable for spec in specs],
            **{f"disk_{kind}": disk_kind[:, k] for k, kind in enumerate(DISK_KINDS)},
            **{f"gpu_model_{m}": gpu_models[:, k] for k, m in enumerate(GPU_MODEL_SLOTS)},
        }
        return cls(
            cluster=cluster,
            index_of={spec.name: index for index, spec in enumerate(specs)},
            nominal_await_ms=np.array([calibration.nominal_await_ms(spec.disk.kind)
                                       for spec in specs], dtype=np.float64),
            gpus=GpuLayout.of(specs),
            network=NetworkTopology.of(view, calibration.same_rack_rtt_ms),
            fixed=NODE.fixed(fixed, len(specs)),
        )
