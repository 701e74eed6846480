"""The serving forward in eager torch against TorchScript (`torch.jit.optimize_for_inference`),
on the same inputs in the same run: CPU time per decision as a ratio, and whether the
decisions are identical.

    NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" \
        .venv/bin/python bench/inference_paths.py [--decisions 300] [--rounds 5] [--cpu 0]

The inputs are recorded first: the registry's current model (one torch thread, pinned to one
CPU, as serving runs) places the built-in mix arriving on `builtin:default`, and every
PolicyInput it read is kept. Then each path replays them in order (so the network's node-row
memory and graph-summary cache work as in serving), `rounds` times, the paths alternating
round by round; each path also runs without the caches (`_uncached`: the whole forward's
cost, every row and summary computed); each call's thread CPU time is taken (a busy shared
machine disturbs wall time far more).

Why not the whole network as one TorchScript graph: the serving forward branches on the data
(a batch with nothing padded, one job or several, the packed encoder's valid-slot indexing
with data-dependent shapes) and keeps Python-side caches (node rows and graph summaries that
did not change are not recomputed); `torch.jit.trace` would bake one branch in and drop the
caches, and `torch.jit.script` does not take the Python dataclasses and caches. So the
TorchScript path swaps the network's branch-free, shape-polymorphic leaf modules (the node
encoder, the task and combine MLPs, the token and position embeddings: each traced, frozen and
passed through `optimize_for_inference`) into a copy of the model, and keeps the rest eager.

Identical decisions means, on every input: the same greedy action (argmax), the same action
sampled from the masked softmax with the same seeded generator, the same infeasible (-inf)
pairs, and finite logits within 1e-4 (absolute). Results go to bench/out/inference_paths.json.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from dagpilot.agent import load_scheduler
from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.policy import PolicyInput, PolicyNet, collate, greedy, sample
from dagpilot.policy.graph_cache import GraphSummaryCache
from dagpilot.policy.process import settle_scheduler_process
from dagpilot.policy.row_memory import RowMemory
from dagpilot.serve.cpu_pinning import pin
from dagpilot.sim import SimEnv
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals

OUT = Path(__file__).resolve().parent / "out"
CLUSTER = "builtin:default"
POOL = "builtin:mix:200"
LOAD = 0.8
HORIZON_S = 3600.0
SEED = 0
LOGIT_TOLERANCE = 1e-4

Forward = Callable[[PolicyInput], Tensor]


def recorded_inputs(models: Path, decisions: int) -> tuple[list[PolicyInput], PolicyNet]:
    """The inputs the served model reads over `decisions` placements, and the model."""
    scheduler = load_scheduler(models, explain=False)
    settle_scheduler_process()
    agent = scheduler.agent
    cluster = load_cluster(CLUSTER)
    jobs = assign_arrivals(load(POOL), ArrivalSpec("poisson", LOAD), cluster.capacity.cpu,
                           np.random.default_rng(SEED), HORIZON_S)
    env = SimEnv(jobs, cluster, dataclasses.replace(SimSettings(), horizon_s=HORIZON_S))
    view = env.reset(SEED)
    inputs: list[PolicyInput] = []
    while len(inputs) < decisions and not env.done:
        decision = agent.act(view, greedy=True, value=False)
        if decision.policy_input is not None:
            inputs.append(decision.policy_input)
        view = env.step(decision.placement)[0]
    return inputs, agent.model


def _traced(module: nn.Module, example: Tensor) -> nn.Module:
    """`module` traced on `example`, frozen and optimised for inference."""
    traced = torch.jit.trace(module.eval(), example)  # type: ignore[no-untyped-call]
    optimised: nn.Module = torch.jit.optimize_for_inference(torch.jit.freeze(traced))
    return optimised


def scripted_copy(model: PolicyNet, example: PolicyInput) -> PolicyNet:
    """A copy of `model` whose leaf modules run as optimised TorchScript (see the module
    doc)."""
    net = copy.deepcopy(model)
    batch = collate([example])
    d = net.config.d_model
    with torch.inference_mode(False), torch.no_grad():
        net.nodes = _traced(net.nodes, batch.nodes[0])  # type: ignore[assignment]
        graphs = net.graphs
        rows = batch.graph[0, :, 0]
        graphs.tokens = _traced(graphs.tokens, rows)  # type: ignore[assignment]
        graphs.positions = _traced(graphs.positions,  # type: ignore[assignment]
                                   batch.positions[0, :, 0])
        graphs.task = _traced(graphs.task, batch.tasks[0])  # type: ignore[assignment]
        graphs.combine = _traced(graphs.combine,  # type: ignore[assignment]
                                 torch.zeros(len(rows), 3 * d))
    return net


def fresh_caches(net: PolicyNet, cached: bool) -> None:
    """Empty node-row memory and graph-summary cache, as a newly loaded model has; none at
    all unless `cached` (every row and summary computed: the whole forward's cost)."""
    net.node_memory = RowMemory() if cached else None
    net.graphs.summary_cache = GraphSummaryCache() if cached else None


def logits_path(model: PolicyNet) -> Forward:
    def forward(item: PolicyInput) -> Tensor:
        with torch.inference_mode():
            return model.logits(collate([item]))
    return forward


def timed_round(forward: Forward, inputs: list[PolicyInput]) -> tuple[list[float], list[Tensor]]:
    cpu: list[float] = []
    outputs: list[Tensor] = []
    for item in inputs:
        start = time.thread_time()
        outputs.append(forward(item))
        cpu.append(time.thread_time() - start)
    return cpu, outputs


def compare(eager: list[Tensor], scripted: list[Tensor]) -> dict[str, Any]:
    greedy_same = sampled_same = masks_same = 0
    worst = 0.0
    for a, b in zip(eager, scripted, strict=True):
        greedy_same += bool(torch.equal(greedy(a), greedy(b)))
        draws = [sample(x, torch.Generator().manual_seed(SEED)) for x in (a, b)]
        sampled_same += bool(torch.equal(*draws))
        finite = torch.isfinite(a)
        masks_same += bool(torch.equal(finite, torch.isfinite(b)))
        if finite.any():
            worst = max(worst, float((a[finite] - b[finite]).abs().max()))
    n = len(eager)
    return {"inputs": n, "greedy_same": greedy_same, "sampled_same": sampled_same,
            "masks_same": masks_same, "max_abs_logit_diff": worst,
            "identical": greedy_same == sampled_same == masks_same == n
            and worst <= LOGIT_TOLERANCE}


def measure(models: Path, decisions: int, rounds: int) -> dict[str, Any]:
    inputs, model = recorded_inputs(models, decisions)
    eager, scripted = copy.deepcopy(model), scripted_copy(model, inputs[0])
    paths = {"eager": eager, "torchscript": scripted,
             "eager_uncached": copy.deepcopy(eager), "torchscript_uncached": scripted}
    cpu: dict[str, list[float]] = {name: [] for name in paths}
    last: dict[str, list[Tensor]] = {}
    for turn in range(rounds):
        order = list(paths) if turn % 2 == 0 else list(reversed(paths))
        for name in order:
            net = paths[name]
            fresh_caches(net, not name.endswith("_uncached"))  # replayed as a new process
            times, last[name] = timed_round(logits_path(net), inputs)
            if turn > 0:  # the first round warms up (TorchScript profiles its first calls)
                cpu[name] += times
    summary = {name: {"cpu_p50_ms": float(np.percentile(values, 50)) * 1e3,
                      "cpu_p99_ms": float(np.percentile(values, 99)) * 1e3,
                      "cpu_mean_ms": float(np.mean(values)) * 1e3}
               for name, values in cpu.items()}
    ratios = {f"{suffix.strip('_') or 'cached'}_{stat}":
              summary["torchscript" + suffix][f"cpu_{stat}_ms"]
              / summary["eager" + suffix][f"cpu_{stat}_ms"]
              for suffix in ("", "_uncached") for stat in ("p50", "mean")}
    return {"paths": summary, "ratios_torchscript_over_eager": ratios,
            "decisions": compare(last["eager"], last["torchscript"]),
            "decisions_uncached": compare(last["eager_uncached"], last["torchscript_uncached"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=300, help="recorded inputs")
    parser.add_argument("--rounds", type=int, default=5, help="replays per path (1 warm-up)")
    parser.add_argument("--cpu", type=int, default=0, help="the CPU to pin to")
    parser.add_argument("--models", type=Path, default=Path("models"), help="registry root")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2: the first warms up")
    pinned = pin(frozenset({args.cpu}))
    result = {"machine": platform.processor() or platform.machine(),
              "python": platform.python_version(), "torch": torch.__version__,
              "cpus": sorted(pinned), "cluster": CLUSTER, "pool": POOL,
              **measure(args.models, args.decisions, args.rounds)}
    OUT.mkdir(exist_ok=True)
    (OUT / "inference_paths.json").write_text(json.dumps(result, indent=1))
    print(json.dumps({key: result[key] for key in (
        "paths", "ratios_torchscript_over_eager", "decisions", "decisions_uncached")},
        indent=1))


if __name__ == "__main__":
    main()
