"""The policy's CPU per decision on a real LiveView with a standing backlog (issue 11's case).

    taskset -c 0 .venv/bin/python bench/live_backlog_decisions.py [--pods 600] [--nodes 100]

`dagpilot serve scheduler` reads a LiveView, not the simulator's view: it hands out a new
finished-task set for every call on a single-pod job, and new pod refs as the watch moves. This
feeds a LiveView hand-written API objects (no API server: `builtin:scale-N`'s nodes, `--pods`
pending single-pod jobs), then lets `dagpilot` (the registry's current model, greedy, no
explanations, as serving runs it) place the backlog, each placement assumed as the serving loop
does; `kube-default.decide` is timed on the same views (the reference, for a ratio measured in
the same run). Prints CPU milliseconds of the deciding thread after 20 warm-up decisions, and
a fingerprint of the placements (the same across trees when the decisions are).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

import numpy as np
import torch

from dagpilot.agent import load_scheduler
from dagpilot.clusters import load_cluster
from dagpilot.core.config import PhysicsParameters
from dagpilot.core.types import NodeSpec
from dagpilot.live.kube_api import Resource
from dagpilot.live.nodes import decode_node
from dagpilot.live.pods import decode_pod
from dagpilot.live.view import LiveView
from dagpilot.live.watcher import Relist
from dagpilot.policy.process import settle_scheduler_process
from dagpilot.schedulers import SCHEDULERS
from dagpilot.sim import physics

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the API object builders
from tests.live.objects import CREATED_S, node, pod

WARMUP = 20


def backlog(nodes: int, pods: int) -> LiveView:
    params = PhysicsParameters()

    def rtt(a: NodeSpec, b: NodeSpec) -> float:
        return physics.rtt_ms(physics.distance(a, b), params)

    view = LiveView(rtt, clock=lambda: CREATED_S + 100)
    view.feed(Relist(Resource.NODES, [decode_node(node(spec)) for spec in
                                      load_cluster(f"builtin:scale-{nodes}").nodes]))
    view.feed(Relist(Resource.PODS, [decode_pod(pod(
        f"p{i:04d}", created=f"2026-12-01T{10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z",
        cpu="250m")) for i in range(pods)]))
    view.feed(Relist(Resource.WORKFLOWS, []))
    view.sync()
    return view


def summary(seconds: list[float]) -> str:
    ms = np.array(seconds[WARMUP:]) * 1e3
    return (f"p50 {np.percentile(ms, 50):.2f} p99 {np.percentile(ms, 99):.2f} "
            f"mean {ms.mean():.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100, choices=(100, 1000, 5000))
    parser.add_argument("--pods", type=int, default=600)
    parser.add_argument("--decisions", type=int, default=320)
    parser.add_argument("--models", type=Path, default=Path("models"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    view = backlog(args.nodes, args.pods)
    agent = load_scheduler(args.models, explain=False)
    reference = SCHEDULERS["kube-default"]()
    cluster = view.cluster
    for scheduler in (agent, reference):
        scheduler.reset(cluster, np.random.default_rng(0))
    settle_scheduler_process()
    times: dict[str, list[float]] = {"dagpilot": [], "kube-default": []}
    placements = hashlib.sha256()
    for _ in range(args.decisions):
        cpu = time.thread_time()
        reference.decide(view)
        times["kube-default"].append(time.thread_time() - cpu)
        cpu = time.thread_time()
        placement = agent.decide(view)
        times["dagpilot"].append(time.thread_time() - cpu)
        if placement is None:
            break
        placements.update(repr((placement.pod.uid, placement.node, placement.score)).encode())
        view.assume(placement.pod, placement.node)
    ratio = np.median(times["dagpilot"][WARMUP:]) / np.median(times["kube-default"][WARMUP:])
    print(f"{args.nodes} nodes, {args.pods} pending, {len(times['dagpilot']) - WARMUP} decisions "
          f"timed, CPU ms: dagpilot {summary(times['dagpilot'])}; kube-default "
          f"{summary(times['kube-default'])}; p50 ratio {ratio:.1f}; placements "
          f"{placements.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
