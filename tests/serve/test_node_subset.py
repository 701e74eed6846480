"""Some nodes of a view as a view of their own keep the ClusterView contract: the conformance
suite, on a base view that holds two more nodes outside the subset."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dagpilot.core.snapshot import ChangingView, ClusterSnapshot
from dagpilot.core.types import Cluster, NodeSpec, Resources
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.serve.node_subset import Subset, SubsetView
from tests.core.test_snapshot_conformance import changed_snapshot
from tests.core.view_conformance import Change, ViewConformance, ViewFactory

GIB = 2**30
OUTSIDE = (NodeSpec("x-first", Resources(4, 8 * GIB), zone="zone-c"),
           NodeSpec("x-middle", Resources(2, 4 * GIB), zone="zone-c"))


def cut(base: ChangingView, previous: Subset | None) -> SubsetView:
    subset = previous
    if subset is None or not subset.current(base):
        rows = [row for row, spec in enumerate(base.cluster.nodes)
                if not spec.name.startswith("x-")]
        subset = Subset(base, rows)
    return SubsetView(base, subset, base.pending)


class SubsetFactory:
    def __init__(self) -> None:
        self.bases: dict[int, tuple[ChangingView, Subset]] = {}

    def build(self, cluster: Cluster, pending: Sequence[PodRef]) -> ClusterView:
        nodes = (OUTSIDE[0], *cluster.nodes[:1], OUTSIDE[1], *cluster.nodes[1:])
        base = ChangingView(ClusterSnapshot.of(Cluster(cluster.name, nodes), pending,
                                               logged=True))
        return self._keep(cut(base, None), base)

    def apply(self, view: ClusterView, change: Change) -> ClusterView:
        base, subset = self.bases[id(view)]
        base.change(lambda snapshot: changed_snapshot(snapshot, change))
        return self._keep(cut(base, subset), base)

    def _keep(self, view: SubsetView, base: ChangingView) -> SubsetView:
        self.bases[id(view)] = (base, view._subset)
        return view


class TestSubsetView(ViewConformance):
    @pytest.fixture
    def factory(self) -> ViewFactory:
        return SubsetFactory()
