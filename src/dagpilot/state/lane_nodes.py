"""The raw node features of several views at once: lock-step rollouts' lanes (`train.lockstep`).

A view's node features are some sixty numpy calls on (nodes,)-long arrays, a few
microseconds each at 48 nodes: per lane and decision that is most of the encoder. Every
figure of a row depends on that node alone (`node_features.node_columns`), so the lanes'
inputs are gathered per view (the parts that read the view or keep memory: resources,
signals, the congestion streaks, GPU root complexes) and the columns are computed once over
their rows stacked: each lane's block is what `EncodeContext.node_features` gives it, bit for
bit. Views beyond a context's `full_pass_nodes` (node memory), or of different node counts or
calibrations, are not stacked: each context encodes its own then.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import ClusterView
from dagpilot.state import signals as sig
from dagpilot.state.context import EncodeContext
from dagpilot.state.node_features import NodeInputs, node_columns, node_inputs
from dagpilot.state.schema import NODE, FixedColumns

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
    lanes = [node_inputs(view, context.nodes(view), sig.read(view), context.streaks)
             for view, context in zip(views, contexts, strict=True)]
    count = len(views[0].nodes)
    now_s = np.repeat(np.array([view.now_s for view in views], dtype=np.float64), count)
    inputs = _stacked(lanes)
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


def _stacked(lanes: list[NodeInputs]) -> NodeInputs:
    """The lanes' inputs, rows one lane after another."""
    first = lanes[0]
    return NodeInputs(
        allocatable=np.concatenate([lane.allocatable for lane in lanes]),
        free=np.concatenate([lane.free for lane in lanes]),
        best_complex=np.concatenate([lane.best_complex for lane in lanes]),
        await_level=np.concatenate([lane.await_level for lane in lanes]),
        runs=np.concatenate([lane.runs for lane in lanes]),
        ready=np.concatenate([lane.ready for lane in lanes]),
        nominal_await_ms=np.concatenate([lane.nominal_await_ms for lane in lanes]),
        signals=sig.SignalArrays(np.concatenate([lane.signals.columns for lane in lanes],
                                                axis=1)),
        fixed=FixedColumns(first.fixed.names,
                           np.concatenate([lane.fixed.array for lane in lanes])))
