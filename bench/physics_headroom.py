"""How much of the physics any placement could avoid: the headroom behind the 0.80 target.

    NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" nice -n 5 \\
        .venv/bin/python bench/physics_headroom.py [--seeds 10] [--horizon-h 3] \\
        [--schedulers a,b,c] [--out bench/out/physics_headroom]

The runs of the "DRL policy against every baseline" physics-on case (built-in mix,
builtin:default, Poisson load 0.8, paired seeds 0..N-1) in the Python simulator, under three
physics cases:

- all on: the physics every benchmark uses;
- unavoidable only: what no choice of node could avoid is kept, the rest is taken away. The
  network effect is off (as if every communication group ran inside one rack, which a group
  larger than a rack's free capacity cannot), and a multi-GPU pod pays the PCIe penalty only
  when it asks for more GPUs than its node's largest root complex holds (an 8-GPU pod on a node
  of two 4-GPU complexes spans both, wherever it goes); the other effects stay on (they are
  immaterial here: docs/BENCHMARKS.md, "Physics ablation");
- all off: no physics at all.

The placement physics is the only lever a node choice has over the physics, so "unavoidable
only" is an optimistic estimate of the best average JCT a scheduler keeping the same order
could reach by placement: each scheduler's JCT in it, divided by kube-default's with all on
(paired per seed), is the ratio the 0.80 target is measured by. It is an estimate, not a bound:
a different placement also changes what runs when.
Results go to OUT/runs.json after every run (a rerun resumes) and OUT/report.md at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from physics_ablation import cases, mix_config, run_cases  # bench/, the script's own folder

from dagpilot.bench.stats import paired_ratio_ci95
from dagpilot.core.config import PhysicsParameters
from dagpilot.core.types import NodeSpec
from dagpilot.sim import physics

NAIVE = "kube-default"
SCHEDULERS = ("kube-default,fifo,random,sjf-cp,heft,tetris,cws-rank-min-rr,load-aware,"
              "physics-rules,dagpilot")  # "The DRL policy against every baseline"'s ten
ALL_ON, UNAVOIDABLE, ALL_OFF = "all on", "unavoidable only", "all off"
TARGET = 0.80  # issue 13: average JCT <= 0.80 x kube-default's, physics on
_ABLATION = cases()
SWITCHES = {ALL_ON: _ABLATION["all on"], UNAVOIDABLE: _ABLATION["network off"],
            ALL_OFF: _ABLATION["all off"]}
_PCIE = physics.pcie_multiplier


def unavoidable_pcie(node: NodeSpec, gpu_indices: Sequence[int], params: PhysicsParameters,
                     on: bool) -> float:
    """The PCIe multiplier only for a pod larger than its node's largest root complex."""
    largest = max((len(gpus) for gpus in node.root_complexes.values()), default=0)
    if len(gpu_indices) <= largest:
        return 1.0
    return _PCIE(node, gpu_indices, params, on)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--horizon-h", type=float, default=3.0)
    parser.add_argument("--schedulers", default=SCHEDULERS)
    parser.add_argument("--out", type=Path, default=Path("bench/out/physics_headroom"))
    args = parser.parse_args()
    schedulers = tuple(args.schedulers.split(","))

    def physics_of(case: str) -> None:
        physics.pcie_multiplier = unavoidable_pcie if case == UNAVOIDABLE else _PCIE
    runs = run_cases(mix_config(schedulers, args.seeds, args.horizon_h, args.out), SWITCHES,
                     before=physics_of)
    report = summarise(runs, schedulers, args.seeds)
    (args.out / "report.json").write_text(json.dumps(report, indent=1))
    (args.out / "report.md").write_text(markdown(report))
    print(markdown(report))
    return 0


def summarise(runs: dict[str, float], schedulers: tuple[str, ...], seeds: int) -> dict[str, Any]:
    """Per scheduler and case: the mean average JCT, and its ratios (paired per seed) to
    kube-default's and to the best heuristic's (the lowest mean but dagpilot's) with all on."""
    def jcts(case: str, scheduler: str) -> list[float]:
        return [runs[f"{seed}|{case}|{scheduler}"] for seed in range(seeds)]

    heuristics = [name for name in schedulers if name != "dagpilot"]
    best = min(heuristics, key=lambda name: sum(jcts(ALL_ON, name)))
    rows: dict[str, Any] = {}
    for scheduler in schedulers:
        rows[scheduler] = {case: {
            "avg_jct_h": sum(jcts(case, scheduler)) / seeds / 3600.0,
            "over_naive": _interval(jcts(case, scheduler), jcts(ALL_ON, NAIVE)),
            "over_best": _interval(jcts(case, scheduler), jcts(ALL_ON, best)),
        } for case in SWITCHES}
    return {"seeds": seeds, "target": TARGET, "best_heuristic": best, "rows": rows}


def _interval(values: list[float], baseline: list[float]) -> dict[str, Any]:
    interval = paired_ratio_ci95(values, baseline)
    return {"mean": float("nan"), "ci95": [float("nan")] * 2} if interval is None \
        else interval.as_dict()


def _shown(cell: dict[str, Any]) -> str:
    low, high = cell["ci95"]
    return f"{cell['mean']:.3f} [{low:.3f}, {high:.3f}]"


def markdown(report: dict[str, Any]) -> str:
    best = report["best_heuristic"]
    head = ["scheduler", *(f"{case}: avg JCT h" for case in SWITCHES),
            *(f"{case}: ÷ {NAIVE} all on" for case in SWITCHES),
            f"{UNAVOIDABLE}: ÷ {best} all on"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * len(SWITCHES)
             + "---|" * (len(SWITCHES) + 1)]
    for scheduler, row in report["rows"].items():
        cells = [scheduler, *(f"{row[case]['avg_jct_h']:.3f}" for case in SWITCHES),
                 *(_shown(row[case]["over_naive"]) for case in SWITCHES),
                 _shown(row[UNAVOIDABLE]["over_best"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
