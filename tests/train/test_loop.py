"""A tiny training run end to end: behaviour cloning, PPO, evaluations, checkpoints, the best
one, metrics, publishing; and the same through `dagpilot train`."""

from __future__ import annotations

import csv
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from dagpilot.agent import load_scheduler
from dagpilot.cli import app
from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.errors import SpecError
from dagpilot.policy import PolicyConfig
from dagpilot.registry import RegistryError, verify
from dagpilot.train import CurriculumSettings, TrainConfig, TrainData, publish_model, train
from dagpilot.train.curriculum import Curriculum
from dagpilot.train.loop import TrainResult, _Run
from dagpilot.train.scenarios import (
    EpisodeTask,
    cluster_cores,
    episode_tasks,
    loaded_episode_tasks,
)
from dagpilot.workloads import load

SMALL = PolicyConfig(d_model=16, heads=2, layers=1, feedforward=32, pair_rank=8)
WORKLOAD = "builtin:mlflow:4"
EVAL_HORIZON_H = 0.1  # five arrivals of the pool (cycled) in the one evaluation episode


def tiny(iterations: int = 2, bc_iterations: int = 1, eval_horizon_h: float = EVAL_HORIZON_H,
         eval_episodes: int = 1) -> TrainConfig:
    return TrainConfig(iterations=iterations, episodes_per_iteration=2, replays=2,
                       bc_iterations=bc_iterations, seed=3, checkpoint_every=1, policy=SMALL,
                       eval_episodes=eval_episodes, eval_horizon_h=eval_horizon_h,
                       curriculum=CurriculumSettings(min_jobs=1, max_jobs=2, stages=2))


def data() -> TrainData:
    return TrainData(tuple(load(WORKLOAD)), load_cluster("builtin:small"), (WORKLOAD,),
                     "builtin:small")


@dataclass(frozen=True)
class TinyRun:
    result: TrainResult
    shares: list[float]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> TinyRun:
    shares: list[float] = []
    result = train(tiny(), data(), tmp_path_factory.mktemp("tiny") / "run",
                   command="dagpilot train --test",
                   progress=lambda share, _: shares.append(share))
    return TinyRun(result, shares)


def test_a_tiny_run_writes_metrics_checkpoints_and_a_publishable_model(
        tiny_run: TinyRun, tmp_path: Path) -> None:
    result, shares = tiny_run.result, tiny_run.shares
    every = list(csv.DictReader(result.metrics.read_text().splitlines()))
    assert [(row["phase"], row["iteration"]) for row in every] == [
        ("bc", "0"), ("eval", "0"), ("ppo", "0"), ("eval", "1"), ("ppo", "1"), ("eval", "2")]
    elapsed = [float(row["elapsed_s"]) for row in every]
    assert elapsed == sorted(elapsed) and elapsed[0] > 0
    rows = [row for row in every if row["phase"] != "eval"]
    assert [row["jobs_per_episode"] for row in rows[1:]] == ["1", "2"]  # the curriculum
    assert all(float(row["env_steps"]) > 0 for row in rows)
    assert all(row["entropy"] and row["policy_loss"] for row in rows[1:])
    assert 0.0 <= float(rows[0]["bc_accuracy"]) <= 1.0
    evaluations = [row for row in every if row["phase"] == "eval"]
    for row in evaluations:  # the policy against the best heuristic on fixed episodes
        ratio = float(row["eval_jct_s"]) / float(row["eval_best_heuristic_jct_s"])
        assert float(row["eval_ratio"]) == pytest.approx(ratio, rel=1e-5)  # one episode
    assert len({row["eval_best_heuristic_jct_s"] for row in evaluations}) == 1  # run once
    assert {row["eval_horizon_h"] for row in evaluations} == {str(EVAL_HORIZON_H)}
    curve = result.metrics.parent / "learning_curve.png"
    assert curve.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # behaviour cloning's evaluation is a checkpoint too: it may be the best
    assert [p.name for p in result.checkpoints] == ["iter-0000", "iter-0001", "iter-0002"]
    assert result.best is not None
    for folder in (*result.checkpoints, result.final, result.best):
        assert sorted(f.name for f in folder.iterdir()) == [
            "config.json", "metadata.json", "normaliser.json", "weights.pt"]
    metadata = json.loads((result.final / "metadata.json").read_text())
    assert metadata["command"] == "dagpilot train --test"
    assert metadata["seed"] == 3 and metadata["teacher"] == result.teacher
    assert metadata["data"] == {"workloads": [WORKLOAD], "cluster": "builtin:small",
                                "jobs": 4, "nodes": 6}
    assert metadata["commit"] and metadata["training"]["replays"] == 2
    assert metadata["evaluation"]["ratio"] == pytest.approx(float(evaluations[-1]["eval_ratio"]),
                                                            rel=1e-5)
    assert shares == sorted(shares) and shares[-1] == 1.0
    assert result.env_steps > 0 and result.env_steps_per_s > 0
    publish_model(result.final, tmp_path / "models", "tiny")
    assert verify(tmp_path / "models") == []
    assert load_scheduler(tmp_path / "models").agent.config == SMALL


