"""From finished tasks to decisions: the waste ratio per task and the requests to give the next
pod of the same task class. Pure functions of the figures; no I/O."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

HEADROOM = 1.15  # the recommendation covers the largest recent use plus 15 %
MILLICORE = 0.001
MIB = 1 << 20
MIN_CPU_CORES = 0.01


@dataclass(frozen=True, slots=True)
class Usage:
    """What one task used (actual) or was predicted to use."""

    cpu_seconds: float
    peak_memory_bytes: float
    io_bytes: float  # read + written


@dataclass(frozen=True, slots=True)
class Recommendation:
    cpu_cores: float
    memory_bytes: int
    based_on: int  # finished tasks of the class it comes from


def waste_ratio(actual: float, predicted: float) -> float | None:
    """actual / predicted - 1; None when nothing was predicted (a ratio to 0 means nothing)."""
    if predicted <= 0:
        return None
    return actual / predicted - 1


def waste_ratios(actual: Usage, predicted: Usage) -> dict[str, float]:
    """Per resource (cpu, memory, io), the resources that had a prediction."""
    pairs = {"cpu": (actual.cpu_seconds, predicted.cpu_seconds),
             "memory": (actual.peak_memory_bytes, predicted.peak_memory_bytes),
             "io": (actual.io_bytes, predicted.io_bytes)}
    ratios = {name: waste_ratio(*pair) for name, pair in pairs.items()}
    return {name: ratio for name, ratio in ratios.items() if ratio is not None}


def recommend(recent: Sequence[tuple[Usage, float]]) -> Recommendation | None:
    """Requests for the next task of a class from its recent (usage, runtime seconds): the
    largest mean CPU use (cores) and peak memory among them, plus HEADROOM, rounded up to a
    millicore and a MiB. None without a finished task."""
    if not recent:
        return None
    cores = max(usage.cpu_seconds / max(runtime_s, 1e-3) for usage, runtime_s in recent)
    peak = max(usage.peak_memory_bytes for usage, _ in recent)
    cpu = max(MIN_CPU_CORES, math.ceil(cores * HEADROOM / MILLICORE) * MILLICORE)
    memory = max(MIB, math.ceil(peak * HEADROOM / MIB) * MIB)
    return Recommendation(round(cpu, 3), memory, len(recent))
