"""RejectionTable: the reasons of every rejected node from the decision's arrays are, bit for
bit, what `Decoder.reasons` works out node by node (the path explanations took before)."""

from __future__ import annotations

import numpy as np

from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.status import Code, Status
from dagpilot.core.types import (
    Cluster,
    NodeAffinity,
    Requirement,
    Resources,
    Taint,
    TaintEffect,
    Toleration,
)
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.decoder import STATUS_TABLE_ROWS, Decoder
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.rejection_table import RejectionTable
from tests.sim.helpers import gpus, job, node, task
from tests.state.sim_views import busy_default

DECISIONS = 1500


def _node_by_node(decoder: Decoder, view: ClusterView, pod: PodRef,
                  rows: list[int]) -> tuple[tuple[str, str], ...]:
    return tuple((view.nodes[row].spec.name, decoder.reasons(pod.task, view.nodes[row]))
                 for row in rows)


def _statuses_node_by_node(decoder: Decoder, view: ClusterView, pod: PodRef,
                           rows: list[int]) -> tuple[tuple[str, tuple[Status, ...]], ...]:
    return tuple((view.nodes[row].spec.name, decoder.statuses(pod.task, view.nodes[row]))
                 for row in rows)


def _table(decoder: Decoder) -> RejectionTable:
    return RejectionTable(decoder._filters, decoder._pcie)  # the decoder's own filters and rule


def test_every_candidates_reasons_over_a_simulated_run_are_those_node_by_node() -> None:
    # builtin:default has tainted GPU nodes (TaintToleration, GpuModel) and the mix's pods
    # run short of cpu, memory and GPUs (NodeResourcesFit) as the cluster fills.
    env, view, scheduler = busy_default("builtin:mix:40", 3)
    decoder = Decoder()
    table = _table(decoder)
    compared = texts = 0
    seen: set[str] = set()
    codes: set[Code] = set()
    for _ in range(DECISIONS):
        shortlist = decoder.shortlist(view, 16)
        if shortlist is not None:
            candidates = shortlist[0]
            nodes = NodeArrays.from_view(view)
            for at, pod in enumerate(candidates.pods):
                rows = np.flatnonzero(~candidates.feasible[at])
                got = table.rejections(pod.task, nodes, rows)
                assert got == _node_by_node(decoder, view, pod, rows.tolist())
                # and the statuses an extender's filter answers with (codes too: an
                # unresolvable node goes to FailedAndUnresolvableNodes)
                statuses = table.statuses(pod.task, nodes, rows)
                assert tuple(zip((name for name, _ in got), statuses, strict=True)) == \
                    _statuses_node_by_node(decoder, view, pod, rows.tolist())
                codes.update(status.code for found in statuses for status in found)
                compared += 1
                texts += len(got)
                seen.update(reason for _, reason in got)
        view, _, done, _ = env.step(scheduler.decide(view))
        if done:
            break
    assert compared > 2000 and texts > 10_000 and Code.UNRESOLVABLE in codes
    joined = " ".join(seen)
    for reason in ("Insufficient cpu", "Insufficient memory", "Insufficient nvidia.com/gpu",
                   "TaintToleration", "GpuModel"):
        assert reason in joined


def test_a_decoders_kept_and_tabled_reasons_over_a_simulated_run_are_those_node_by_node() -> None:
    # The decoder keeps reasons between decisions (RejectionMemory) and works out the many
    # missing ones with the table, the few node by node: all must agree with a fresh look.
    env, view, scheduler = busy_default("builtin:mix:40", 4)
    decoder = Decoder()
    placements = 0
    for _ in range(DECISIONS):
        shortlist = decoder.shortlist(view, 16)
        if shortlist is not None:
            candidates = shortlist[0]
            at = placements % len(candidates)
            feasible = candidates.feasible[at]
            log_p = np.where(feasible, np.float32(0.0), np.float32(-np.inf))
            placement = decoder.placement(view, candidates, at, int(np.argmax(feasible)),
                                          log_p, explain=True)
            rows = np.flatnonzero(~feasible).tolist()
            assert placement.rejected == _node_by_node(decoder, view, candidates.pods[at], rows)
            placements += 1
        view, _, done, _ = env.step(scheduler.decide(view))
        if done:
            break
    assert placements > 200


def _odd_cluster() -> Cluster:
    """Every filter and the root-complex rule rejecting somewhere, some nodes more than once."""
    return Cluster("odd", (
        node("cordoned", 8.0, unschedulable=True),
        node("tiny", 1.0, memory=2**29),
        node("tainted", 8.0, taints=(Taint("dedicated", "ml"), Taint("x", "y"))),
        node("soft", 8.0, taints=(Taint("soft", "", TaintEffect.PREFER_NO_SCHEDULE),)),
        node("labelled", 8.0, labels=(("disk", "ssd"),)),
        node("split", 32.0, gpus=gpus("A100", (2, 2))),
        node("whole", 32.0, gpus=gpus("A100", (4, 4))),
        node("v100", 32.0, gpus=gpus("V100", (4,))),
        node("cordoned-tiny", 0.5, unschedulable=True, taints=(Taint("dedicated", "ml"),)),
        node("plain", 4.0)))


