"""The compiled core (csrc/module.c)."""

from collections.abc import Callable
from typing import Any

import numpy as np

def run(params: dict[str, float], tables: dict[str, Any], statics: dict[str, np.ndarray],
        normals: Callable[[], list[float]],
        next_outage: Callable[[float], tuple[float, float] | None],
        next_iops: Callable[[float, float, int], tuple[float, float, bool] | None],
        scheduler_rng: np.random.Generator,
        progress: Callable[[float], None] | None) -> dict[str, Any]: ...
def draw_below(generator: np.random.Generator, n: int) -> int: ...
def top_of(totals: np.ndarray, generator: np.random.Generator) -> tuple[int | None, float]: ...
