"""Seeded background processes: NotReady periods of nodes and the IOPS of shared storage pools.

Both draw only from their own random streams and never depend on what the scheduler does, so
every scheduler meets the same faults and the same QoS collapses for a given seed. Both always
move time on: an outage ends after the time it was drawn from, and a change of IOPS comes after
the time it was drawn at (the native core refuses anything else from them), so neither process
can hold a run at one instant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dagpilot.core.config import FaultSettings, StorageQosSettings

FAULT_CAUSES = ("network", "storage", "kernel")


@dataclass(frozen=True, slots=True)
class Outage:
    """A NotReady period of one node."""

    start_s: float
    end_s: float
    cause: str  # network | storage | kernel


def next_outage(rng: np.random.Generator, after_s: float, settings: FaultSettings) -> Outage | None:
    """The next NotReady period of a node that is ready at `after_s`; None when faults are off.

    Faults arrive as a Poisson process (rate_per_node_hour), last an exponential time
    (mean_duration_s), and have a network, storage or kernel cause with equal odds.
    """
    if settings.rate_per_node_hour <= 0.0:
        return None
    start = after_s + float(rng.exponential(3600.0 / settings.rate_per_node_hour))
    duration = float(rng.exponential(settings.mean_duration_s))
    cause = FAULT_CAUSES[int(rng.integers(len(FAULT_CAUSES)))]
    return Outage(start, _later(after_s, start + duration), cause)


@dataclass(frozen=True, slots=True)
class IopsChange:
    """The pool's IOPS from `time_s` on; `collapsed` while a collapse lasts."""

    time_s: float
    iops: float
    collapsed: bool


def next_iops_change(rng: np.random.Generator, now_s: float, nominal_iops: float,
                     collapsed: bool, settings: StorageQosSettings) -> IopsChange | None:
    """The next change of a shared pool's IOPS.

    A collapsed pool recovers after an exponential time (collapse_mean_s) to a drifted nominal.
    A healthy pool either collapses (a Poisson process, collapse_rate_per_hour) to a uniform
    1,000-2,000 IOPS, or, if no collapse comes first, drifts every drift_interval_s to nominal x
    exp(drift_sigma x N(0, 1)). None when neither can happen (no collapses, no drift).
    """
    if collapsed:
        recovery = now_s + float(rng.exponential(settings.collapse_mean_s))
        return IopsChange(_later(now_s, recovery), _drifted(rng, nominal_iops, settings), False)
    rate, interval = settings.collapse_rate_per_hour, settings.drift_interval_s
    if rate <= 0.0 and interval <= 0.0:
        return None
    collapse_in = float(rng.exponential(3600.0 / rate)) if rate > 0.0 else math.inf
    if interval <= 0.0 or collapse_in < interval:
        iops = float(rng.uniform(settings.collapse_min_iops, settings.collapse_max_iops))
        return IopsChange(_later(now_s, now_s + collapse_in), iops, True)
    return IopsChange(_later(now_s, now_s + interval), _drifted(rng, nominal_iops, settings),
                      False)


def _later(now_s: float, time_s: float) -> float:
    """`time_s`, or the next float after `now_s` when a draw of 0 (or one below the resolution
    of `now_s`) left it there."""
    return time_s if time_s > now_s else math.nextafter(now_s, math.inf)


def _drifted(rng: np.random.Generator, nominal_iops: float, settings: StorageQosSettings) -> float:
    return nominal_iops * float(np.exp(settings.drift_sigma * rng.standard_normal()))
