"""The reference view keeps the ClusterView contract: immutable snapshots, with and without a
change log, and one object that changes in place (`ChangingView`)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dagpilot.core.scheduler import Placement
from dagpilot.core.snapshot import ChangingView, ClusterSnapshot
from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView, NodeSignals, PodRef
from tests.core.view_conformance import (
    AddNode,
    Bind,
    Change,
    Release,
    RemoveNode,
    Respec,
    Scrape,
    SetReady,
    ViewConformance,
    ViewFactory,
)


def changed_snapshot(snapshot: ClusterSnapshot, change: Change) -> ClusterSnapshot:
    match change:
        case Bind(pod, node, gpus):
            return snapshot.bound(Placement(pod, node, gpus))
        case Release(pod):
            return snapshot.released(pod)
        case SetReady(node, ready):
            return snapshot.with_node(node, ready=ready)
        case Scrape(now_s):
            later = snapshot.at(now_s)
            return later.with_signals([NodeSignals(now_s, cpu_used=n.allocated.cpu)
                                       for n in later.nodes])
        case Respec(spec):
            return snapshot.with_spec(spec)
        case AddNode(spec):
            return snapshot.with_inventory((*snapshot.cluster.nodes, spec))
        case RemoveNode(name):
            return snapshot.with_inventory(
                tuple(s for s in snapshot.cluster.nodes if s.name != name))
    raise AssertionError(change)


class SnapshotFactory:
    def __init__(self, logged: bool) -> None:
        self.logged = logged

    def build(self, cluster: Cluster, pending: Sequence[PodRef]) -> ClusterView:
        return ClusterSnapshot.of(cluster, pending, logged=self.logged)

    def apply(self, view: ClusterView, change: Change) -> ClusterView:
        assert isinstance(view, ClusterSnapshot)
        return changed_snapshot(view, change)


class ChangingFactory:
    def build(self, cluster: Cluster, pending: Sequence[PodRef]) -> ClusterView:
        return ChangingView(ClusterSnapshot.of(cluster, pending, logged=True))

    def apply(self, view: ClusterView, change: Change) -> ClusterView:
        assert isinstance(view, ChangingView)
        view.change(lambda snapshot: changed_snapshot(snapshot, change))
        return view


class TestSnapshotWithoutLog(ViewConformance):
    @pytest.fixture
    def factory(self) -> ViewFactory:
        return SnapshotFactory(logged=False)


class TestSnapshotWithLog(ViewConformance):
    @pytest.fixture
    def factory(self) -> ViewFactory:
        return SnapshotFactory(logged=True)


class TestChangingView(ViewConformance):
    @pytest.fixture
    def factory(self) -> ViewFactory:
        return ChangingFactory()
