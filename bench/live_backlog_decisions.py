"""The policy's CPU per decision on a real LiveView with a standing backlog (issue 11's case).

    taskset -c 0 .venv/bin/python bench/live_backlog_decisions.py [--pods 600] [--nodes 100] \
        [--mix]

`dagpilot serve scheduler` reads a LiveView, not the simulator's view: it hands out a new
finished-task set for every call on a single-pod job, and new pod refs as the watch moves. This
feeds a LiveView hand-written API objects (no API server: `builtin:scale-N`'s nodes, `--pods`
pending single-pod jobs), then lets `dagpilot` (the registry's current model, greedy, no
explanations, as serving runs it) place the backlog, each placement assumed as the serving loop
does; `kube-default.decide` is timed on the same views (the reference, for a ratio measured in
the same run). Prints CPU milliseconds of the deciding thread after 20 warm-up decisions, of
them the shortlist's (`Decoder.shortlist`: choosing the candidates, the one part that walks the
whole backlog), and a fingerprint of the placements (the same across trees when the decisions
are). `--mix`: the pods are the built-in mix's non-GPU tasks in turn (as the serving bench's
stream has them: every pod of its own single-pod job, requests of every size) instead of one
250m pod spec, so the candidates and their masks vary as in serving.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

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
from serving_throughput import manifests, stream_tasks  # bench/, the script's own folder
from tests.live.objects import CREATED_S, node, pod

WARMUP = 20


def backlog(nodes: int, pods: int, *, mix: bool = False) -> LiveView:
    params = PhysicsParameters()

    def rtt(a: NodeSpec, b: NodeSpec) -> float:
        return physics.rtt_ms(physics.distance(a, b), params)

    view = LiveView(rtt, clock=lambda: CREATED_S + 100)
    view.feed(Relist(Resource.NODES, [decode_node(node(spec)) for spec in
                                      load_cluster(f"builtin:scale-{nodes}").nodes]))
    made = mix_pods(pods) if mix else [pod(f"p{i:04d}", created=_created(i), cpu="250m")
                                       for i in range(pods)]
    view.feed(Relist(Resource.PODS, [decode_pod(manifest) for manifest in made]))
    view.feed(Relist(Resource.WORKFLOWS, []))
    view.sync()
    return view


def _created(index: int) -> str:
    return f"2026-12-01T{10 + index // 3600:02d}:{index // 60 % 60:02d}:{index % 60:02d}Z"


def mix_pods(count: int) -> list[dict[str, Any]]:
    """`count` pending pods of the serving bench's stream (the built-in mix's non-GPU tasks in
    turn, each its own job), with what the API server would have set on them."""
    pods = manifests(stream_tasks(), "p", count, "dagpilot")
    for index, manifest in enumerate(pods):
        manifest["metadata"].update(namespace="default", uid=f"uid-{index}",
                                    resourceVersion=str(index + 1),
                                    creationTimestamp=_created(index))
        manifest["status"] = {"phase": "Pending"}
    return pods


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
    parser.add_argument("--mix", action="store_true", help="the built-in mix's pods")
    args = parser.parse_args()
    torch.set_num_threads(1)
    view = backlog(args.nodes, args.pods, mix=args.mix)
    agent = load_scheduler(args.models, explain=False)
    shortlists = timed_shortlist(agent)
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
          f"timed, CPU ms: dagpilot {summary(times['dagpilot'])} (of it the shortlist "
          f"{summary(shortlists)}); kube-default "
          f"{summary(times['kube-default'])}; p50 ratio {ratio:.1f}; placements "
          f"{placements.hexdigest()[:16]}")


def timed_shortlist(scheduler: Any) -> list[float]:
    """The thread CPU seconds of each of the agent's `Decoder.shortlist` calls, appended as
    they happen (the decoder's method wrapped on the instance)."""
    decoder = scheduler.agent._decoder
    shortlist, seconds = decoder.shortlist, []

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return shortlist(*args, **kwargs)
        finally:
            seconds.append(time.thread_time() - started)
    decoder.shortlist = timed
    return seconds


if __name__ == "__main__":
    main()
