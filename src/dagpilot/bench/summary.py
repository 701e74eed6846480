"""`summary.json` (DESIGN.md section 7): built from measured runs, written atomically.

Per scheduler the figures are means over the seeds it finished. `lower_bound` is the mean over
seeds of the per-seed bounds (arrivals differ by seed). `ratios` holds, for every ordered pair
of schedulers "A/B", the per-seed ratio of A's figure to B's over the seeds both finished, and
"A/lower-bound" the per-seed ratio to the bound; each as a mean with its 95 % interval.
Keys beyond the contract (p50/p99, utilisation, ratios to the bound, `interrupted`, ...) are
additions; the contract's keys are always there.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagpilot.bench.bounds import ratio
from dagpilot.bench.results import RunResult
from dagpilot.bench.stats import Interval, paired_ratio_ci95

VERSION = 1
LOWER_BOUND = "lower-bound"
# (ratio key, field of RunMetrics and of LowerBound) of the figures compared in pairs
COMPARED = (("avg_jct", "avg_jct_s"), ("makespan", "makespan_s"))


@dataclass(frozen=True)
class Header:
    """What was run: the inputs of the benchmark as the summary names them."""

    workloads: tuple[str, ...]
    cluster: str
    seeds: tuple[int, ...]
    physics: bool
    arrival: dict[str, Any]
    horizon_s: float | None = None


def build_summary(header: Header, schedulers: Sequence[str], results: Sequence[RunResult],
                  interrupted: bool = False) -> dict[str, Any]:
    """The summary document of the runs that finished."""
    return {
        "version": VERSION,
        "workloads": list(header.workloads),
        "cluster": header.cluster,
        "seeds": list(header.seeds),
        "physics": "on" if header.physics else "off",
        "arrival": header.arrival,
        "horizon_s": header.horizon_s,
        "interrupted": interrupted,
        "runs": len(results),
        "schedulers": {name: scheduler_means(_of(results, name))
                       for name in schedulers if _of(results, name)},
        "lower_bound": bound_means(results),
        "ratios": ratios(schedulers, results),
        "per_seed": [per_seed_row(result) for result in results],
    }


def per_seed_row(result: RunResult) -> dict[str, Any]:
    return {"seed": result.seed, "scheduler": result.scheduler, **_figures(result)}


def scheduler_means(results: Sequence[RunResult]) -> dict[str, Any]:
    """Means over seeds of every figure of one scheduler's runs."""
    rows = [_figures(result) for result in results]
    means: dict[str, Any] = {}
    for key, value in rows[0].items():
        if isinstance(value, bool):
            means[key] = all(row[key] for row in rows)
        else:
            means[key] = math.fsum(row[key] for row in rows) / len(rows)
    means["runs"] = len(rows)
    return means


def bound_means(results: Sequence[RunResult]) -> dict[str, float]:
    per_seed = {result.seed: result.bound for result in results}
    if not per_seed:
        return {"avg_jct_s": 0.0, "makespan_s": 0.0}
    return {"avg_jct_s": math.fsum(b.avg_jct_s for b in per_seed.values()) / len(per_seed),
            "makespan_s": math.fsum(b.makespan_s for b in per_seed.values()) / len(per_seed)}


def ratios(schedulers: Sequence[str], results: Sequence[RunResult]) -> dict[str, Any]:
    """Paired per-seed ratios: every ordered pair of schedulers, and each against the bound."""
    by_seed = {(result.scheduler, result.seed): result for result in results}
    table: dict[str, Any] = {}
    for a in schedulers:
        for b in schedulers:
            if a != b and (entry := _pair(a, b, by_seed)):
                table[f"{a}/{b}"] = entry
        if (entry := _against_bound(_of(results, a))):
            table[f"{a}/{LOWER_BOUND}"] = entry
    return table


def _pair(a: str, b: str, by_seed: dict[tuple[str, int], RunResult]) -> dict[str, Any]:
    seeds = sorted(seed for name, seed in by_seed if name == a and (b, seed) in by_seed)
    entry: dict[str, Any] = {}
    for key, field in COMPARED:
        interval = paired_ratio_ci95([getattr(by_seed[a, s].metrics, field) for s in seeds],
                                     [getattr(by_seed[b, s].metrics, field) for s in seeds])
        if interval is not None:
            entry[key] = interval.as_dict()
    return entry


def paired_in(document: Mapping[str, Any], a: str, b: str, field: str) -> Interval | None:
    """A written summary's per-seed ratio of A's `per_seed` figure to B's (any figure, not only
    those `ratios` holds: peak backlog, drain), over the seeds both finished."""
    rows = {(row["scheduler"], row["seed"]): row for row in document["per_seed"]}
    seeds = sorted(seed for name, seed in rows if name == a and (b, seed) in rows)
    return paired_ratio_ci95([float(rows[a, s][field]) for s in seeds],
                             [float(rows[b, s][field]) for s in seeds])


def _against_bound(results: Sequence[RunResult]) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    for key, field in COMPARED:
        interval = paired_ratio_ci95([getattr(r.metrics, field) for r in results],
                                     [getattr(r.bound, field) for r in results])
        if interval is not None:
            entry[key] = interval.as_dict()
    return entry


def _figures(result: RunResult) -> dict[str, Any]:
    metrics = result.metrics.as_dict()
    return {**metrics,
            "lower_bound_avg_jct_s": result.bound.avg_jct_s,
            "lower_bound_makespan_s": result.bound.makespan_s,
            "avg_jct_to_bound": ratio(result.metrics.avg_jct_s, result.bound.avg_jct_s),
            "makespan_to_bound": ratio(result.metrics.makespan_s, result.bound.makespan_s)}


def _of(results: Sequence[RunResult], scheduler: str) -> list[RunResult]:
    return [result for result in results if result.scheduler == scheduler]


def write_json_atomic(path: Path, document: dict[str, Any]) -> None:
    """Write through a temporary file in the same folder and rename it over `path`, so a reader
    (or a Ctrl-C) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as stream:
            json.dump(document, stream, indent=2, allow_nan=False)
            stream.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
