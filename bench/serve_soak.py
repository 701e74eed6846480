"""Soak of the serving process's decisions: resident memory and latency over minutes.

    NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" \
        .venv/bin/python bench/serve_soak.py [--minutes 10] [--rate 100] [--cpu 1]

The model is loaded as `dagpilot serve scheduler` loads it: the process pins itself to one CPU
(`serve.cpu_pinning.pin`, sched_setaffinity), opens the registry's current model through
`serve.model_reload.ModelPolicy` (its reload watcher running, as in serving), then settles
(`policy.process.settle_scheduler_process`: one torch thread, the start-up heap frozen), and
decides with the serving call (`greedy_policy`: greedy `Agent.act`, no critic, collections
deferred past each decision).

The views are the simulator's: `builtin:default` (48 nodes) with the built-in mix arriving as
a Poisson process at 0.8 of its cores; each decision's placement is bound and the simulator
advances, so the snapshot changes between decisions. An episode that ends is followed by the
next seed on the same cluster; the agent is never reset (a serving process is not). Decisions
are offered at a steady `--rate` per second on a fixed clock: a decision due while the last
one (or the simulator's step) is still running starts late, and a whole missed period is
skipped, not made up in a burst (counted as `missed`).

Per minute: resident memory at its end (VmRSS from /proc/self/status, and the anonymous part
of it from /proc/self/smaps_rollup: the heap, not the mapped libraries), the automatic full
(generation 2) collections in it, the decisions made and missed, p50/p99/max of the
decision's wall time and of its thread CPU time (what other processes on a shared core take
does not count). The verdict compares the RSS at the end with
the RSS at the end of minute 1 (the start-up allocations and the caches' first fill are over
by then): growth under 5 MB (and, to tell a leak from a slow warm-up, the growth over the
second half alone), and p99 stable (each minute's CPU p99 within 1.5x the median of
the per-minute CPU p99s). Results go to bench/out/serve_soak.json.

The simulator is the harness, not the serving process, and a finished episode's simulation is
cyclic garbage (its kernel holds bound methods of its parts) that only a full collection frees:
some 2,500 objects an episode, dead in the oldest generation until the collector's next full
pass, and the pages that pile took stay resident. A real serving process holds no
simulator, so by default the soak collects at each episode boundary (outside the decisions'
timing: the next decision may start late) and measures the serving process without the
harness's garbage; `--keep-harness-garbage` leaves it to the serving process's own collector
(docs/BENCHMARKS.md, run 3: about 7 MB of it).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.policy.process import settle_scheduler_process
from dagpilot.serve.cpu_pinning import pin
from dagpilot.serve.model_reload import ModelPolicy
from dagpilot.sim import SimEnv
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals

OUT = Path(__file__).resolve().parent / "out"
CLUSTER = "builtin:default"
POOL = "builtin:mix:200"
LOAD = 0.8
HORIZON_S = 3600.0
SEED = 0
RSS_GROWTH_LIMIT_MB = 5.0
P99_STABLE_FACTOR = 1.5


def rss_mb() -> float:
    """This process's resident set (VmRSS) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def anon_mb() -> float:
    """The anonymous part of this process's resident set (smaps_rollup) in MB."""
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("Anonymous:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no Anonymous in /proc/self/smaps_rollup")


