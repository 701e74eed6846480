"""Score plugins, one module each, registered here by name; weights belong to a profile."""

from __future__ import annotations

from dagpilot.decide.scores.balanced_allocation import BalancedAllocation
from dagpilot.decide.scores.base import Score, score_one
from dagpilot.decide.scores.least_allocated import LeastAllocated
from dagpilot.decide.scores.node_affinity import NodeAffinityScore
from dagpilot.decide.scores.taint_toleration import TaintTolerationScore
from dagpilot.decide.scores.target_load_packing import TargetLoadPacking

SCORES: dict[str, Score] = {
    "NodeResourcesLeastAllocated": LeastAllocated(),
    "NodeResourcesBalancedAllocation": BalancedAllocation(),
    "TaintToleration": TaintTolerationScore(),
    "NodeAffinity": NodeAffinityScore(),
    "TargetLoadPacking": TargetLoadPacking(),
}

DEFAULT_WEIGHTS: tuple[tuple[str, int], ...] = (
    ("NodeResourcesLeastAllocated", 1),
    ("NodeResourcesBalancedAllocation", 1),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
)
"""kube-scheduler's default profile weights for the score plugins modelled here."""

__all__ = ["DEFAULT_WEIGHTS", "SCORES", "Score", "score_one"]
