"""The raw node features of several views at once: lock-step rollouts' lanes (`train.lockstep`).

A view's node features are some sixty numpy calls on (nodes,)-long arrays, a few
microseconds each at 48 nodes: per lane and decision that is most of the encoder. Every
figure of a row depends on that node alone (`node_features.node_columns`), so the lanes'
arrays are gathered (resources, readiness, signals, the statics' columns, the congestion
streaks each context keeps: `streaks.observe_lanes`), the figures are computed once over
their rows stacked, and only what reads node states (the GPUs of split root complexes) runs
lane by lane: each lane's block is what `EncodeContext.node_features` gives it, bit for bit.
Views beyond a context's `full_pass_nodes` (node memory), or of different node counts or
calibrations, are not stacked: each context encodes its own then.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import ClusterView
from dagpilot.state import bands
from dagpilot.state import signals as sig
from dagpilot.state.context import EncodeContext
from dagpilot.state.node_features import GPUS, NodeInputs, node_columns
from dagpilot.state.schema import NODE, FixedColumns
from dagpilot.state.streaks import observe_lanes

F32 = npt.NDArray[np.float32]


def stacked_node_features(views: Sequence[ClusterView],
                          contexts: Sequence[EncodeContext]) -> F32 | None:
    """(views, nodes, NODE.dim): each view's raw features as its own context would compute
    them (counting new samples into each context's streaks); None, and nothing counted, when
    the views cannot be stacked."""
    if len(views) != len(contexts):
        raise ValueError("stacked node features need one context per view")
    if not stackable(views, contexts):
        return None
    count = len(views[0].nodes)
    now_s = np.repeat(np.array([view.now_s for view in views], dtype=np.float64), count)
    inputs = _inputs(views, contexts, count)
    rows = NODE.stack(node_columns(inputs, now_s, contexts[0].calibration), len(now_s),
                      inputs.fixed)
    return rows.reshape(len(views), count, NODE.dim)


def stackable(views: Sequence[ClusterView], contexts: Sequence[EncodeContext]) -> bool:
    """Whether the views' rows can be computed together: one node count, within every
    context's full pass, one calibration."""
    count = len(views[0].nodes) if views else 0
    return bool(views) and all(
        len(view.nodes) == count <= context.full_pass_nodes
        and context.calibration == contexts[0].calibration
        for view, context in zip(views, contexts, strict=True))


def _inputs(views: Sequence[ClusterView], contexts: Sequence[EncodeContext],
            count: int) -> NodeInputs:
    """`node_features`' inputs of every lane, rows one lane after another: the views'
    arrays gathered, the element-wise figures computed once (each context's streaks too), and
    per lane only what reads node states (the GPUs of split root complexes)."""
    statics = [context.nodes(view) for view, context in zip(views, contexts, strict=True)]
    resources = [view.resource_arrays() for view in views]
    allocatable = np.concatenate([lane for lane, _ in resources])
    free = allocatable - np.concatenate([allocated for _, allocated in resources])
    signals = sig.SignalArrays(np.concatenate([view.signal_arrays() for view in views], axis=1))
    nominal = np.concatenate([lane.nominal_await_ms for lane in statics])
    level = bands.await_level(signals.column(sig.AWAIT_MS), nominal)
    congested, sampled = level >= bands.CONGESTED_LEVEL, signals.column(sig.SAMPLED_S)
    lanes = [slice(lane * count, (lane + 1) * count) for lane in range(len(views))]
    runs = observe_lanes([context.streaks for context in contexts], sampled, congested)
    best = np.concatenate([lane.gpus.free_on_best_complex(free[rows, GPUS], view.nodes)
                           for lane, view, rows in zip(statics, views, lanes, strict=True)])
    return NodeInputs(allocatable, free, best, level, runs,
                      np.concatenate([view.ready_mask() for view in views]), nominal, signals,
                      FixedColumns(statics[0].fixed.names,
                                   np.concatenate([lane.fixed.array for lane in statics])))
