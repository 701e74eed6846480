"""The harness on the real simulator: checks before running, paired runs, Ctrl-C."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from dagpilot.bench.feasibility import NeverFits
from dagpilot.bench.harness import (
    BenchConfig,
    Interrupted,
    arrivals_for,
    plan,
    prepare,
    run_benchmark,
)
from dagpilot.bench.main_job import BASELINES, main_job
from dagpilot.bench.runner import scheduler_registry
from dagpilot.core.config import Settings
from dagpilot.core.errors import SpecError
from dagpilot.schedulers import SCHEDULERS
from dagpilot.workloads.arrivals import ArrivalSpec, Burst
from tests.bench.builders import StopAfter

SMALL = "builtin:small"
POISSON = ArrivalSpec("poisson", 0.8, (Burst(5.0, 600.0, 300.0),))


def config(out_dir: Path, **changes: Any) -> BenchConfig:
    base = BenchConfig(workloads=("builtin:mix:4",), cluster=SMALL,
                       schedulers=("kube-default", "fifo"), seeds=(0,), out_dir=out_dir,
                       arrival=POISSON, horizon_s=1800.0, plots=False)
    return dataclasses.replace(base, **changes)


def test_an_unknown_scheduler_is_refused_before_any_run(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="unknown scheduler") as caught:
        run_benchmark(config(tmp_path / "out", schedulers=("kube-default", "nope")))
    assert "'nope'" in str(caught.value)
    for known in ("kube-default", "fifo", "heft", "cws-rank-min-rr"):
        assert known in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_a_burst_after_the_horizon_and_an_unwritable_folder_are_refused(tmp_path: Path) -> None:
    late = ArrivalSpec("poisson", 0.8, (Burst(17.0, 3600.0, 60.0),))
    with pytest.raises(SpecError, match="after the horizon"):
        run_benchmark(config(tmp_path, arrival=late, horizon_s=1800.0))
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SpecError, match="cannot write"):
        run_benchmark(config(blocker / "out"))


def test_a_bad_workload_spec_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError):
        run_benchmark(config(tmp_path, workloads=("nosuchformat:x",)))


def test_a_task_no_node_can_hold_names_the_task_and_the_largest_node(tmp_path: Path) -> None:
    # one 16-core node without GPUs: the GPU tasks of the mix never fit
    with pytest.raises(NeverFits) as caught:
        run_benchmark(config(tmp_path, workloads=("builtin:mix:20",),
                             cluster="builtin:scale-1"))
    message = str(caught.value)
    assert f"task {caught.value.task_id!r}" in message
    assert "largest node is node-0000 (16 CPU" in message
    assert not (tmp_path / "summary.json").exists()


def test_every_scheduler_of_a_seed_gets_the_same_arrivals(tmp_path: Path) -> None:
    bench = config(tmp_path, seeds=(0, 1))
    prepared = prepare(bench, Settings(), SCHEDULERS)
    tasks = plan(bench, prepared)
    assert [(t.seed, t.scheduler) for t in tasks] == [
        (0, "kube-default"), (0, "fifo"), (1, "kube-default"), (1, "fifo")]
    assert tasks[0].jobs is tasks[1].jobs and tasks[0].bound == tasks[1].bound
    first = [job.arrival_s for job in tasks[0].jobs]
    assert first == [job.arrival_s for job in arrivals_for(0, bench, prepared)]
    assert first != [job.arrival_s for job in tasks[2].jobs]


def test_a_run_writes_the_summary_and_the_plots(tmp_path: Path) -> None:
    summary = run_benchmark(config(tmp_path, plots=True))
    document = json.loads((tmp_path / "summary.json").read_text())
    assert document == summary.document
    assert document["interrupted"] is False
    assert [row["scheduler"] for row in document["per_seed"]] == ["kube-default", "fifo"]
    assert {"fifo/kube-default", "kube-default/lower-bound"} <= set(document["ratios"])
    assert document["arrival"]["kind"] == "poisson"
    for name in ("jct_cdf.png", "backlog.png", "utilisation.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
    for row in document["per_seed"]:
        assert row["avg_jct_s"] >= row["lower_bound_avg_jct_s"] or row["failed_jobs"]


def test_a_ctrl_c_still_writes_what_finished(tmp_path: Path) -> None:
    registry = {"kube-default": SCHEDULERS["kube-default"], "stopper": lambda: StopAfter(5)}
    bench = config(tmp_path, schedulers=("kube-default", "stopper"), plots=True)
    with pytest.raises(Interrupted) as caught:
        run_benchmark(bench, registry=registry)
    assert isinstance(caught.value, KeyboardInterrupt)
    document = json.loads((tmp_path / "summary.json").read_text())
    assert document["interrupted"] is True
    assert [row["scheduler"] for row in document["per_seed"]] == ["kube-default"]
    assert set(document["schedulers"]) == {"kube-default"}
    assert caught.value.summary.document == document
    assert (tmp_path / "backlog.png").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_worker_processes_give_the_same_results(tmp_path: Path) -> None:
    here = run_benchmark(config(tmp_path / "one"))
    spread = run_benchmark(config(tmp_path / "two", workers=2))
    wall_clock = {"decisions_per_s", "wall_s"}

    def figures(document: dict[str, object]) -> list[dict[str, object]]:
        rows = document["per_seed"]
        assert isinstance(rows, list)
        return [{k: v for k, v in row.items() if k not in wall_clock} for row in rows]

    assert figures(here.document) == figures(spread.document)


def test_the_main_job_names_only_registered_baselines_and_its_inputs_fit(
        tmp_path: Path) -> None:
    job = main_job(tmp_path)
    assert set(BASELINES) <= set(SCHEDULERS)
    assert job.schedulers == (*BASELINES, "dagpilot")  # the shipped model beside the baselines
    prepared = prepare(job, Settings(), scheduler_registry())  # raises if anything is wrong
    assert prepared.cluster.name == "default"
    assert job.arrival.kind == "poisson" and job.arrival.bursts[0].factor == 17
    burst = job.arrival.bursts[0]
    assert job.horizon_s is not None
    assert burst.start_s + burst.duration_s / 2 == pytest.approx(job.horizon_s / 2)