def test_best_is_the_checkpoint_with_the_lowest_evaluation_ratio(tiny_run: TinyRun) -> None:
    result = tiny_run.result
    ratios = [json.loads((folder / "metadata.json").read_text())["evaluation"]["ratio"]
              for folder in result.checkpoints]
    chosen = ratios.index(min(ratios))  # the earlier on a tie
    assert result.best == result.metrics.parent / "best"
    assert result.selected is not None and result.selected.iteration == chosen
    for name in ("weights.pt", "normaliser.json", "config.json"):
        assert (result.best / name).read_bytes() == (
            result.checkpoints[chosen] / name).read_bytes()
    metadata = json.loads((result.best / "metadata.json").read_text())
    assert metadata.pop("selected") == {"by": "eval_ratio", "iteration": chosen,
                                        "ratio": ratios[chosen]}
    assert metadata == json.loads((result.checkpoints[chosen] / "metadata.json").read_text())
    assert metadata["ppo_iterations_done"] == chosen
    assert sorted(p.name for p in result.metrics.parent.iterdir()) == [
        "best", "checkpoints", "final", "learning_curve.png", "metrics.csv"]  # no scratch left


def test_the_evaluation_episodes_are_loaded_or_with_no_horizon_the_full_size_stage(
        tmp_path: Path) -> None:
    pool = data()

    def evaluation_tasks(config: TrainConfig) -> list[EpisodeTask]:
        return _Run(config, pool, tmp_path, sim=SimSettings(), capacity=cluster_cores,
                    progress=None, command="").evaluation_tasks
    loaded = loaded_episode_tasks(pool.jobs, pool.cluster, seed=3, episodes=2, load=0.8,
                                  horizon_s=EVAL_HORIZON_H * 3600)
    assert evaluation_tasks(tiny(eval_episodes=2)) == loaded
    full_size = Curriculum.of(tiny().curriculum, 1).stages[-1]
    assert evaluation_tasks(tiny(eval_episodes=2, eval_horizon_h=0)) == episode_tasks(
        pool.jobs, pool.cluster, full_size, seed=3, phase="eval", iteration=0, scenarios=2,
        replays=1, load=0.8)
    assert evaluation_tasks(tiny(eval_episodes=0)) == []


def test_without_evaluation_there_is_no_best_and_no_checkpoint_of_behaviour_cloning(
        tmp_path: Path) -> None:
    result = train(tiny(iterations=1, eval_episodes=0), data(), tmp_path / "run")
    assert result.best is None and result.selected is None
    assert [p.name for p in result.checkpoints] == ["iter-0001"]
    assert not (tmp_path / "run" / "best").exists()


@pytest.mark.parametrize("hours", [-0.5, float("nan"), float("inf")])
def test_an_evaluation_horizon_that_is_negative_or_not_a_number_is_refused(hours: float) -> None:
    with pytest.raises(SpecError, match="eval-horizon-h must be 0"):
        tiny(eval_horizon_h=hours)
    with pytest.raises(SpecError, match="ppo-horizon-h must be 0"):
        dataclasses.replace(tiny(), ppo_horizon_h=hours)


def test_ppo_on_loaded_episodes_replays_each_arrival_sequence(tmp_path: Path) -> None:
    config = dataclasses.replace(tiny(iterations=2, eval_episodes=0), ppo_horizon_h=0.1)
    pool = data()
    result = train(config, pool, tmp_path / "run")
    rows = [row for row in csv.DictReader(result.metrics.read_text().splitlines())
            if row["phase"] == "ppo"]
    expected = loaded_episode_tasks(pool.jobs, pool.cluster, seed=3, episodes=1, load=0.8,
                                    horizon_s=360.0, phase="ppo", iteration=0, replays=2)
    assert len(expected) == 2 and expected[0].jobs == expected[1].jobs
    assert expected[0].sim_seed != expected[1].sim_seed  # replays differ in their seeds only
    assert len(expected[0].jobs) > len(pool.jobs)  # the whole pool, cycled: not a curriculum
    assert [row["stage"] for row in rows] == ["-1", "-1"]
    assert [int(row["episodes"]) for row in rows] == [2, 2]
    assert rows[0]["jobs_per_episode"] == str(len(expected[0].jobs))


