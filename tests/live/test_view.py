"""LiveView from in-memory feeds (code paths only; tests/live/test_live_view.py runs it against
the sandbox): spec vs state, pending order, allocation, assume/forget, tokens, signals, RTT."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from dagpilot.clusters import load_cluster
from dagpilot.core.config import PhysicsParameters
from dagpilot.core.types import NodeSpec, Resources, Taint
from dagpilot.live.kube_api import Resource
from dagpilot.live.nodes import decode_node
from dagpilot.live.pods import decode_pod
from dagpilot.live.prometheus import MEASURED, Prometheus, Reading, SignalSample
from dagpilot.live.signal_poller import SignalPoller
from dagpilot.live.view import LiveView
from dagpilot.live.watcher import Change, Relist
from dagpilot.live.workflows import WorkflowDecoder
from dagpilot.sim import physics
from tests.live.objects import CREATED_S, node, pod, workflow

SPECS = load_cluster("builtin:small").nodes
PARAMS = PhysicsParameters()


def seen(spec: NodeSpec) -> NodeSpec:
    """The spec as the view reads it back from its Node object."""
    found = decode_node(node(spec)).spec
    assert found is not None
    return found


def topology_rtt(a: NodeSpec, b: NodeSpec) -> float:
    return physics.rtt_ms(physics.distance(a, b), PARAMS)


class Clock:
    def __init__(self) -> None:
        self.now = CREATED_S + 100

    def __call__(self) -> float:
        return self.now


def _view(specs: tuple[NodeSpec, ...] = SPECS, pods: list[dict[str, Any]] | None = None,
          poller: SignalPoller | None = None, **options: Any) -> tuple[LiveView, Clock]:
    clock = Clock()
    view = LiveView(topology_rtt, poller=poller, clock=clock, **options)
    view.feed(Relist(Resource.NODES, [decode_node(node(s)) for s in specs]))
    view.feed(Relist(Resource.PODS, [decode_pod(p) for p in pods or []]))
    view.feed(Relist(Resource.WORKFLOWS, []))
    view.sync()
    return view, clock


def _node_event(view: LiveView, raw: dict[str, Any], kind: str = "MODIFIED") -> None:
    view.feed(Change(Resource.NODES, kind, decode_node(raw)))
    view.sync()


def _pod_event(view: LiveView, raw: dict[str, Any], kind: str = "MODIFIED") -> None:
    view.feed(Change(Resource.PODS, kind, decode_pod(raw)))
    view.sync()


def test_the_cluster_is_the_nodes_in_name_order_with_their_specs() -> None:
    view, _ = _view(tuple(reversed(SPECS)))
    assert [n.name for n in view.cluster.nodes] == sorted(s.name for s in SPECS)
    assert all(state.spec == spec for state, spec in zip(view.nodes, view.cluster.nodes,
                                                         strict=True))
    assert set(view.cluster.nodes) == {seen(spec) for spec in SPECS}
    allocatable, allocated = view.resource_arrays()
    assert allocatable[:, 0].tolist() == [s.allocatable.cpu for s in view.cluster.nodes]
    assert not allocated.any() and view.ready_mask().all()


def test_a_heartbeat_keeps_the_cluster_and_readiness_is_state() -> None:
    view, _ = _view()
    cluster, token = view.cluster, view.changed_nodes(-1)[0]
    _node_event(view, node(SPECS[1], version=2, heartbeat="2026-12-01T10:01:00Z"))
    assert view.cluster is cluster and view.changed_nodes(token) == (token, [])
    _node_event(view, node(SPECS[1], ready=False, version=3))
    assert view.cluster is cluster and not view.nodes[1].ready
    assert view.ready_mask().tolist() == [True, False, True, True, True, True]
    assert 1 in (view.changed_nodes(token)[1] or [])


@pytest.mark.parametrize("change", [
    {"labels": (("team", "a"),)},
    {"taints": (Taint("dedicated", "x"),)},
    {"unschedulable": True},
    {"allocatable": Resources(15.0, 2**36, 0)},
])
def test_a_spec_change_makes_a_new_cluster_and_old_tokens_stop(change: dict[str, Any]) -> None:
    view, _ = _view()
    cluster, token = view.cluster, view.changed_nodes(-1)[0]
    spec = dataclasses.replace(SPECS[0], **change)
    _node_event(view, node(spec, version=2))
    assert view.cluster is not cluster and view.cluster.nodes[0] == seen(spec)
    assert view.nodes[0].spec == seen(spec)
    new_token, changed = view.changed_nodes(token)
    assert changed is None and view.changed_nodes(new_token) == (new_token, [])


def test_nodes_added_and_removed_make_new_clusters() -> None:
    view, _ = _view(SPECS[:2])
    first = view.cluster
    _node_event(view, node(SPECS[2]), "ADDED")
    second = view.cluster
    assert second is not first and len(second.nodes) == 3
    _node_event(view, node(SPECS[0]), "DELETED")
    assert view.cluster is not second and [n.name for n in view.cluster.nodes] == [
        SPECS[1].name, SPECS[2].name]


def test_a_malformed_node_is_left_out_counted_and_taken_back_when_fixed() -> None:
    view, _ = _view()
    bad = node(SPECS[0], version=2)
    bad["status"]["allocatable"]["cpu"] = "sixteen"
    _node_event(view, bad)
    assert SPECS[0].name not in view.cluster.index and view.skipped["node_spec"] == 1
    _node_event(view, bad)  # the same version again: logged once
    assert view.skipped["node_spec"] == 1
    _node_event(view, node(SPECS[0], version=3))
    assert view.cluster.nodes[0] == seen(SPECS[0])


def test_pending_is_oldest_first_and_holds_only_unbound_live_pods_of_our_schedulers() -> None:
    pods = [pod("late", created="2026-12-01T10:00:09Z", version=5),
            pod("early-b", version=4), pod("early-a", version=7),
            pod("bound", node_name=SPECS[0].name),
            pod("done", phase="Succeeded"), pod("other", scheduler="someone-else"),
            pod("gated", schedulingGates=[{"name": "wait"}])]
    view, _ = _view(pods=pods, schedulers=frozenset({"default-scheduler"}))
    # same creation second: the API's creation order (resourceVersion) decides
    assert [p.task.id for p in view.pending] == ["early-b", "early-a", "late"]
    _pod_event(view, pod("new", created="2026-12-01T10:00:05Z"), "ADDED")
    assert [p.task.id for p in view.pending] == ["early-b", "early-a", "new", "late"]
    _pod_event(view, pod("early-a", node_name=SPECS[0].name, version=9))
    assert [p.task.id for p in view.pending] == ["early-b", "new", "late"]


def test_a_pod_with_a_rule_dagpilot_cannot_honour_is_refused_not_pending() -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {}, "topologyKey": "kubernetes.io/hostname"}]}}
    name = SPECS[0].name
    pods = [pod("plain"), pod("apart", affinity=anti), pod("unreadable", cpu="two"),
            pod("bound-apart", node_name=name, affinity=anti, cpu="1", phase="Running"),
            pod("other-apart", scheduler="someone-else", affinity=anti)]
    view, _ = _view(pods=pods, schedulers=frozenset({"default-scheduler"}))
    assert [p.task.id for p in view.pending] == ["plain"]
    refused = dict(view.refused.values())
    assert set(refused) == {"ns/apart", "ns/unreadable"}
    assert "required pod anti-affinity" in refused["ns/apart"]
    assert refused["ns/unreadable"].startswith("dagpilot cannot read this pod:")
    # a bound pod with the rule still counts on its node: only the waiting are refused
    row = view.cluster.nodes.index(seen(SPECS[0]))
    assert view.nodes[row].allocated.cpu == 1.0
    # the pod gone, and made again without the rule: no longer refused, and pending
    _pod_event(view, pod("apart", affinity=anti), "DELETED")
    _pod_event(view, pod("apart", uid="uid-ns-apart-2", version=3), "ADDED")
    _pod_event(view, pod("unreadable", cpu="two"), "DELETED")
    assert not view.refused
    assert [p.task.id for p in view.pending] == ["plain", "apart"]


def test_a_pending_pod_is_found_by_its_name_and_others_are_not() -> None:
    pods = [pod("waiting"), pod("bound", node_name=SPECS[0].name),
            pod("other", scheduler="someone-else")]
    view, _ = _view(pods=pods, schedulers=frozenset({"default-scheduler"}))
    found = view.pending_pod("ns/waiting")
    assert found is not None and found is view.pending[0] and found.task.id == "waiting"
    assert [view.pending_pod(f"ns/{name}") for name in ("bound", "other", "none")] \
        == [None, None, None]
    _pod_event(view, pod("waiting", node_name=SPECS[0].name, version=9))
    assert view.pending_pod("ns/waiting") is None


def test_allocated_is_the_requests_of_bound_pods_not_finished() -> None:
    name = SPECS[2].name
    pods = [pod("a", node_name=name, cpu="1500m", memory="1Gi", gpus="2", phase="Running"),
            pod("b", node_name=name, cpu="250m", memory="512Mi", phase="Running"),
            pod("c", node_name=name, cpu="4", phase="Succeeded")]
    view, _ = _view(pods=pods)
    row = view.cluster.nodes.index(seen(SPECS[2]))
    state = view.nodes[row]
    assert state.allocated == Resources(1.75, 2**30 + 2**29, 2) and state.pods == 2
    assert view.resource_arrays()[1][row].tolist() == [1.75, 2**30 + 2**29, 2.0]
    assert view.job_nodes("ns/a") == (name,) and view.job_nodes("ns/c") == ()
    token = view.changed_nodes(-1)[0]
    _pod_event(view, pod("a", node_name=name, cpu="1500m", memory="1Gi", gpus="2",
                         phase="Succeeded", version=2))
    assert view.nodes[row].allocated == Resources(0.25, 2**29, 0)
    assert view.changed_nodes(token) == (token + 1, [row])
    assert view.finished_tasks("ns/a") == {"a"}
    _pod_event(view, pod("b", node_name=name), "DELETED")
    assert view.nodes[row].allocated == Resources() and view.nodes[row].pods == 0


def test_free_gpus_count_exactly_and_say_when_which_ones_is_unknown() -> None:
    gpu = next(s for s in SPECS if s.gpus)
    assert len(gpu.root_complexes) == 2 and len(gpu.gpus) == 8
    view, _ = _view(pods=[pod("g", node_name=gpu.name, gpus="3", phase="Running")])
    state = next(n for n in view.nodes if n.spec.name == gpu.name)
    assert state.free_gpus == (0, 1, 2, 3, 4) and not state.gpus_exact
    single = dataclasses.replace(gpu, gpus=tuple(dataclasses.replace(g, root_complex=0)
                                                 for g in gpu.gpus))
    view, _ = _view((single,), pods=[pod("g", node_name=gpu.name, gpus="3", phase="Running")])
    assert view.nodes[0].free_gpus == (0, 1, 2, 3, 4) and view.nodes[0].gpus_exact


@pytest.mark.parametrize("names", [("0", "1"), ("pci0000:17", "pci0000:3a")])
def test_free_gpus_per_root_complex_come_from_the_agent_when_its_count_agrees(
        names: tuple[str, str]) -> None:
    gpu = next(s for s in SPECS if s.gpus)  # GPUs 0-3 on complex 0, 4-7 on complex 1
    poller = _poller()
    view, _ = _view(pods=[pod("g", node_name=gpu.name, gpus="3", phase="Running")],
                    poller=poller)
    state = next(n for n in view.nodes if n.spec.name == gpu.name)
    poller.latest = _sample({}, gpus={gpu.name: {names[0]: 4, names[1]: 1}})
    view.sync()
    assert state.free_gpus == (0, 1, 2, 3, 4) and state.gpus_exact
    poller.latest = _sample({}, gpus={gpu.name: {names[0]: 1, names[1]: 4}})
    view.sync()
    assert state.free_gpus == (0, 4, 5, 6, 7) and state.gpus_exact
    _pod_event(view, pod("h", node_name=gpu.name, gpus="1", phase="Running"), "ADDED")
    assert state.free_gpus == (0, 1, 2, 3) and not state.gpus_exact  # the sample is behind


def test_assume_counts_a_pod_at_once_and_the_watch_confirms_it_without_counting_twice() -> None:
    view, _clock = _view(pods=[pod("p", cpu="2")])
    target = SPECS[1].name
    (ref,) = view.pending
    view.assume(ref, target)
    assert view.pending == () and view.nodes[1].allocated.cpu == 2.0
    assert view.nodes[1].signals.placed_since_sample.cpu == 2.0  # never sampled
    _pod_event(view, pod("p", cpu="2", node_name=target, version=2))
    assert view.nodes[1].allocated.cpu == 2.0 and view.nodes[1].pods == 1
    with pytest.raises(ValueError, match="not pending"):
        view.assume(ref, target)


def test_forget_puts_a_pod_whose_bind_failed_back_in_its_place() -> None:
    view, _ = _view(pods=[pod("p"), pod("q", version=2)])
    first = view.pending[0]
    view.assume(first, SPECS[0].name)
    assert [p.task.id for p in view.pending] == ["q"]
    view.forget(first)
    assert [p.task.id for p in view.pending] == ["p", "q"]
    assert view.nodes[0].allocated == Resources()


def test_a_pod_bound_to_an_unknown_node_is_counted_and_allocated_when_it_appears() -> None:
    view, _ = _view(SPECS[:1], pods=[pod("p", node_name=SPECS[1].name, phase="Running")])
    assert view.skipped["pod_on_unknown_node"] == 1
    _node_event(view, node(SPECS[1]), "ADDED")
    assert view.nodes[1].allocated.cpu == 0.5 and view.job_nodes("ns/p") == (SPECS[1].name,)


def _sample(readings: dict[str, dict[str, Reading]],
            rtt: dict[tuple[str, str], float] | None = None,
            gpus: dict[str, dict[str, int]] | None = None) -> SignalSample:
    return SignalSample(CREATED_S, {column: readings.get(column, {}) for column in MEASURED},
                        rtt or {}, gpus or {})


def _poller() -> SignalPoller:
    return SignalPoller(Prometheus("http://127.0.0.1:9"))  # never started: tests set `latest`


def test_signals_carry_their_sample_time_and_a_missing_reading_means_never_sampled() -> None:
    poller = _poller()
    view, _clock = _view(poller=poller)
    a, b = SPECS[0].name, SPECS[1].name
    full = {column: {a: Reading(float(i + 1), CREATED_S + 90 - i)} for i, column in
            enumerate(MEASURED)}
    partial = {"cpu_used": {b: Reading(3.0, CREATED_S + 95)}}
    poller.latest = _sample({column: {**full.get(column, {}), **partial.get(column, {})}
                             for column in MEASURED})
    view.sync()
    signals = view.nodes[0].signals
    assert signals.sampled_s == CREATED_S + 86  # the oldest reading's time
    assert (signals.cpu_used, signals.memory_used, signals.io_await_ms) == (1.0, 2, 5.0)
    assert view.nodes[1].signals.sampled_s == 0.0  # four columns never measured
    assert view.readings(b) == {"cpu_used": Reading(3.0, CREATED_S + 95)}
    arrays = view.signal_arrays()
    assert arrays[0].tolist()[:2] == [CREATED_S + 86, 0.0] and not arrays.flags.writeable
    assert view.signal_arrays() is arrays  # unchanged: the same object


def test_placed_since_sample_is_what_was_bound_after_the_sample() -> None:
    poller = _poller()
    view, clock = _view(poller=poller)
    a = SPECS[0].name
    poller.latest = _sample({c: {a: Reading(0.0, CREATED_S + 100)} for c in MEASURED})
    view.sync()
    clock.now = CREATED_S + 101
    _pod_event(view, pod("p", cpu="3", node_name=a, version=2), "ADDED")
    assert view.nodes[0].signals.placed_since_sample.cpu == 3.0
    poller.latest = _sample({c: {a: Reading(0.5, CREATED_S + 200)} for c in MEASURED})
    view.sync()
    assert view.nodes[0].signals.placed_since_sample == Resources()


def test_rtt_comes_from_the_mesh_else_from_the_topology_model() -> None:
    poller = _poller()
    view, _ = _view(poller=poller)
    a, b, c = SPECS[0].name, SPECS[1].name, SPECS[3].name
    poller.latest = _sample({}, {(a, b): 0.0002, (b, a): 0.0004})
    view.sync()
    assert view.rtt_ms(a, b) == pytest.approx(0.3) and view.rtt_ms(b, a) == view.rtt_ms(a, b)
    assert view.rtt_ms(a, c) == view.rtt_ms(c, a) == PARAMS.rtt_cross_zone_ms
    assert view.rtt_ms(a, a) == PARAMS.rtt_same_node_ms


def test_workflow_pods_take_their_dag_and_finished_tasks_from_the_workflow() -> None:
    decode = WorkflowDecoder()
    view, _ = _view(pods=[pod("d-1", workflow="diamond", argo_node="diamond.a",
                              node_name=SPECS[0].name, phase="Running"),
                          pod("d-2", workflow="diamond", argo_node="diamond.c")])
    assert view.pending[0].job.id == "ns/d-2"  # the workflow is not known yet
    view.feed(Change(Resource.WORKFLOWS, "ADDED", decode(workflow(
        nodes={"diamond.a": ("Pod", "Succeeded")}))))
    view.sync()
    (ref,) = view.pending
    assert ref.job.id == "ns/diamond" and ref.task.id == "c" and ref.task.parents == ("a",)
    assert view.job_nodes("ns/diamond") == (SPECS[0].name,)
    assert view.finished_tasks("ns/diamond") == {"a"} and view.finished_tasks("ns/x") == set()


def test_a_workflow_whose_dag_does_not_parse_is_counted_and_its_pods_still_pending() -> None:
    view, _ = _view(pods=[pod("d-1", workflow="diamond", argo_node="diamond.a")])
    view.feed(Change(Resource.WORKFLOWS, "ADDED", WorkflowDecoder()(workflow(
        spec={"entrypoint": "nowhere", "templates": []}))))
    view.sync()
    assert view.skipped["workflow_dag"] == 1 and view.pending[0].job.id == "ns/d-1"


def test_a_relist_drops_what_is_gone_and_now_never_goes_back() -> None:
    view, clock = _view(pods=[pod("p"), pod("q", node_name=SPECS[0].name)])
    before = view.now_s
    clock.now -= 50
    view.feed(Relist(Resource.PODS, [decode_pod(pod("q", node_name=SPECS[0].name))]))
    view.sync()
    assert view.pending == () and view.nodes[0].pods == 1 and view.now_s == before


def test_the_arrays_are_read_only() -> None:
    view, _ = _view()
    for array in (*view.resource_arrays(), view.ready_mask(), view.signal_arrays()):
        assert isinstance(array, np.ndarray) and not array.flags.writeable


def _pending_ids(view: LiveView) -> list[tuple[int, str, str]]:
    return [(ref.uid, ref.job.id, ref.task.id) for ref in view.pending]


def test_the_pending_list_kept_step_by_step_is_the_one_rebuilt_from_scratch() -> None:
    # The view cuts a placed, bound or deleted pod out of its pending list in place. The same
    # view with its list thrown away rebuilds it from the pods: they must agree at every step.
    rng = np.random.default_rng(11)
    names = [f"p{i:02d}" for i in range(40)]
    view, _ = _view(pods=[pod(name, created=f"2026-12-01T10:00:{i:02d}Z")
                          for i, name in enumerate(names)])
    cut = 0
    for step in range(400):
        refs = {ref.task.id: ref for ref in view.pending}
        name = names[int(rng.integers(len(names)))]
        action = int(rng.integers(4))
        if action == 0 and name in refs:
            view.assume(refs[name], SPECS[0].name)
        elif action == 1:  # bound by the watch (our bind, or another scheduler's)
            _pod_event(view, pod(name, node_name=SPECS[1].name, version=step + 2))
        elif action == 2:
            _pod_event(view, pod(name, version=step + 2), "DELETED")
        else:  # created again (or still there), later than the others
            _pod_event(view, pod(name, created="2026-12-01T11:00:00Z", version=step + 2),
                       "ADDED")
        kept = _pending_ids(view)
        cut += len(kept) < len(refs)
        view._pending_view = None  # what a rebuild from the pods gives
        assert kept == _pending_ids(view), step
    assert cut > 100  # the in-place path was taken
