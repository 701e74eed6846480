"""How far each physical effect's driver gets on the built-in mix: why an effect acts or not.

    NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" nice -n 5 \\
        .venv/bin/python bench/physics_reach.py [--seeds 10] [--horizon-h 3] \\
        [--scheduler kube-default]

The runs of bench/physics_ablation.py's "all on" case (built-in mix, builtin:default, Poisson
load 0.8, paired seeds 0..N-1) in the Python simulator, with the physics functions wrapped to
record what they were asked: the peak memory-channel utilisation (the knee is 0.75), how often
a node passed the knee, the peak pool await (level 1 from 10 ms), how often a node's page cache
was reclaimed, and the OOM and node-fault kills. An effect whose driver never reaches its
threshold cannot move a JCT, whatever its multipliers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from physics_ablation import mix_config  # bench/, the script's own folder

from dagpilot.bench.harness import plan, prepare, sim_settings
from dagpilot.bench.runner import scheduler_registry
from dagpilot.core.config import PhysicsParameters, Settings
from dagpilot.sim import physics
from dagpilot.sim.run import simulate

SEEN: dict[str, float] = {}


def _reset() -> None:
    SEEN.update(peak_utilisation=0.0, past_knee=0, peak_await_ms=0.0, cache_reclaimed=0)


def _wrap() -> None:
    """Record the drivers as the progress model asks for the multipliers (Python simulator)."""
    membw, await_ms, cache = (physics.membw_multiplier, physics.io_await_ms,
                              physics.page_cache_multiplier)

    def membw_seen(utilisation: float, params: PhysicsParameters) -> float:
        SEEN["peak_utilisation"] = max(SEEN["peak_utilisation"], utilisation)
        SEEN["past_knee"] += utilisation > params.membw_knee
        return membw(utilisation, params)

    def await_seen(demand: float, iops: float, service: float) -> float:
        value = await_ms(demand, iops, service)
        SEEN["peak_await_ms"] = max(SEEN["peak_await_ms"], value)
        return value

    def cache_seen(working: int, wanted: int, capacity: int, params: PhysicsParameters) -> float:
        value = cache(working, wanted, capacity, params)
        SEEN["cache_reclaimed"] += value != 1.0
        return value

    physics.membw_multiplier = membw_seen
    physics.io_await_ms = await_seen  # type: ignore[assignment]
    physics.page_cache_multiplier = cache_seen  # type: ignore[assignment]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--horizon-h", type=float, default=3.0)
    parser.add_argument("--scheduler", default="kube-default")
    args = parser.parse_args()
    _wrap()
    settings, registry = Settings(), scheduler_registry()
    config = mix_config((args.scheduler,), args.seeds, args.horizon_h,
                        Path("bench/out/physics_reach"))
    prepared = prepare(config, settings, registry)
    sim = sim_settings(settings.sim, config, prepared.jobs)
    total: dict[str, Any] = {"pods": 0, "oom_kills": 0, "fault_kills": 0}
    for task in plan(config, prepared):
        _reset()
        record = simulate(task.jobs, prepared.cluster, registry[task.scheduler](), sim, task.seed)
        row = {"seed": task.seed, "jobs": len(task.jobs), "pods": len(record.pods),
               "oom_kills": record.oom_kills, "fault_kills": record.fault_kills, **SEEN}
        print(row, flush=True)
        for key in ("pods", "oom_kills", "fault_kills"):
            total[key] += row[key]
        for key in ("peak_utilisation", "peak_await_ms"):
            total[key] = max(total.get(key, 0.0), row[key])
        for key in ("past_knee", "cache_reclaimed"):
            total[key] = total.get(key, 0) + row[key]
    print("all seeds:", total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
