"""The policy's P(node | pod) as the extender protocol's integer scores, 0 to 10.

kube-scheduler adds `score x weight x (100 / 10)` to its own plugins' weighted 0-100 scores,
so the scores only order the nodes: the nodes of the highest probability get 10, and no other
node does (each gets floor(10 x p / p_max), at most 9). With a weight that outweighs the
plugins' spread (docs/SERVING.md, "Extender"), the pod lands on dagpilot's best node, and the
plugins only break ties among equally good ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from dagpilot.serve.extender_wire import MAX_EXTENDER_PRIORITY


def integer_scores(probabilities: Mapping[str, float]) -> dict[str, int]:
    """Each node's score, in the mapping's order; an empty mapping gives an empty one."""
    usable = {node: p if math.isfinite(p) and p > 0 else 0.0
              for node, p in probabilities.items()}
    best = max(usable.values(), default=0.0)
    if best == 0:
        return dict.fromkeys(usable, 0)
    top = MAX_EXTENDER_PRIORITY
    return {node: top if p >= best else min(top - 1, math.floor(top * p / best))
            for node, p in usable.items()}
