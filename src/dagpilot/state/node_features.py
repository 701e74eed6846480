"""Per-node features in physical units, for every node at once (schema.NODE).

Requests come from the API and are exact now; usage comes from the last scrape and is up to
one interval old. Requests bound since that scrape (`placed_since_sample`) are not in the
usage yet, so they count as load until the next scrape: otherwise every decision between two
scrapes would see the same idle node and send it everything (the herd effect of load-aware
schedulers).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import ClusterView
from dagpilot.state import bands
from dagpilot.state import signals as sig
from dagpilot.state.calibration import Calibration
from dagpilot.state.node_statics import NodeStatics
from dagpilot.state.schema import (
    AWAIT_LEVELS,
    MBPI_BANDS,
    NODE,
)
from dagpilot.state.streaks import AwaitStreaks

Floats = npt.NDArray[np.float64]
GIB = float(2**30)
CPU, MEMORY, GPUS = 0, 1, 2


def _share(part: Floats, whole: Floats) -> Floats:
    """part / whole, 0 where whole is 0 (a node without that resource)."""
    return np.divide(part, whole, out=np.zeros_like(part), where=whole > 0)


def _one_hots(prefix: str, slots: tuple[str, ...], values: Floats) -> dict[str, Floats]:
    return {f"{prefix}_{slot}": values[:, position] for position, slot in enumerate(slots)}


def node_features(view: ClusterView, statics: NodeStatics, signals: sig.SignalArrays,
                  streaks: AwaitStreaks, calibration: Calibration) -> npt.NDArray[np.float32]:
    """(nodes, NODE.dim) float32, raw (not normalised); counts new samples into `streaks`."""
    states = view.nodes
    allocatable, allocated = view.resource_arrays()
    free = allocatable - allocated
    ready = view.ready_mask()
    columns: dict[str, npt.ArrayLike] = {
        "cpu_free_cores": free[:, CPU],
        "cpu_free_share": _share(free[:, CPU], allocatable[:, CPU]),
        "memory_free_gib": free[:, MEMORY] / GIB,
        "memory_free_share": _share(free[:, MEMORY], allocatable[:, MEMORY]),
        "gpus_free": free[:, GPUS],
        "gpus_free_best_complex": statics.gpus.free_on_best_complex(free[:, GPUS], states),
        "not_ready": ~ready,
        **_usage(signals, allocatable),
        **_storage(signals, statics, streaks),
        **_freshness(view.now_s, signals, calibration),
    }
    return NODE.stack(columns, len(states), statics.fixed)


def _usage(signals: sig.SignalArrays, allocatable: Floats) -> dict[str, npt.ArrayLike]:
    """Sampled usage plus what was bound since the sample; memory bandwidth; page cache."""
    used_cpu = signals.column(sig.CPU_USED) + signals.column(sig.PLACED_CPU)
    current = signals.column(sig.MEMORY_CURRENT) + signals.column(sig.PLACED_MEMORY)
    utilisation = signals.column(sig.MEMBW)
    pressure = bands.mbpi(utilisation)
    usage, cache = signals.column(sig.MEMORY_USED), signals.column(sig.MEMORY_CURRENT)
    return {
        "cpu_used_effective_share": _share(used_cpu, allocatable[:, CPU]),
        "memory_current_effective_share": _share(current, allocatable[:, MEMORY]),
        "placed_since_sample_cpu_share": _share(signals.column(sig.PLACED_CPU),
                                                allocatable[:, CPU]),
        "mbpi": pressure,
        "membw_utilisation": utilisation,
        **_one_hots("mbpi_band", MBPI_BANDS,
                    bands.one_hot(bands.pressure_band(pressure), len(MBPI_BANDS))),
        "page_cache_ratio": bands.page_cache_ratio(cache, usage),
        "page_cache_polluted": bands.page_cache_polluted(cache, usage),
    }


def _storage(signals: sig.SignalArrays, statics: NodeStatics,
             streaks: AwaitStreaks) -> dict[str, npt.ArrayLike]:
    await_ms = signals.column(sig.AWAIT_MS)
    nominal = statics.nominal_await_ms
    level = bands.await_level(await_ms, nominal)
    runs = streaks.observe(signals.column(sig.SAMPLED_S), level >= bands.CONGESTED_LEVEL)
    ratio = np.maximum(bands.await_ratio(await_ms, nominal), 1.0)  # 0 before the first scrape
    return {
        "await_log2_ratio": np.log2(ratio),
        "await_log1p_ms": np.log1p(np.maximum(await_ms, 0.0)),
        "await_congested_samples": runs,
        "await_sustained": bands.sustained(runs),
        **_one_hots("await_level", tuple(str(n) for n in range(AWAIT_LEVELS)),
                    bands.one_hot(level, AWAIT_LEVELS)),
    }


def _freshness(now_s: float, signals: sig.SignalArrays,
               calibration: Calibration) -> dict[str, npt.ArrayLike]:
    age = bands.age_intervals(now_s, signals.column(sig.SAMPLED_S), calibration.scrape_interval_s)
    return {"signal_age_intervals": age, "signals_stale": bands.stale(age)}
