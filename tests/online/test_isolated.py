"""The fine-tune for real in its own spawned, pinned process (online.worker.run_isolated), and
the validation gate judging what it produced, against a real registry in a temp dir. Budgets
are small: one PPO iteration on short scenarios (at least one always runs)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
import torch

from dagpilot.journal import Journal
from dagpilot.online import worker
from dagpilot.online.adapter import Adapter
from dagpilot.online.config import AdapterSettings, OnlineConfig
from dagpilot.online.drift import Drift
from dagpilot.online.interval import paired_ratio_interval
from dagpilot.online.worker import FineTuneFailed, FineTuneJob, run_isolated
from dagpilot.online.world import serving_model
from dagpilot.registry import load_version, read_current
from dagpilot.state import FEATURE_SCHEMA_VERSION

SMALL = AdapterSettings(budget_s=2.0, scenarios=1, replays=2, horizon_h=0.2,
                        gate_horizon_h=0.2, validation_seeds=3, learning_rate=1e-2)
DRIFT = Drift("train", count=5, ratio=1.5, first_t=0.0, last_t=1.0)
LAST_CPU = max(os.sched_getaffinity(0))


def test_the_fine_tune_runs_pinned_in_its_own_process(registry: Path) -> None:
    result = run_isolated(FineTuneJob(registry, "base", DRIFT, SMALL, seed=1), {LAST_CPU})
    assert result.cpus == (LAST_CPU,)  # the child's own affinity, as it saw it
    assert result.iterations >= 1 and result.env_steps > 0
    serving, _ = serving_model(registry, "base")
    before = serving.state_dict()
    assert result.state.keys() == before.keys()
    assert all(bool(tensor.isfinite().all()) for tensor in result.state.values())
    changed = {k for k in before if not torch.equal(before[k], result.state[k])}
    assert changed and changed <= {"pairs.query.weight", "pairs.key.weight"}


def test_a_failing_child_reports_its_reason(registry: Path) -> None:
    no_arrivals = AdapterSettings(budget_s=2.0, scenarios=1, replays=2, horizon_h=1e-4)
    with pytest.raises(FineTuneFailed, match=r"exited with 1: .*no arrival within the horizon"):
        run_isolated(FineTuneJob(registry, "base", DRIFT, no_arrivals), {LAST_CPU})


def test_a_child_past_its_budget_is_killed(registry: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "START_GRACE_S", 0.0)  # the child cannot even import torch
    tiny = AdapterSettings(budget_s=0.05, scenarios=1, replays=2, horizon_h=0.05)
    with pytest.raises(FineTuneFailed, match=r"ran past its budget of 0\.05 s"):
        run_isolated(FineTuneJob(registry, "base", DRIFT, tiny), {LAST_CPU})


def test_the_gate_judges_a_real_fine_tune(registry: Path, tmp_path: Path,
                                          request: pytest.FixtureRequest) -> None:
    journal = Journal(tmp_path / "journal.jsonl")
    request.addfinalizer(journal.close)
    for index in range(5):  # mlflow's `train` tasks run 1.5x their prediction
        journal.write("feedback", {"pod_uid": f"u{index}", "task_class": "train",
                                   "t": 1000.0 + index,  # the fine-tune's seed: fixed
                                   "runtime_s": 150.0, "predicted": {"runtime_s": 100.0}})
    adapter = Adapter(OnlineConfig(adapter=SMALL), journal_path=journal.path, models=registry,
                      state=tmp_path / "state", cpus={LAST_CPU})  # the real run_isolated
    report = adapter.cycle()
    gate = report.gate
    assert gate is not None, report.detail  # it got as far as the gate
    assert len(gate.candidate_jct_s) == len(gate.serving_jct_s) == SMALL.validation_seeds
    assert all(math.isfinite(j) and j > 0 for j in gate.candidate_jct_s + gate.serving_jct_s)
    assert gate.interval == paired_ratio_interval(gate.candidate_jct_s, gate.serving_jct_s)
    if gate.passed:  # published atomically, and loadable as serving loads it
        assert report.action == "published" and report.version == read_current(registry)
        assert report.version is not None
        loaded = load_version(registry, report.version, FEATURE_SCHEMA_VERSION)
        assert loaded.metadata["online"]["task_class"] == "train"
        assert adapter.breaker.state.pending == report.version
    else:  # refused: nothing published, one failure counted
        assert report.action == "failed" and "gate: JCT ratio upper bound" in report.detail
        assert read_current(registry) == "base"
        assert adapter.breaker.state.failures == 1
