"""The learning curve's measure: censored average JCT, the evaluator, the PNG."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.sim import RunRecord
from dagpilot.sim.record import JobRecord
from dagpilot.state import Normaliser
from dagpilot.train.curve import plot_learning_curve
from dagpilot.train.evaluation import Evaluator, censored_avg_jct
from dagpilot.train.metrics import MetricsLog
from dagpilot.train.scenarios import EpisodeTask
from dagpilot.workloads import load


def test_an_unfinished_job_counts_until_the_end_and_a_failed_one_plus_its_rerun() -> None:
    record = RunRecord("x", 0, True, end_s=1000.0)
    record.jobs = [JobRecord("a", 100.0, 400.0, 10.0, 1.0),
                   JobRecord("b", 200.0, None, 10.0, 1.0)]
    assert censored_avg_jct(record) == pytest.approx((300.0 + 800.0) / 2)
    record.jobs.append(JobRecord("c", 500.0, None, 50.0, 1.0, failed=True))
    assert censored_avg_jct(record) == pytest.approx((300.0 + 800.0 + 500.0 + 50.0) / 3)


def test_the_best_heuristic_is_the_lowest_mean_and_the_policy_runs_on_the_same_episodes(
        ) -> None:
    jobs = tuple(load("builtin:mlflow:3"))
    tasks = [EpisodeTask(0, 0, jobs, 5, 6), EpisodeTask(1, 0, jobs, 7, 8)]
    evaluator = Evaluator(tasks, ("kube-default", "fifo", "tetris"),
                          load_cluster("builtin:small"), SimSettings())
    means = {name: float(jct.mean()) for name, jct in evaluator.heuristic_jct_s.items()}
    assert evaluator.best == min(means, key=lambda name: means[name])
    model = PolicyNet.create(PolicyConfig(d_model=16, heads=2, layers=1, feedforward=32,
                                          pair_rank=8), seed=0)
    model.train()
    first = evaluator.evaluate(model, Normaliser.fresh())
    assert model.training  # its mode is given back
    assert evaluator.evaluate(model, Normaliser.fresh()) == first  # greedy: no draw
    assert first.best_heuristic_jct_s == pytest.approx(means[evaluator.best])
    assert first.policy_jct_s > 0 and first.ratio > 0


def test_no_curve_before_the_first_evaluation(tmp_path: Path) -> None:
    log = MetricsLog(tmp_path / "metrics.csv")
    log.write({"phase": "bc", "iteration": 0, "elapsed_s": 1.0})
    assert plot_learning_curve(log.path, tmp_path / "curve.png") is None
    assert not (tmp_path / "curve.png").exists()
    log.write({"phase": "eval", "iteration": 0, "elapsed_s": 2.0, "eval_ratio": 1.2,
               "eval_best_heuristic": "tetris"})
    assert plot_learning_curve(log.path, tmp_path / "curve.png") == tmp_path / "curve.png"
    assert (tmp_path / "curve.png").stat().st_size > 1000
