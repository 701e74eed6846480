"""The policy's P(node | pod) as the extender protocol's integer scores, 0 to 10.

kube-scheduler adds `score x weight x (100 / 10)` to its own plugins' weighted 0-100 scores,
so the scores only order the nodes: the nodes of the highest probability get 10, and no other
node does (each gets floor(10 x p / p_max), at most 9). With a weight that outweighs the
plugins' spread (docs/SERVING.md, "Extender"), the pod lands on dagpilot's best node, and the
plugins only break ties among equally good ones.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dagpilot.serve.extender_wire import MAX_EXTENDER_PRIORITY


def integer_score_array(probabilities: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Each node's score from its P(node | pod), in order: 10 for the largest positive finite
    values, else floor(10 x p / p_max), at most 9; 0 for a value that is not positive and
    finite, and for every value when none is."""
    usable = np.where(np.isfinite(probabilities) & (probabilities > 0), probabilities, 0.0)
    best = usable.max(initial=0.0)
    if best == 0:
        return np.zeros(len(usable), dtype=np.int64)
    top = MAX_EXTENDER_PRIORITY
    scores: npt.NDArray[np.int64] = np.minimum(top - 1, np.floor(top * usable / best)
                                               ).astype(np.int64)
    scores[usable >= best] = top
    return scores
