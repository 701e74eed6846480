"""The candidates' mask after `decide.pcie`'s root-complex rule, and the logit bias it adds.

For each multi-GPU candidate the rule keeps only the nodes that hold its GPUs on one PCIe root
complex when some do, or (when none does) leaves the row as it is and marks every feasible node
with `pcie.PENALTY`, a fixed amount the policy adds to those logits. The rule never empties a
row, so every candidate stays placeable.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dagpilot.decide.candidates import Candidates
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.pcie import MIN_GPUS, PENALTY, PcieRootComplex

Bias = npt.NDArray[np.float32]


def root_complex_mask(candidates: Candidates, nodes: NodeArrays,
                      rule: PcieRootComplex) -> tuple[Candidates, Bias | None]:
    """(the candidates with the rule's mask, the (C, N) logit bias of its fallback penalty, or
    None when no candidate is penalised). The candidates come back as they were when the rule
    rejects nothing."""
    feasible, bias = candidates.feasible, None
    for row, pod in enumerate(candidates.pods):
        if pod.requests.gpus < MIN_GPUS:
            continue
        verdict = rule.apply(pod.task, nodes, feasible[row])
        if verdict.kept is not None:
            if feasible is candidates.feasible:
                feasible = feasible.copy()
            feasible[row] = verdict.kept
        if verdict.penalised:
            if bias is None:
                bias = np.zeros(feasible.shape, dtype=np.float32)
            bias[row, feasible[row]] = PENALTY
    if feasible is candidates.feasible:
        return candidates, bias
    return Candidates(candidates.pods, feasible), bias
