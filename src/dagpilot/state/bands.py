"""The semantic mapping: raw signals in physical units -> levels, bands and flags.

Every mapping is a ratio against a calibrated nominal figure (calibration.py), so that two
clouds whose disks or networks differ in absolute latency map alike, followed by thresholds
placed away from the figures that matter (45 ms and 50 ms on a network disk are both
"moderate congestion"). Each band starts strictly above its threshold, as the design's rules
are worded ("MBPI > 0.8", "await > 50 ms", "memory.current > usage x 1.8"). Every function
works on numpy arrays (all nodes at once) as well as on plain floats. docs/STATE.md gives the
reasoning behind each threshold.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

# --- storage await ---------------------------------------------------------------------------
# Await over the disk's nominal await is the M/M/1 queue inflation 1 / (1 - rho). Level 1
# (busy) past 5x (rho > 0.8), level 2 (moderate congestion) past 20x (rho > 0.95), level 3
# (collapsed, overloaded) past 80x (rho > 0.9875). On a 2 ms network disk: 10, 40 and 160 ms,
# so "around 50 ms" sits inside level 2, not on its edge, and the simulator's level centres
# (22, 100, 400 ms) map to the simulator's levels.
AWAIT_LEVEL_RATIOS = (5.0, 20.0, 80.0)
CONGESTED_LEVEL = 2  # the level that "await > 50 ms" names
SUSTAINED_SAMPLES = 3  # "three samples running"

# --- memory bandwidth ------------------------------------------------------------------------
# MBPI = clamp((u - 0.3) / 0.7, 0, 1) from channel utilisation u. Bands: none up to 0.5,
# moderate up to 0.8 (past it, avoid CPU-heavy placements), high up to 0.85 (past it, cache
# misses rise ~3.2x), saturated beyond.
MBPI_FLOOR, MBPI_SPAN = 0.3, 0.7
MBPI_BAND_EDGES = (0.5, 0.8, 0.85)

# --- network distance ------------------------------------------------------------------------
# RTT over the same-rack RTT: same node ~0.5x, same rack 1x, cross rack 2-8x, cross zone
# 10-20x and more. Edges at the geometric gaps: 0.75x, 2x and 12x.
DISTANCE_RATIOS = (0.75, 2.0, 12.0)

# --- page cache ------------------------------------------------------------------------------
# memory.current (cgroup, page cache included) over container_memory_usage_bytes.
PAGE_CACHE_POLLUTION_RATIO = 1.8

# --- staleness -------------------------------------------------------------------------------
# This many scrapes missed in a row: the node's exporter (or the path to it) is in trouble,
# not just late.
STALE_SCRAPES_MISSED = 2


def _level(value: npt.ArrayLike, edges: tuple[float, ...]) -> Ints:
    """How many edges `value` exceeds strictly (a band starts just above its edge)."""
    return np.searchsorted(np.asarray(edges), np.asarray(value, dtype=np.float64), side="left")


def await_ratio(await_ms: npt.ArrayLike, nominal_ms: npt.ArrayLike) -> Floats:
    """Await over the disk kind's nominal await (1 on an idle disk)."""
    return np.asarray(await_ms, dtype=np.float64) / np.asarray(nominal_ms, dtype=np.float64)


def await_level(await_ms: npt.ArrayLike, nominal_ms: npt.ArrayLike) -> Ints:
    """Congestion level 0-3: healthy, busy, moderate congestion, collapsed."""
    return _level(await_ratio(await_ms, nominal_ms), AWAIT_LEVEL_RATIOS)


def congested(await_ms: npt.ArrayLike, nominal_ms: npt.ArrayLike) -> Bools:
    """At moderate congestion or worse: what a sustained-congestion streak counts."""
    return np.asarray(await_level(await_ms, nominal_ms) >= CONGESTED_LEVEL)


def sustained(congested_samples: npt.ArrayLike) -> Bools:
    """Congested for SUSTAINED_SAMPLES samples running: the node should weigh less."""
    return np.asarray(congested_samples) >= SUSTAINED_SAMPLES


def mbpi(utilisation: npt.ArrayLike) -> Floats:
    """Memory Bandwidth Pressure Index from channel utilisation: clamp((u - 0.3) / 0.7, 0, 1)."""
    u = np.asarray(utilisation, dtype=np.float64)
    return np.clip((u - MBPI_FLOOR) / MBPI_SPAN, 0.0, 1.0)


def pressure_band(mbpi_value: npt.ArrayLike) -> Ints:
    """0 none, 1 moderate, 2 high, 3 saturated."""
    return _level(mbpi_value, MBPI_BAND_EDGES)


def distance_level(rtt_ms: npt.ArrayLike, same_rack_rtt_ms: float) -> Ints:
    """0 same node, 1 same rack, 2 cross rack, 3 cross zone, from the RTT alone."""
    ratio = np.asarray(rtt_ms, dtype=np.float64) / same_rack_rtt_ms
    return _level(ratio, DISTANCE_RATIOS)


def page_cache_ratio(memory_current: npt.ArrayLike, memory_used: npt.ArrayLike) -> Floats:
    """memory.current over container_memory_usage_bytes; 1 where nothing is used."""
    current = np.asarray(memory_current, dtype=np.float64)
    used = np.asarray(memory_used, dtype=np.float64)
    safe = np.where(used > 0.0, used, 1.0)
    return np.where(used > 0.0, current / safe, 1.0)


def page_cache_polluted(memory_current: npt.ArrayLike, memory_used: npt.ArrayLike) -> Bools:
    """memory.current > container_memory_usage_bytes x 1.8."""
    return np.asarray(page_cache_ratio(memory_current, memory_used) > PAGE_CACHE_POLLUTION_RATIO)


def scrapes_missed(now_s: float | Floats, sampled_s: npt.ArrayLike, interval_s: float) -> Floats:
    """Whole scrape intervals since the sample: the scrapes that were due and brought nothing.

    Whole intervals, not the continuous age: within an interval the placements since the
    sample already count as load (node features), and a figure that moved with the clock would
    change every node's row at every decision."""
    age = np.maximum(0.0, now_s - np.asarray(sampled_s, dtype=np.float64)) / interval_s
    return np.floor(age)


def stale(missed: npt.ArrayLike) -> Bools:
    """STALE_SCRAPES_MISSED or more scrapes missed."""
    return np.asarray(missed) >= STALE_SCRAPES_MISSED


def one_hot(levels: npt.ArrayLike, slots: int) -> Floats:
    """(n, slots) one-hot rows of integer levels; a level outside 0..slots-1 gives a zero row."""
    values = np.asarray(levels, dtype=np.int64).reshape(-1)
    hits: Bools = values[:, None] == np.arange(slots)[None, :]
    return hits.astype(np.float64)