class FullCollections:
    """Counts the collector's full (generation 2) passes, the harness's own included."""

    def __init__(self) -> None:
        self.count = 0
        gc.callbacks.append(self._seen)

    def _seen(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            self.count += 1

    def take(self) -> int:
        count, self.count = self.count, 0
        return count


@dataclasses.dataclass
class Minute:
    wall_s: list[float] = dataclasses.field(default_factory=list)
    cpu_s: list[float] = dataclasses.field(default_factory=list)
    placed: int = 0
    missed: int = 0

    def summary(self, index: int, full_collections: int) -> dict[str, Any]:
        wall, cpu = np.array(self.wall_s) * 1e3, np.array(self.cpu_s) * 1e3
        return {"minute": index, "rss_mb": round(rss_mb(), 2), "anon_mb": round(anon_mb(), 2),
                "full_collections": full_collections, "decisions": len(wall),
                "placed": self.placed, "missed": self.missed,
                "p50_ms": _pct(wall, 50), "p99_ms": _pct(wall, 99), "max_ms": _max(wall),
                "cpu_p50_ms": _pct(cpu, 50), "cpu_p99_ms": _pct(cpu, 99),
                "cpu_max_ms": _max(cpu)}


def _pct(ms: np.ndarray, q: float) -> float:
    return round(float(np.percentile(ms, q)), 3) if len(ms) else float("nan")


def _max(ms: np.ndarray) -> float:
    return round(float(ms.max()), 3) if len(ms) else float("nan")


def soak(models: Path, minutes: int, rate: float, cpu: int, *,
         minute_s: float = 60.0, collect_episodes: bool = False) -> dict[str, Any]:
    pinned = pin(frozenset({cpu}))
    served = ModelPolicy(models)
    serving = served.current()
    if serving is None:
        raise SystemExit(f"error: no model in {models}: {served.load_error}")
    served.start()
    settle_scheduler_process()
    cluster = load_cluster(CLUSTER)
    jobs = assign_arrivals(load(POOL), ArrivalSpec("poisson", LOAD), cluster.capacity.cpu,
                           np.random.default_rng(SEED), HORIZON_S)
    env = SimEnv(jobs, cluster, dataclasses.replace(SimSettings(), horizon_s=HORIZON_S))
    episode = 0
    view = env.reset(SEED)
    full = FullCollections()
    rss_start = rss_mb()
    period = 1.0 / rate
    start = time.perf_counter()
    due = start
    rows: list[dict[str, Any]] = []
    minute = Minute()
    while len(rows) < minutes:
        now = time.perf_counter()
        if now < due:
            time.sleep(due - now)
        elif now - due >= period:  # a whole period missed: skip it, no burst to catch up
            skipped = int((now - due) / period)
            minute.missed += skipped
            due += skipped * period
        wall, thread = time.perf_counter(), time.thread_time()
        placement = serving.policy(view).placement
        minute.wall_s.append(time.perf_counter() - wall)
        minute.cpu_s.append(time.thread_time() - thread)
        minute.placed += placement is not None
        due += period
        view, _, done, _ = env.step(placement)
        if done:
            episode += 1
            view = env.reset(SEED + episode)
            if collect_episodes:  # the finished simulation: the harness's garbage
                gc.collect()
        if time.perf_counter() - start >= minute_s * (len(rows) + 1):
            rows.append(minute.summary(len(rows) + 1, full.take()))
            print(json.dumps(rows[-1]), flush=True)
            minute = Minute()
        serving = served.current() or serving
    served.close()
    return verdict(rows, rss_start, pinned, episodes=episode + 1, rate=rate,
                   models=str(models), collect_episodes=collect_episodes)


def verdict(rows: list[dict[str, Any]], rss_start: float, pinned: frozenset[int], *,
            episodes: int, rate: float, models: str, collect_episodes: bool) -> dict[str, Any]:
    growth = rows[-1]["rss_mb"] - rows[0]["rss_mb"]
    halfway = rows[len(rows) // 2 - 1]  # the end of minute 5 of 10: does it still grow?
    cpu_p99 = [row["cpu_p99_ms"] for row in rows]
    median_p99 = float(np.median(cpu_p99))
    return {"machine": platform.processor() or platform.machine(),
            "python": platform.python_version(), "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(), "cpus": sorted(pinned),
            "models": models, "cluster": CLUSTER, "pool": POOL, "load": LOAD,
            "rate_per_s": rate, "episodes": episodes, "collect_episodes": collect_episodes,
            "rss_before_first_decision_mb":
            round(rss_start, 2), "minutes": rows,
            "rss_growth_minute1_to_end_mb": round(growth, 2),
            "rss_growth_ok": growth < RSS_GROWTH_LIMIT_MB,
            "anon_growth_minute1_to_end_mb": round(rows[-1]["anon_mb"] - rows[0]["anon_mb"], 2),
            "rss_growth_second_half_mb": round(rows[-1]["rss_mb"] - halfway["rss_mb"], 2),
            "cpu_p99_median_ms": median_p99,
            "p99_stable": max(cpu_p99) <= P99_STABLE_FACTOR * median_p99}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=10, help="how long (minute 1 included)")
    parser.add_argument("--rate", type=float, default=100.0, help="decisions offered per second")
    parser.add_argument("--cpu", type=int, default=1, help="the CPU the process pins itself to")
    parser.add_argument("--models", type=Path, default=Path("models"), help="registry root")
    parser.add_argument("--minute-s", type=float, default=60.0,
                        help="seconds per sampling interval (shorter for a smoke run)")
    parser.add_argument("--keep-harness-garbage", action="store_true",
                        help="do not collect each finished simulation at its episode's end "
                             "(the serving process's collector takes the harness's garbage)")
    args = parser.parse_args()
    if args.minutes < 2:
        parser.error("--minutes must be at least 2: growth is measured from minute 1")
    result = soak(args.models, args.minutes, args.rate, args.cpu, minute_s=args.minute_s,
                  collect_episodes=not args.keep_harness_garbage)
    OUT.mkdir(exist_ok=True)
    (OUT / "serve_soak.json").write_text(json.dumps(result, indent=1))
    print(f"RSS growth minute 1 -> {args.minutes}: {result['rss_growth_minute1_to_end_mb']} MB "
          f"(ok: {result['rss_growth_ok']}), over the second half "
          f"{result['rss_growth_second_half_mb']} MB; CPU p99 per minute median "
          f"{result['cpu_p99_median_ms']:.2f} ms (stable: {result['p99_stable']})")


if __name__ == "__main__":
    main()
