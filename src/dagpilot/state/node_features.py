"""Per-node features in physical units, for every node at once (schema.NODE).

Requests come from the API and are exact now; usage comes from the last scrape and is up to
one interval old. Requests bound since that scrape (`placed_since_sample`) are not in the
usage yet, so they count as load until the next scrape: otherwise every decision between two
scrapes would see the same idle node and send it everything (the herd effect of load-aware
schedulers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import ClusterView
from dagpilot.state import bands
from dagpilot.state import signals as sig
from dagpilot.state.calibration import Calibration
from dagpilot.state.node_statics import NodeStatics
from dagpilot.state.schema import AWAIT_LEVELS, MBPI_BANDS, NODE, FixedColumns
from dagpilot.state.streaks import AwaitStreaks

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
GIB = float(2**30)
CPU, MEMORY, GPUS = 0, 1, 2


def _share(part: Floats, whole: Floats) -> Floats:
    """part / whole, 0 where whole is 0 (a node without that resource)."""
    return np.divide(part, whole, out=np.zeros_like(part), where=whole > 0)


def _one_hots(prefix: str, slots: tuple[str, ...], levels: Ints) -> dict[str, Bools]:
    """One flag column per slot (as `bands.one_hot`: a level outside the slots sets none)."""
    return {f"{prefix}_{slot}": levels == position for position, slot in enumerate(slots)}


@dataclass(frozen=True)
class NodeInputs:
    """What the per-node figures are computed from, one entry per node (`stacked`: the
    rows of several views one after another, `state.lane_nodes`)."""

    allocatable: Floats  # (nodes, 3)
    free: Floats  # (nodes, 3)
    best_complex: Floats  # free GPUs on the best root complex
    await_level: Ints  # storage congestion level 0-3
    runs: Ints  # congested samples running
    ready: Bools
    nominal_await_ms: Floats
    signals: sig.SignalArrays
    fixed: FixedColumns


def node_features(view: ClusterView, statics: NodeStatics, signals: sig.SignalArrays,
                  streaks: AwaitStreaks, calibration: Calibration, *,
                  rows: Ints | None = None) -> npt.NDArray[np.float32]:
    """(nodes, NODE.dim) float32, raw (not normalised); counts new samples into `streaks`.

    With `rows`, only those nodes' rows, in that order (`NodeFeatureMemory`): every figure of
    a row is computed from that node alone, by the same element-wise operations, so a row is
    the same whichever other rows are asked for. The streaks then count those nodes' samples
    only: the caller vouches that no other node has a new sample."""
    nodes = _inputs(view, statics, signals, streaks, rows)
    return NODE.stack(node_columns(nodes, view.now_s, calibration), len(nodes.ready),
                      nodes.fixed)


def node_columns(nodes: NodeInputs, now_s: float | Floats,
                 calibration: Calibration) -> dict[str, npt.ArrayLike]:
    """The NODE columns not fixed, from the inputs; `now_s` per row or one for all. Every
    figure is element-wise, so a row does not depend on which rows are computed with it."""
    free, allocatable = nodes.free, nodes.allocatable
    return {
        "cpu_free_cores": free[:, CPU],
        "cpu_free_share": _share(free[:, CPU], allocatable[:, CPU]),
        "memory_free_gib": free[:, MEMORY] / GIB,
        "memory_free_share": _share(free[:, MEMORY], allocatable[:, MEMORY]),
        "gpus_free": free[:, GPUS],
        "gpus_free_best_complex": nodes.best_complex,
        "not_ready": ~nodes.ready,
        **_usage(nodes.signals, allocatable),
        **_storage(nodes),
        **freshness(now_s, nodes.signals.column(sig.SAMPLED_S), calibration),
    }


def _inputs(view: ClusterView, statics: NodeStatics, signals: sig.SignalArrays,
            streaks: AwaitStreaks, rows: Ints | None) -> NodeInputs:
    """The inputs of every node, or of the nodes at `rows` (nothing computed for others)."""
    allocatable, allocated = view.resource_arrays()
    ready, nominal, fixed = view.ready_mask(), statics.nominal_await_ms, statics.fixed
    if rows is not None:
        allocatable, allocated, ready, nominal = (allocatable[rows], allocated[rows],
                                                  ready[rows], nominal[rows])
        signals, fixed = signals.of_nodes(rows), FixedColumns(fixed.names, fixed.array[rows])
    free = allocatable - allocated
    level = bands.await_level(signals.column(sig.AWAIT_MS), nominal)
    runs = streaks.observe(signals.column(sig.SAMPLED_S), level >= bands.CONGESTED_LEVEL, rows)
    best = statics.gpus.free_on_best_complex(free[:, GPUS], view.nodes, rows)
    return NodeInputs(allocatable, free, best, level, runs, ready, nominal, signals, fixed)


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
        **_one_hots("mbpi_band", MBPI_BANDS, bands.pressure_band(pressure)),
        "page_cache_ratio": bands.page_cache_ratio(cache, usage),
        "page_cache_polluted": bands.page_cache_polluted(cache, usage),
    }


def _storage(nodes: NodeInputs) -> dict[str, npt.ArrayLike]:
    await_ms = nodes.signals.column(sig.AWAIT_MS)
    ratio = np.maximum(bands.await_ratio(await_ms, nodes.nominal_await_ms), 1.0)  # 0: no scrape
    return {
        "await_log2_ratio": np.log2(ratio),
        "await_log1p_ms": np.log1p(np.maximum(await_ms, 0.0)),
        "await_congested_samples": nodes.runs,
        "await_sustained": bands.sustained(nodes.runs),
        **_one_hots("await_level", tuple(str(n) for n in range(AWAIT_LEVELS)),
                    nodes.await_level),
    }


def freshness(now_s: float | Floats, sampled_s: Floats,
              calibration: Calibration) -> dict[str, npt.ArrayLike]:
    """The columns that move with the clock alone: the scrapes each node's signals missed."""
    missed = bands.scrapes_missed(now_s, sampled_s, calibration.scrape_interval_s)
    return {"signal_scrapes_missed": missed, "signals_stale": bands.stale(missed)}


FRESHNESS = ("signal_scrapes_missed", "signals_stale")
"""The features `freshness` gives, in the order `freshness_columns` stacks them."""


def freshness_columns(now_s: float, sampled_s: Floats,
                      calibration: Calibration) -> npt.NDArray[np.float32]:
    """(nodes, len(FRESHNESS)) float32: `freshness` as the node rows hold it."""
    columns = freshness(now_s, sampled_s, calibration)
    return np.stack([np.asarray(columns[name], dtype=np.float32) for name in FRESHNESS], axis=1)
