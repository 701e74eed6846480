"""kube-scheduler's `helper.DefaultNormalizeScore`: scale to 0..100 by the largest raw score
(integer division), optionally reversed; all-zero scores become 0 (or 100 when reversed)."""

from __future__ import annotations

import numpy as np

from dagpilot.decide.node_arrays import Floats
from dagpilot.decide.scores.base import MAX_NODE_SCORE, floor_div


def default_normalize(raw: Floats, reverse: bool) -> Floats:
    largest = float(raw.max(initial=0.0))
    if largest == 0:
        return np.full(raw.shape, float(MAX_NODE_SCORE) if reverse else 0.0)
    scaled = floor_div(MAX_NODE_SCORE * raw, largest)
    return MAX_NODE_SCORE - scaled if reverse else scaled
