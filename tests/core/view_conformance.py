"""One conformance suite for every ClusterView: the rules of `core.view`'s contract.

A view's test module subclasses `ViewConformance` and gives it a `factory` fixture, a
`ViewFactory` that builds the view from a Cluster and pending pods and applies changes to it
(binds, releases, readiness, scrapes, spec changes, nodes added and removed). A view that cannot
make a change raises `Unsupported` (the simulator's inventory is fixed for a run) and the checks
that need it are skipped for that view:

    class TestLiveView(ViewConformance):
        @pytest.fixture
        def factory(self) -> ViewFactory:
            return LiveViewFactory(...)

`assert_consistent(view)` checks the rules that hold at any moment (what the arrays say equals
what the nodes say, read-only arrays, node order), for tests that drive a view their own way.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pytest

from dagpilot.core.job_draft import JobDraft, build
from dagpilot.core.types import (
    Cluster,
    Gpu,
    Job,
    NodeSpec,
    Resources,
    Taint,
    Task,
    Toleration,
)
from dagpilot.core.view import SIGNAL_COLUMNS, ClusterView, PodRef, signal_columns

GIB = 2**30


class Unsupported(Exception):
    """The view cannot make this change."""


@dataclass(frozen=True)
class Bind:
    pod: PodRef
    node: str
    gpus: tuple[int, ...] = ()


@dataclass(frozen=True)
class Release:
    """A bound pod ended: its requests and GPUs are free again."""

    pod: PodRef


@dataclass(frozen=True)
class SetReady:
    node: str
    ready: bool


@dataclass(frozen=True)
class Scrape:
    """Every node's metrics sampled anew, the view's clock moved to `now_s` (a live view, whose
    clock is the wall clock, waits for the next scrape instead)."""

    now_s: float


@dataclass(frozen=True)
class Respec:
    """The node named `spec.name` gets this spec: a cordon, a taint, a label, a capacity."""

    spec: NodeSpec


@dataclass(frozen=True)
class AddNode:
    spec: NodeSpec


@dataclass(frozen=True)
class RemoveNode:
    name: str


Change = Bind | Release | SetReady | Scrape | Respec | AddNode | RemoveNode


class ViewFactory(Protocol):
    def build(self, cluster: Cluster, pending: Sequence[PodRef]) -> ClusterView:
        """A view of idle, Ready nodes with `pending` waiting (oldest first), at time 0."""
        ...

    def apply(self, view: ClusterView, change: Change) -> ClusterView:
        """The view after the change: the same object for a view that changes in place, a new
        one for a view rebuilt on each change. Unsupported when the view cannot make it."""
        ...


def gpu_node() -> NodeSpec:
    gpus = tuple(Gpu(i, "A100", i // 2) for i in range(4))  # two root complexes of two
    return NodeSpec("n-gpu", Resources(32, 128 * GIB, 4, "A100"), zone="zone-b", rack="rack-2",
                    gpus=gpus, labels=(("gpu", "a100"),), taints=(Taint("gpu", "yes"),))


CLUSTER = Cluster("conformance", (
    NodeSpec("n-a", Resources(8, 32 * GIB), zone="zone-a", rack="rack-0"),
    NodeSpec("n-b", Resources(16, 64 * GIB), zone="zone-a", rack="rack-1",
             labels=(("disk", "ssd"),)),
    gpu_node(),
))
A, B, G = 0, 1, 2  # node rows


def conformance_job() -> Job:
    draft = JobDraft("conformance", "j")
    tolerant = (Toleration("gpu", "Equal", "yes"),)
    for task in (Task("small", "small", 60.0, Resources(1, GIB)),
                 Task("wide", "wide", 60.0, Resources(2, 4 * GIB)),
                 Task("train", "train", 60.0, Resources(4, 8 * GIB, 2, "A100"),
                      tolerations=tolerant),
                 Task("last", "last", 60.0, Resources(1, GIB))):
        draft.add(task, task.id)
    return build(draft)


def conformance_pods() -> tuple[PodRef, ...]:
    """Four pods of one job, created one second apart (oldest first)."""
    job = conformance_job()
    return tuple(PodRef(uid, job, task, 0, float(uid)) for uid, task in enumerate(job.tasks))


def amounts(resources: Resources) -> tuple[float, float, float]:
    return resources.cpu, float(resources.memory), float(resources.gpus)


def assert_consistent(view: ClusterView) -> None:
    """The rules that hold at any moment: nodes in cluster order, arrays that say what the
    nodes say (shape, dtype, values) and are read-only, free GPUs that match the allocation."""
    specs, nodes = view.cluster.nodes, view.nodes
    assert len(nodes) == len(specs)
    assert [n.spec for n in nodes] == list(specs)
    allocatable, allocated = view.resource_arrays()
    ready, signals = view.ready_mask(), view.signal_arrays()
    for array, shape, dtype in ((allocatable, (len(specs), 3), np.float64),
                                (allocated, (len(specs), 3), np.float64),
                                (ready, (len(specs),), np.bool_),
                                (signals, (len(SIGNAL_COLUMNS), len(specs)), np.float64)):
        assert array.shape == shape and array.dtype == dtype
        assert not array.flags.writeable, "arrays handed out are read-only"
    assert allocatable.tolist() == [list(amounts(s.allocatable)) for s in specs]
    assert allocated.tolist() == [list(amounts(n.allocated)) for n in nodes]
    assert ready.tolist() == [n.ready for n in nodes]
    assert np.array_equal(signals, signal_columns([n.signals for n in nodes]))
    for node in nodes:
        free = node.free_gpus
        assert list(free) == sorted(set(free)) and all(0 <= i < len(node.spec.gpus) for i in free)
        if node.spec.gpus:
            assert len(free) == len(node.spec.gpus) - node.allocated.gpus
    uids = [p.uid for p in view.pending]
    assert len(uids) == len(set(uids))
    created = [p.created_s for p in view.pending]
    assert created == sorted(created), "pending is oldest first"


def changed(view: ClusterView, since: int) -> tuple[int, set[int] | None]:
    token, rows = view.changed_nodes(since)
    assert isinstance(token, int) and token >= 0
    return token, None if rows is None else set(rows)


class ViewConformance:
    """The contract of `core.view`, for the view `factory` makes."""

    @pytest.fixture
    def factory(self) -> ViewFactory:
        raise NotImplementedError("a conformance test class gives its view's factory")

    def fresh(self, factory: ViewFactory) -> tuple[ClusterView, tuple[PodRef, ...]]:
        pods = conformance_pods()
        return factory.build(CLUSTER, pods), pods

    def applied(self, factory: ViewFactory, view: ClusterView, change: Change) -> ClusterView:
        try:
            return factory.apply(view, change)
        except Unsupported as why:
            pytest.skip(f"the view cannot {type(change).__name__}: {why}")

    # --- at any moment -------------------------------------------------------------------

    def test_a_fresh_view_has_idle_ready_nodes_in_cluster_order(self, factory: ViewFactory
                                                                ) -> None:
        view, pods = self.fresh(factory)
        assert view.cluster == CLUSTER
        assert_consistent(view)
        assert all(amounts(n.allocated) == (0, 0, 0) and n.ready and n.pods == 0
                   for n in view.nodes)
        assert view.nodes[G].free_gpus == (0, 1, 2, 3)
        assert [p.uid for p in view.pending] == [p.uid for p in pods]
        assert view.now_s == 0.0

    def test_the_other_members_answer_within_their_rules(self, factory: ViewFactory) -> None:
        view, pods = self.fresh(factory)
        assert view.finished_tasks("no-such-job") == frozenset()
        assert list(view.job_nodes("no-such-job")) == []
        assert list(view.job_nodes(pods[0].job.id)) == []
        names = [s.name for s in CLUSTER.nodes]
        for a in names:
            for b in names:
                rtt = view.rtt_ms(a, b)
                assert math.isfinite(rtt) and rtt >= 0 and rtt == view.rtt_ms(b, a)
                assert view.rtt_ms(a, a) <= rtt

    # --- binds, releases, readiness ------------------------------------------------------

    def test_a_bind_allocates_on_its_node_only_and_leaves_the_pending_queue(
            self, factory: ViewFactory) -> None:
        view, pods = self.fresh(factory)
        before = [amounts(n.allocated) for n in view.nodes]
        view = self.applied(factory, view, Bind(pods[1], "n-b"))
        assert_consistent(view)
        node = view.nodes[B]
        assert amounts(node.allocated) == tuple(
            x + y for x, y in zip(before[B], amounts(pods[1].requests), strict=True))
        assert node.pods == 1
        assert [amounts(n.allocated) for i, n in enumerate(view.nodes) if i != B] == [
            before[i] for i in (A, G)]
        assert [p.uid for p in view.pending] == [pods[0].uid, pods[2].uid, pods[3].uid]
        assert node.signals.placed_since_sample.cpu == pods[1].requests.cpu
        assert list(view.job_nodes(pods[1].job.id)) == ["n-b"]
        view = self.applied(factory, view, Bind(pods[0], "n-b"))
        assert list(view.job_nodes(pods[1].job.id)) == ["n-b"], "each node once"

    def test_a_gpu_bind_takes_its_gpus_and_a_release_gives_them_back(
            self, factory: ViewFactory) -> None:
        view, pods = self.fresh(factory)
        view = self.applied(factory, view, Bind(pods[2], "n-gpu", (2, 3)))
        assert_consistent(view)
        assert view.nodes[G].free_gpus == (0, 1)
        assert view.nodes[G].allocated.gpus == 2
        view = self.applied(factory, view, Release(pods[2]))
        assert_consistent(view)
        assert view.nodes[G].free_gpus == (0, 1, 2, 3)
        assert amounts(view.nodes[G].allocated) == (0, 0, 0) and view.nodes[G].pods == 0
        assert list(view.job_nodes(pods[2].job.id)) == []

    def test_readiness_shows_in_the_node_and_the_mask(self, factory: ViewFactory) -> None:
        view, _ = self.fresh(factory)
        view = self.applied(factory, view, SetReady("n-a", False))
        assert_consistent(view)
        assert not view.nodes[A].ready and view.ready_mask().tolist() == [False, True, True]
        view = self.applied(factory, view, SetReady("n-a", True))
        assert view.ready_mask().tolist() == [True, True, True]

    # --- the change token ----------------------------------------------------------------

    def test_tokens_list_every_node_whose_allocation_or_readiness_changed(
            self, factory: ViewFactory) -> None:
        view, pods = self.fresh(factory)
        start, rows = changed(view, -1)
        assert rows is None, "-1 is never a token"
        token, rows = changed(view, start)
        assert token == start and not rows, "nothing changed: an empty list (or None)"
        view = self.applied(factory, view, Bind(pods[0], "n-a"))
        after_bind, rows = changed(view, start)
        assert rows is None or A in rows
        view = self.applied(factory, view, SetReady("n-b", False))
        after_ready, rows = changed(view, after_bind)
        assert rows is None or B in rows
        _, rows = changed(view, start)
        assert rows is None or {A, B} <= rows, "an older token replays every change since"
        view = self.applied(factory, view, Release(pods[0]))
        _, rows = changed(view, after_ready)
        assert rows is None or A in rows
        now, _ = changed(view, after_ready)
        assert changed(view, now + 1)[1] is None, "a token the view never gave"

    def test_a_token_from_before_a_spec_change_does_not_replay(self, factory: ViewFactory
                                                               ) -> None:
        view, pods = self.fresh(factory)
        view = self.applied(factory, view, Bind(pods[0], "n-a"))
        token, _ = changed(view, -1)
        cordoned = dataclasses.replace(CLUSTER.nodes[A], unschedulable=True)
        view = self.applied(factory, view, Respec(cordoned))
        assert changed(view, token)[1] is None
        now, _ = changed(view, -1)
        view = self.applied(factory, view, Bind(pods[1], "n-b"))
        _, rows = changed(view, now)
        assert rows is None or B in rows, "tokens given after the change replay"

    # --- the cluster object --------------------------------------------------------------

    def test_the_cluster_stays_the_same_object_while_no_spec_changes(
            self, factory: ViewFactory) -> None:
        view, pods = self.fresh(factory)
        cluster, specs = view.cluster, view.cluster.nodes
        for change in (Bind(pods[0], "n-a"), SetReady("n-b", False), Scrape(5.0),
                       Release(pods[0]), SetReady("n-b", True)):
            view = self.applied(factory, view, change)
            assert view.cluster is cluster and view.cluster.nodes is specs, change

    @pytest.mark.parametrize("change", ["cordon", "taint", "label", "capacity"])
    def test_any_spec_change_makes_a_new_cluster_and_keeps_the_state(
            self, factory: ViewFactory, change: str) -> None:
        view, pods = self.fresh(factory)
        view = self.applied(factory, view, Bind(pods[1], "n-b"))
        spec = CLUSTER.nodes[B]
        new = {"cordon": dataclasses.replace(spec, unschedulable=True),
               "taint": dataclasses.replace(spec, taints=(Taint("maintenance", "soon"),)),
               "label": dataclasses.replace(spec, labels=(("disk", "hdd"),)),
               "capacity": dataclasses.replace(spec, allocatable=Resources(12, 48 * GIB)),
               }[change]
        cluster = view.cluster
        view = self.applied(factory, view, Respec(new))
        assert view.cluster is not cluster and view.cluster.nodes is not cluster.nodes
        assert view.cluster.nodes[B] == new and view.nodes[B].spec == new
        assert_consistent(view)
        assert amounts(view.nodes[B].allocated) == amounts(pods[1].requests)
        assert [p.uid for p in view.pending] == [pods[0].uid, pods[2].uid, pods[3].uid]

    def test_nodes_added_and_removed_make_a_new_cluster(self, factory: ViewFactory) -> None:
        view, pods = self.fresh(factory)
        view = self.applied(factory, view, Bind(pods[0], "n-a"))
        extra = NodeSpec("n-new", Resources(4, 16 * GIB), zone="zone-b", rack="rack-3")
        cluster = view.cluster
        view = self.applied(factory, view, AddNode(extra))
        assert view.cluster is not cluster
        assert [s.name for s in view.cluster.nodes] == ["n-a", "n-b", "n-gpu", "n-new"]
        assert_consistent(view)
        assert amounts(view.nodes[3].allocated) == (0, 0, 0) and view.nodes[3].ready
        assert amounts(view.nodes[A].allocated) == amounts(pods[0].requests)
        cluster = view.cluster
        view = self.applied(factory, view, RemoveNode("n-b"))
        assert view.cluster is not cluster
        assert [s.name for s in view.cluster.nodes] == ["n-a", "n-gpu", "n-new"]
        assert_consistent(view)

    # --- arrays --------------------------------------------------------------------------

    def test_arrays_handed_out_keep_their_values_or_say_they_may_not(
            self, factory: ViewFactory) -> None:
        view, pods = self.fresh(factory)
        allocatable = view.resource_arrays()[0]
        kept = allocatable.copy()
        signals = view.signal_arrays()
        signal_values = signals.copy()
        view = self.applied(factory, view, Bind(pods[0], "n-a"))
        assert np.array_equal(allocatable, kept), "allocatable is never written"
        assert np.array_equal(signals, signal_values), "a signal array is never written"
        after_bind = view.signal_arrays()
        assert after_bind is not signals, "a bind changes the node's signals: a new array"
        assert_consistent(view)
        clock, sampled = view.now_s, [n.signals.sampled_s for n in view.nodes]
        view = self.applied(factory, view, Scrape(15.0))
        scraped = view.signal_arrays()
        assert scraped is not after_bind
        assert_consistent(view)
        assert view.now_s >= clock, "the clock never goes back"
        assert all(before < n.signals.sampled_s <= view.now_s
                   for before, n in zip(sampled, view.nodes, strict=True))
        placed = SIGNAL_COLUMNS.index("placed_cpu")
        assert not scraped[placed].any(), "a sample counts the pods bound before it"