def test_a_cluster_where_every_filter_and_the_rule_reject_gives_the_same_texts() -> None:
    where = _odd_cluster()
    ssd = NodeAffinity(required=((Requirement("disk", "In", ("ssd",)),),))
    tolerant = (Toleration("dedicated", "Equal", "ml"),
                Toleration("node.kubernetes.io/not-ready", "Exists", ""))
    tasks = [task("small", 10.0, cpu=2.0), task("big", 10.0, cpu=6.0, memory=40 * 2**30),
             task("four", 10.0, cpu=1.0, gpus=4, gpu_model="A100"),
             task("eight", 10.0, cpu=1.0, gpus=8, gpu_model="A100"),
             task("any-two", 10.0, cpu=1.0, gpus=2),
             task("selector", 10.0, cpu=1.0, node_selector=(("disk", "ssd"),)),
             task("affinity", 10.0, cpu=1.0, affinity=ssd),
             task("tolerant", 10.0, cpu=3.0, tolerations=tolerant)]
    snapshot = ClusterSnapshot.of(where, logged=True)
    views = [snapshot,
             snapshot.with_node("plain", ready=False).with_node("labelled", ready=False),
             snapshot.with_node("whole", allocated=Resources(1, 0, 1, "A100"),
                                free_gpus=(1, 2, 3, 4, 5, 6, 7))]
    decoder = Decoder()
    table = _table(decoder)
    every = np.arange(len(where.nodes))
    plugins: set[str] = set()
    for view in views:
        nodes = NodeArrays.from_view(view)
        for one in tasks:
            pod = PodRef(0, job(one.id, one), one, 0, 0.0)
            feasible = decoder.for_pod(view, pod)[0].feasible[0]
            for rows in (np.flatnonzero(~feasible), every):  # `every`: passing nodes too
                got = table.rejections(one, nodes, rows)
                assert got == _node_by_node(decoder, view, pod, rows.tolist()), one.id
                plugins.update(reason.split(":")[0] for _, reason in got)
    assert plugins >= {"NodeUnschedulable", "NodeReady", "NodeResourcesFit", "GpuModel",
                       "TaintToleration", "NodeAffinity", "PcieRootComplex", "Success"}


def test_no_rows_no_reasons() -> None:
    where = _odd_cluster()
    view = ClusterSnapshot.of(where)
    assert _table(Decoder()).rejections(task("t", 1.0), NodeArrays.from_view(view),
                                        np.zeros(0, dtype=np.int64)) == ()


def test_a_cluster_where_every_filter_and_the_rule_reject_gives_the_same_statuses() -> None:
    where = _odd_cluster()
    tolerant = (Toleration("dedicated", "Equal", "ml"),
                Toleration("node.kubernetes.io/not-ready", "Exists", ""))
    tasks = [task("small", 10.0, cpu=2.0), task("huge", 10.0, cpu=64.0),
             task("four", 10.0, cpu=1.0, gpus=4, gpu_model="A100"),
             task("any-two", 10.0, cpu=1.0, gpus=2),
             task("selector", 10.0, cpu=1.0, node_selector=(("disk", "ssd"),)),
             task("tolerant", 10.0, cpu=3.0, tolerations=tolerant)]
    snapshot = ClusterSnapshot.of(where, logged=True)
    views = [snapshot, snapshot.with_node("plain", ready=False),
             snapshot.with_node("whole", allocated=Resources(1, 0, 1, "A100"),
                                free_gpus=(1, 2, 3, 4, 5, 6, 7))]
    decoder = Decoder()
    every = list(range(len(where.nodes))) * 2  # at least STATUS_TABLE_ROWS rows: the table's path
    assert len(every) >= STATUS_TABLE_ROWS
    codes: set[Code] = set()
    for view in views:
        for one in tasks:
            pod = PodRef(0, job(one.id, one), one, 0, 0.0)
            feasible = decoder.for_pod(view, pod)[0].feasible[0]
            rejected = [row for row in every if not feasible[row]]
            got = decoder.rejected(view, one, rejected)
            assert got == _statuses_node_by_node(decoder, view, pod, rejected), one.id
            codes.update(status.code for _, statuses in got for status in statuses)
    assert codes >= {Code.UNSCHEDULABLE, Code.UNRESOLVABLE}  # waiting helps, or never
