"""summary.json: the keys of DESIGN.md section 7, paired ratios, atomic writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dagpilot.bench.bounds import LowerBound
from dagpilot.bench.results import RunResult
from dagpilot.bench.summary import Header, build_summary, write_json_atomic
from dagpilot.sim.record import JobRecord
from tests.bench.builders import record

TOP_KEYS = {"version", "workloads", "cluster", "seeds", "physics", "schedulers", "lower_bound",
            "ratios", "per_seed"}
SCHEDULER_KEYS = {"avg_jct_s", "p95_jct_s", "makespan_s", "avg_slowdown", "oom_kills",
                  "peak_backlog", "drain_s", "decisions_per_s"}
HEADER = Header(("builtin:mix",), "builtin:small", (0, 1), True,
                {"kind": "poisson", "load": 0.8, "bursts": []})


def result(scheduler: str, seed: int, jct: float) -> RunResult:
    jobs = [JobRecord("j", 0.0, jct, critical_path_s=10.0, work_core_s=1.0)]
    run = record(scheduler, seed, jobs=jobs, backlog=[(0.0, 1)], end_s=jct)
    return RunResult.measure(scheduler, run, LowerBound(10.0, 10.0))


def summary() -> dict[str, Any]:
    results = [result("kube-default", 0, 100.0), result("fifo", 0, 50.0),
               result("kube-default", 1, 100.0), result("fifo", 1, 100.0)]
    return build_summary(HEADER, ("kube-default", "fifo"), results)


def test_the_contract_keys_are_all_there() -> None:
    document = summary()
    assert set(document) >= TOP_KEYS
    assert document["version"] == 1
    assert document["physics"] == "on"
    assert document["seeds"] == [0, 1]
    assert set(document["lower_bound"]) == {"avg_jct_s", "makespan_s"}
    for figures in document["schedulers"].values():
        assert set(figures) >= SCHEDULER_KEYS
    for row in document["per_seed"]:
        assert set(row) >= {"seed", "scheduler"} | SCHEDULER_KEYS
    for entry in document["ratios"].values():
        assert set(entry) == {"avg_jct", "makespan"}
        for figure in entry.values():
            assert set(figure) == {"mean", "ci95"}
            assert len(figure["ci95"]) == 2


def test_ratios_are_paired_per_seed() -> None:
    ratios = summary()["ratios"]
    assert set(ratios) == {"fifo/kube-default", "kube-default/fifo", "fifo/lower-bound",
                           "kube-default/lower-bound"}
    fifo = ratios["fifo/kube-default"]["avg_jct"]
    assert fifo["mean"] == pytest.approx(0.75)  # seeds: 50/100 and 100/100
    low, high = fifo["ci95"]
    assert low < 0.75 < high
    assert ratios["kube-default/lower-bound"]["makespan"]["mean"] == pytest.approx(10.0)


def test_scheduler_figures_are_means_over_seeds() -> None:
    fifo = summary()["schedulers"]["fifo"]
    assert fifo["avg_jct_s"] == pytest.approx(75.0)
    assert fifo["runs"] == 2


def test_json_is_written_atomically(tmp_path: Path) -> None:
    path = tmp_path / "out" / "summary.json"
    write_json_atomic(path, summary())
    write_json_atomic(path, {"version": 1})
    assert json.loads(path.read_text()) == {"version": 1}
    assert [p.name for p in path.parent.iterdir()] == ["summary.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    write_json_atomic(path, {"version": 1})
    with pytest.raises(ValueError, match="Out of range float"):
        write_json_atomic(path, {"bad": float("nan")})
    assert json.loads(path.read_text()) == {"version": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]
