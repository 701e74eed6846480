"""PcieRootComplex: a multi-GPU pod's GPUs on one PCIe root complex whenever some node allows it.

A pod whose GPUs span root complexes gets a fifth of the bandwidth for its communication share
(`sim/physics.py: pcie_multiplier`). For a pod asking for N >= 2 GPUs, a node *fits on one
complex* when one of its root complexes has N free GPUs (of the pod's model, if it names one).
Among the nodes the filters let through:

- when at least one fits on one complex, the others are rejected (`check` gives the reason);
- when none does, none is rejected: each carries `PENALTY`, a logit added by the agent, so the
  policy shifts probability towards other candidates rather than a split it could avoid by
  placing something else first. The penalty is uniform over the pod's nodes: the physics makes
  every split equally slow (two complexes or four), so there is no least-bad split to rank.

Pods asking for fewer than two GPUs are never touched.

Why not a `Filter`: a filter judges each node on its own (`check`, `mask`, `row_test` over free
counts), while this rule is relative (a node is rejected only because another node fits) and
reads which GPUs are free, not how many. It also must not reach the baselines, whose
trajectories are pinned; so it is a step after `Feasibility`, used by the agent alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from dagpilot.core.status import Status
from dagpilot.core.types import NodeSpec, Task
from dagpilot.core.view import NodeState
from dagpilot.decide.node_arrays import GPUS, Bools, NodeArrays

Ints = npt.NDArray[np.int64]

MIN_GPUS = 2
"""Pods asking for fewer GPUs have nothing to spread."""

PENALTY = math.log(1 / 5)
"""The fallback logit penalty (about -1.61): the log of the bandwidth share a pod gets across
complexes (1 / `PhysicsParameters.pcie_cross_complex_factor`, 1/5), so a split pair weighs one
fifth of what the network scored. A constant, not read from the physics settings: a trained
policy's logits must not change with the simulator's configuration."""


def free_per_complex(spec: NodeSpec, free_gpus: tuple[int, ...], free_count: int,
                     model: str | None) -> dict[int, int]:
    """Free GPUs of `model` (any when None) per root complex, in complex order. A node listed
    without per-GPU detail counts as one complex of `free_count` GPUs of its model."""
    if not spec.gpus:
        matches = model is None or spec.allocatable.gpu_model == model
        return {0: free_count if matches else 0}
    counts = dict.fromkeys(spec.root_complexes, 0)
    for index in free_gpus:
        gpu = spec.gpus[index]
        if model is None or gpu.model == model:
            counts[gpu.root_complex] += 1
    return counts


def largest_complex(spec: NodeSpec, model: str | None) -> int:
    """The most GPUs of `model` (any when None) one root complex of the node holds."""
    return max(free_per_complex(spec, tuple(range(len(spec.gpus))), spec.allocatable.gpus,
                                model).values(), default=0)


@dataclass(frozen=True, slots=True)
class PcieVerdict:
    kept: Bools | None  # the nodes left feasible when the rule rejects some; None: it rejects none
    penalised: bool  # no node fits on one complex: every feasible node carries PENALTY


UNCHANGED = PcieVerdict(None, False)


class PcieRootComplex:
    """The rule for one cluster at a time; caches, per GPU request, the nodes whose largest
    complex could hold it (usually a small share of the cluster: the rule looks at no other)."""

    name: ClassVar[str] = "PcieRootComplex"

    def __init__(self) -> None:
        self._specs: tuple[NodeSpec, ...] = ()
        self._capable: dict[tuple[int, str | None], Ints] = {}

    def apply(self, task: Task, nodes: NodeArrays, feasible: Bools) -> PcieVerdict:
        """The verdict over `feasible` (the filters' mask for `task` over `nodes`)."""
        wanted = task.requests.gpus
        if wanted < MIN_GPUS:
            return UNCHANGED
        capable = self._capable_nodes(nodes.specs, wanted, task.requests.gpu_model)
        rows = capable[feasible[capable]]
        # A node with no GPU bound has all of them free, so being capable settles it; only
        # nodes with some GPUs bound need a look at which ones are free.
        bound = nodes.allocated[rows, GPUS].tolist()
        states = nodes.states
        fitting = [row for row, used in zip(rows.tolist(), bound, strict=True)
                   if not used or self._fits(task, states[row])]
        if not fitting:
            return PcieVerdict(None, penalised=True)
        if len(fitting) == np.count_nonzero(feasible):
            return UNCHANGED
        kept = np.zeros(len(feasible), dtype=np.bool_)
        kept[fitting] = True
        return PcieVerdict(kept, penalised=False)

    def check(self, task: Task, node: NodeState) -> Status:
        """Whether the node holds the pod's GPUs on one complex, and the reason when not (the
        rule rejects such a node only when another one fits; see `apply`)."""
        wanted, model = task.requests.gpus, task.requests.gpu_model
        if wanted < MIN_GPUS:
            return Status.success()
        free_count = node.spec.allocatable.gpus - node.allocated.gpus
        counts = free_per_complex(node.spec, node.free_gpus, free_count, model)
        if max(counts.values(), default=0) >= wanted:
            return Status.success()
        of_model = f" of model {model}" if model is not None else ""
        free = ", ".join(f"rc{complex_}={count}" for complex_, count in counts.items())
        return Status.unschedulable(
            self.name, f"no PCIe root complex with {wanted} free GPU(s){of_model} "
                       f"(free per complex: {free or 'none'})")

    @staticmethod
    def _fits(task: Task, node: NodeState) -> bool:
        """`check(task, node).ok`, without building the reason."""
        wanted, model, spec = task.requests.gpus, task.requests.gpu_model, node.spec
        if not spec.gpus:  # one complex: the free count
            free = spec.allocatable.gpus - node.allocated.gpus
            return free_per_complex(spec, (), free, model)[0] >= wanted
        counts: dict[int, int] = {}
        for index in node.free_gpus:
            gpu = spec.gpus[index]
            if model is None or gpu.model == model:
                count = counts[gpu.root_complex] = counts.get(gpu.root_complex, 0) + 1
                if count >= wanted:
                    return True
        return False

    def _capable_nodes(self, specs: tuple[NodeSpec, ...], wanted: int,
                       model: str | None) -> Ints:
        """Indices of the nodes with a complex of at least `wanted` GPUs of `model`; shared,
        do not modify."""
        if specs is not self._specs:
            self._specs, self._capable = specs, {}
        capable = self._capable.get((wanted, model))
        if capable is None:
            capable = np.flatnonzero([largest_complex(spec, model) >= wanted for spec in specs])
            capable.flags.writeable = False
            self._capable[(wanted, model)] = capable
        return capable