def test_one_seed_trains_the_same_weights(tmp_path: Path) -> None:
    config = tiny(iterations=1, eval_episodes=0)
    first = train(config, data(), tmp_path / "a")
    again = train(config, data(), tmp_path / "b")
    load_a = torch.load(first.final / "weights.pt", weights_only=True)
    load_b = torch.load(again.final / "weights.pt", weights_only=True)
    assert all(torch.equal(load_a[name], load_b[name]) for name in load_a)
    assert (first.final / "normaliser.json").read_text() == (
        again.final / "normaliser.json").read_text()


def test_without_behaviour_cloning_the_normaliser_is_still_fitted(tmp_path: Path) -> None:
    result = train(tiny(iterations=1, bc_iterations=0, eval_episodes=0), data(),
                   tmp_path / "run")
    stats = json.loads((result.final / "normaliser.json").read_text())
    assert stats["groups"]["node"]["count"] > 0
    rows = list(csv.DictReader(result.metrics.read_text().splitlines()))
    assert rows[0]["phase"] == "bc" and rows[0]["bc_loss"] == ""  # statistics, no imitation


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["train", *args], catch_exceptions=False)
    return result.exit_code, result.output


def train_and_publish(out: Path, models: Path, *evaluation: str) -> str:
    code, output = invoke(
        "--workload", WORKLOAD, "--cluster", "builtin:small", "--iterations", "1",
        "--episodes-per-iteration", "2", "--replays", "2", "--bc-iterations", "1",
        "--min-jobs", "1", "--max-jobs", "1", "--teacher", "fifo", "--seed", "5",
        *evaluation, "--out", str(out), "--publish-to", str(models), "--version", "v1")
    assert code == 0, output
    assert verify(models) == []
    return output


def test_the_train_command_trains_and_publishes_the_best_checkpoint(tmp_path: Path) -> None:
    output = train_and_publish(tmp_path / "run", tmp_path / "models", "--eval-episodes", "1",
                               "--eval-horizon-h", "0.1")
    assert "teacher: fifo" in output and "published v1 (#1)" in output
    assert "the lowest evaluation ratio" in output
    assert (tmp_path / "run" / "metrics.csv").is_file()
    published = json.loads((tmp_path / "models" / "v1" / "metadata.json").read_text())
    assert published["command"].startswith("dagpilot") and published["seed"] == 5
    assert published["training"]["eval_horizon_h"] == 0.1
    assert published["selected"] == json.loads(
        (tmp_path / "run" / "best" / "metadata.json").read_text())["selected"]
    assert (tmp_path / "models" / "v1" / "weights.pt").read_bytes() == (
        tmp_path / "run" / "best" / "weights.pt").read_bytes()


def test_without_evaluation_the_train_command_publishes_the_last_iteration(
        tmp_path: Path) -> None:
    output = train_and_publish(tmp_path / "run", tmp_path / "models", "--eval-episodes", "0")
    assert "the last iteration: no evaluation" in output
    assert (tmp_path / "models" / "v1" / "weights.pt").read_bytes() == (
        tmp_path / "run" / "final" / "weights.pt").read_bytes()


@pytest.mark.parametrize(("args", "error", "message"), [
    (("--publish-to", "m"), SpecError, "go together"),
    (("--backend", "spark"), SpecError, "local or ray"),
    (("--publish-to", "m", "--version", "bad/name"), RegistryError, "version"),
    (("--episodes-per-iteration", "3", "--replays", "2"), SpecError, "multiple of the replays"),
    (("--teacher", "oracle"), SpecError, "unknown teacher"),
    (("--eval-horizon-h", "-1"), SpecError, "eval-horizon-h must be 0"),
    (("--eval-horizon-h", "0.0001"), SpecError, "no arrival within the horizon"),
])
def test_the_train_command_refuses_bad_options_before_training(
        tmp_path: Path, args: tuple[str, ...], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        invoke("--workload", WORKLOAD, "--cluster", "builtin:small",
               "--out", str(tmp_path / "run"), *args)
    assert not (tmp_path / "run").exists()
