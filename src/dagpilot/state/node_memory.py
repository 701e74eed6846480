"""The node features of the last decision, brought up to date instead of recomputed.

Between two decisions few nodes change: the ones that took or freed a pod or changed
readiness (`ClusterView.changed_nodes`, the change feed kube-scheduler-style caches follow),
the ones with new signals (a scrape, a placement since it: their signal row differs), and the
ones whose signals just missed one more scrape (their freshness columns differ). Every figure
of a node's row depends on that node alone, so a decision recomputes the changed rows
(`node_features(rows=...)`, the same element-wise operations as a full pass) and copies the
rest (after a scrape most rows change: a full pass then). Anything it cannot vouch for (another
view or cluster, a view without a change log, a token the log no longer holds, other
allocatable resources) gets a full pass. The arrays it hands out are never written afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import ClusterView
from dagpilot.state import signals as sig
from dagpilot.state.calibration import Calibration
from dagpilot.state.node_features import FRESHNESS, freshness_columns, node_features
from dagpilot.state.node_statics import NodeStatics
from dagpilot.state.schema import NODE
from dagpilot.state.streaks import AwaitStreaks

F32 = npt.NDArray[np.float32]
Ints = npt.NDArray[np.int64]

FULL_PASS_SHARE = 0.5  # changed rows beyond this share of the nodes: a full pass
_FRESHNESS_COLUMNS = [NODE.index(name) for name in FRESHNESS]


class NodeFeatureMemory:
    """Raw node features of one view over successive decisions (one per EncodeContext)."""

    __slots__ = ("_allocatable", "_features", "_signals", "_statics", "_token", "_view",
                 "full_passes", "row_updates")

    def __init__(self) -> None:
        self._view: ClusterView | None = None
        self._statics: NodeStatics | None = None
        self._token = 0
        self._allocatable: npt.NDArray[np.float64] | None = None
        self._signals: sig.SignalArrays | None = None
        self._features: F32 | None = None
        self.full_passes = 0  # decisions that computed every row (for tests and benchmarks)
        self.row_updates = 0  # decisions that recomputed only the changed rows

    def features(self, view: ClusterView, statics: NodeStatics, signals: sig.SignalArrays,
                 streaks: AwaitStreaks, calibration: Calibration) -> F32:
        """(nodes, NODE.dim) float32, raw: what `node_features` gives for the view now."""
        token, moved = view.changed_nodes(self._token)
        changed = self._changed(view, statics, signals, moved, calibration)
        if changed is None:
            features = node_features(view, statics, signals, streaks, calibration)
            self.full_passes += 1
        else:
            assert self._features is not None
            features = self._features.copy()  # a new array: callers may normalise in place
            if len(changed):
                features[changed] = node_features(view, statics, signals, streaks,
                                                  calibration, rows=changed)
            self.row_updates += 1
        self._view, self._statics, self._token = view, statics, token
        self._allocatable, self._signals = view.resource_arrays()[0], signals
        self._features = features
        return features

    def _changed(self, view: ClusterView, statics: NodeStatics, signals: sig.SignalArrays,
                 moved: Sequence[int] | None, calibration: Calibration) -> Ints | None:
        """The nodes whose rows need computing again; None: every node. `moved`: the nodes
        the view's change log lists since the last decision."""
        if (moved is None or view is not self._view or statics is not self._statics
                or self._signals is None or self._features is None
                or self._allocatable is None or len(self._features) != len(view.nodes)):
            return None
        allocatable = view.resource_arrays()[0]
        if allocatable is not self._allocatable and not np.array_equal(allocatable,
                                                                       self._allocatable):
            return None
        changed = np.zeros(len(view.nodes), dtype=np.bool_)
        changed[np.asarray(moved, dtype=np.int64)] = True
        before = self._signals.columns
        if signals.columns is not before:  # the same array: no node has new signals
            changed |= (signals.columns != before).any(axis=0)
        freshness = freshness_columns(view.now_s, signals.column(sig.SAMPLED_S), calibration)
        changed |= (freshness != self._features[:, _FRESHNESS_COLUMNS]).any(axis=1)
        rows = np.flatnonzero(changed)
        # Most rows (a scrape): one full pass costs less than picking them all out.
        return None if len(rows) > FULL_PASS_SHARE * len(changed) else rows
