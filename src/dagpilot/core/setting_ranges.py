"""The range of every setting (docs/SETTINGS.md lists them): a settings file is checked against
them when it is loaded, and the simulator checks the settings it is given, so that no NaN,
negative interval or runaway limit reaches a run. Booleans have no range beyond their type.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import MAX_CPU, MAX_MEMORY, MAX_RUNTIME_S

DAY_S = 86_400.0
LONG_S = 1e9  # about 32 years: the longest interval or duration a setting may be
MIN_SAMPLE_INTERVAL_S = 0.1  # a run takes a sample every interval while it is busy
MIN_POLL_INTERVAL_S = 0.01  # an engine wakes every interval while its job has work to release


@dataclass(frozen=True, slots=True)
class Range:
    """From `low` (above it when `above`) to `high`; `off`, when given, is allowed too."""

    low: float
    high: float
    above: bool = False
    off: float | None = None

    def admits(self, value: float) -> bool:
        if self.off is not None and value == self.off:
            return True
        return (value > self.low if self.above else value >= self.low) and value <= self.high

    def __str__(self) -> str:
        start = f"above {_number(self.low)}" if self.above else f"from {_number(self.low)}"
        if math.isinf(self.high):
            end = "with no upper limit (inf)"
        else:
            end = f"{'and at most' if self.above else 'to'} {_number(self.high)}"
        text = f"{start} {end}"
        return f"{_number(self.off)} (off), or {text}" if self.off is not None else text


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:.9g}"


def _durations(*names: str, high: float = LONG_S) -> dict[str, Range]:
    return {name: Range(0.0, high) for name in names}


def _factors(*names: str) -> dict[str, Range]:
    """Slowdowns: how many times slower work runs, so never below 1."""
    return {name: Range(1.0, 1000.0) for name in names}


RANGES: dict[str, Range] = {
    "loaders.default_cpu": Range(0.0, MAX_CPU),
    "loaders.default_memory": Range(0, MAX_MEMORY),
    "loaders.default_runtime_s": Range(0.0, MAX_RUNTIME_S),
    "loaders.alibaba_machine_memory": Range(1, MAX_MEMORY),
    "loaders.seed": Range(0, 2**32 - 1),  # numpy's legacy seeding (WfCommons) takes 32 bits
    "validator.max_gap_s": Range(0.0, LONG_S, above=True),
    # 0: the engine acts at once; else at least MIN_POLL_INTERVAL_S (9e-324 made its wake-up
    # arithmetic infinite)
    "sim.poll_interval_s": Range(MIN_POLL_INTERVAL_S, DAY_S, off=0.0),
    **_durations("sim.submit_latency_s", "sim.startup_median_s", "sim.retry_backoff_s",
                 "sim.retry_backoff_max_s", high=DAY_S),
    "sim.startup_sigma": Range(0.0, 5.0),
    "sim.engine_queue_size": Range(0, 2**31 - 1),
    "sim.startup_slots_per_node": Range(0, 1024),
    "sim.sample_interval_s": Range(MIN_SAMPLE_INTERVAL_S, LONG_S),
    "sim.horizon_s": Range(0.0, math.inf, above=True),
    "sim.oom_retry_limit": Range(0, 1000),
    "sim.reward_oom_penalty": Range(0.0, LONG_S),
    "sim.effects.membw_per_core_bytes_s": Range(0.0, 1e12),
    "sim.effects.membw_knee": Range(0.0, 1.0),
    "sim.effects.membw_saturation_mbpi": Range(0.0, 1.0),
    **_factors("sim.effects.membw_cache_miss_factor", "sim.effects.io_level1_factor",
               "sim.effects.io_level2_factor", "sim.effects.io_level3_factor",
               "sim.effects.pcie_cross_complex_factor"),
    "sim.effects.io_block_bytes": Range(1, 2**30),
    "sim.effects.io_pod_iops": Range(0.0, 1e9),
    **_durations("sim.effects.io_service_ms_nvme", "sim.effects.io_service_ms_ssd",
                 "sim.effects.io_service_ms_network", "sim.effects.io_service_ms_hdd",
                 "sim.effects.io_level1_ms", "sim.effects.io_level2_ms",
                 "sim.effects.io_level3_ms", "sim.effects.rtt_same_node_ms",
                 "sim.effects.rtt_cross_rack_ms", "sim.effects.rtt_cross_zone_ms", high=1e6),
    # RTTs are read relative to it; 1 us at least (a denormal made the slowdown infinite)
    "sim.effects.rtt_same_rack_ms": Range(0.001, 1e6),
    "sim.effects.network_latency_sensitivity": Range(0.0, 1000.0),
    "sim.effects.page_cache_ratio": Range(0.0, 100.0),
    "sim.effects.memory_capacity_factor": Range(0.0, 100.0, above=True),
    "sim.effects.page_cache_miss_factor": Range(0.0, 100.0),
    "sim.storage.drift_interval_s": Range(1.0, LONG_S, off=0.0),
    "sim.storage.drift_sigma": Range(0.0, 10.0),
    "sim.storage.collapse_rate_per_hour": Range(0.0, 3600.0),
    "sim.storage.collapse_mean_s": Range(1.0, LONG_S),
    "sim.storage.collapse_min_iops": Range(0.0, 1e9),
    "sim.storage.collapse_max_iops": Range(0.0, 1e9),
    "sim.faults.rate_per_node_hour": Range(0.0, 3600.0),
    "sim.faults.mean_duration_s": Range(0.0, LONG_S),
    "sim.faults.eviction_delay_s": Range(0.0, LONG_S),
}

ORDERED: tuple[tuple[str, str], ...] = (
    ("sim.effects.io_level1_ms", "sim.effects.io_level2_ms"),
    ("sim.effects.io_level2_ms", "sim.effects.io_level3_ms"),
    ("sim.storage.collapse_min_iops", "sim.storage.collapse_max_iops"),
    ("sim.retry_backoff_s", "sim.retry_backoff_max_s"),
)
"""Pairs (a, b) of settings with a <= b."""


def check_value(name: str, value: Any, file: str) -> None:
    """InvalidInput naming the file, [section] and section.key when `value` is out of range."""
    allowed = RANGES.get(name)
    if allowed is None or isinstance(value, bool) or allowed.admits(value):
        return
    section, _, _ = name.rpartition(".")
    raise InvalidInput(file, f"[{section}]", name,
                       f"{_shown(value)} is out of range: it must be {allowed}")


def check_order(values: dict[str, Any], file: str) -> None:
    """InvalidInput when a pair of ORDERED is the wrong way round."""
    for low, high in ORDERED:
        if low in values and high in values and not values[low] <= values[high]:
            section, _, _ = high.rpartition(".")
            raise InvalidInput(file, f"[{section}]", high,
                               f"{_shown(values[high])} is below {low} = {_shown(values[low])}")


FAULT_RATE, FAULT_DURATION = "sim.faults.rate_per_node_hour", "sim.faults.mean_duration_s"
MAX_DOWN_SHARE = 0.5  # of a node's time, on average: past it, runs end only at their caps


def check_downtime(values: dict[str, Any], file: str) -> None:
    """InvalidInput when faults would keep nodes down most of the time (1,000 an hour of 300 s
    each: down for good, and a run of two jobs took 140 s of CPU and 1.6 GB to its cap)."""
    if FAULT_RATE not in values or FAULT_DURATION not in values:
        return
    rate, duration = values[FAULT_RATE], values[FAULT_DURATION]
    up_s = 3600.0 / rate if rate > 0 else math.inf
    share = duration / (up_s + duration) if duration > 0 else 0.0
    if share > MAX_DOWN_SHARE:
        raise InvalidInput(file, "[sim.faults]", FAULT_RATE,
                           f"{_shown(rate)} an hour of {_shown(duration)} s each keep a node down "
                           f"{100 * share:.0f} % of the time; at most {100 * MAX_DOWN_SHARE:.0f} %")


def check_all(settings: Any, prefix: str, file: str) -> None:
    """Every setting of a settings group (`prefix` its dotted name, e.g. "sim") in range."""
    values = dict(flattened(settings, prefix))
    for name, value in values.items():
        check_value(name, value, file)
    check_order(values, file)
    check_downtime(values, file)


def flattened(settings: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    """(dotted name, value) of every leaf setting of a group."""
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        name = f"{prefix}.{field.name}" if prefix else field.name
        if dataclasses.is_dataclass(value):
            yield from flattened(value, name)
        else:
            yield name, value


def _shown(value: Any) -> str:
    """A number as the error shows it (never a long repr)."""
    return f"{value:.9g}" if isinstance(value, float) else f"{value!r:.40}"
