"""RejectionMemory: why each node rejects a pod, kept from decision to decision.

A node's reasons depend on the pod only through `decide.signature.placement_key` (what filters
read of a pod spec) and on the node only through its spec, allocation (free resources and
GPUs) and readiness, which is what the view's change log follows (the contract
`Feasibility.live` relies on too). So the reasons worked out for a (key, node) stay until the
log lists the node; a view without a log, or another view, starts afresh. Pods of one workflow
share a few request templates: at 5,000 nodes this turns some milliseconds of reason strings
per explained decision into a lookup. What is not known yet is worked out in one call for all
the rows missing (`Decoder` gives the many of a new pod spec to `RejectionTable`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

import numpy as np
import numpy.typing as npt

from dagpilot.core.types import Task
from dagpilot.core.view import ClusterView
from dagpilot.decide.signature import placement_key

REJECTION_KEYS = 64  # placement keys whose rejection reasons are kept (the least recent go)
Explain = Callable[[ClusterView, Task, npt.NDArray[np.int64]], Sequence[tuple[str, str]]]
"""(node name, reasons) for each of the given rows of the view, each of which rejects the task."""


class RejectionMemory:
    """(node, reasons) of rejected nodes per placement key, forgotten node by node as the
    view's change log lists them."""

    __slots__ = ("_by_key", "_explain", "_keys", "_token", "_view")

    def __init__(self, explain: Explain, keys: int = REJECTION_KEYS) -> None:
        self._explain = explain
        self._view: ClusterView | None = None
        self._token = 0
        # placement key -> per node: (name, reasons), or None until asked for
        self._by_key: OrderedDict[Hashable, list[tuple[str, str] | None]] = OrderedDict()
        self._keys = keys

    def rejections(self, view: ClusterView, task: Task,
                   rows: Sequence[int]) -> tuple[tuple[str, str], ...]:
        """(node name, reasons) of the nodes at `rows`, each of which rejects the task."""
        self._follow(view)
        nodes = view.nodes
        key = placement_key(task)
        known = self._by_key.pop(key, None)
        if known is None or len(known) != len(nodes):
            known = [None] * len(nodes)
        self._by_key[key] = known
        while len(self._by_key) > self._keys:
            self._by_key.popitem(last=False)
        rejected = [known[row] for row in rows]
        missing = [at for at, reasons in enumerate(rejected) if reasons is None]
        if missing:
            at_rows = np.array([rows[at] for at in missing], dtype=np.int64)
            for at, row, reasons in zip(missing, at_rows.tolist(),
                                        self._explain(view, task, at_rows), strict=True):
                rejected[at] = known[row] = reasons
        return tuple(rejected)  # type: ignore[arg-type]  # no None left

    def _follow(self, view: ClusterView) -> None:
        """Forget the reasons of the nodes that changed since the last call (all of them
        when the view cannot tell, or is another one)."""
        token, changed = view.changed_nodes(self._token)
        if changed is None or view is not self._view:
            self._by_key.clear()
        else:
            rows = set(changed)  # the log may list a node many times
            for known in self._by_key.values():
                for row in rows:
                    known[row] = None
        self._view, self._token = view, token
