"""A tiny training run end to end: behaviour cloning, PPO, checkpoints, metrics, publishing;
and the same through `dagpilot train`."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from dagpilot.agent import load_scheduler
from dagpilot.cli import app
from dagpilot.clusters import load_cluster
from dagpilot.core.errors import SpecError
from dagpilot.policy import PolicyConfig
from dagpilot.registry import RegistryError, verify
from dagpilot.train import CurriculumSettings, TrainConfig, TrainData, publish_model, train
from dagpilot.workloads import load

SMALL = PolicyConfig(d_model=16, heads=2, layers=1, feedforward=32, pair_rank=8)
WORKLOAD = "builtin:mlflow:4"


def tiny(iterations: int = 2, bc_iterations: int = 1) -> TrainConfig:
    return TrainConfig(iterations=iterations, episodes_per_iteration=2, replays=2,
                       bc_iterations=bc_iterations, seed=3, checkpoint_every=1, policy=SMALL,
                       eval_episodes=1,
                       curriculum=CurriculumSettings(min_jobs=1, max_jobs=2, stages=2))


def data() -> TrainData:
    return TrainData(tuple(load(WORKLOAD)), load_cluster("builtin:small"), (WORKLOAD,),
                     "builtin:small")


def test_a_tiny_run_writes_metrics_checkpoints_and_a_publishable_model(tmp_path: Path) -> None:
    shares: list[float] = []
    result = train(tiny(), data(), tmp_path / "run", command="dagpilot train --test",
                   progress=lambda share, _: shares.append(share))
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
    assert (tmp_path / "run" / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in result.checkpoints] == ["iter-0001", "iter-0002"]
    for folder in (*result.checkpoints, result.final):
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


def test_one_seed_trains_the_same_weights(tmp_path: Path) -> None:
    config = tiny(iterations=1)
    first = train(config, data(), tmp_path / "a")
    again = train(config, data(), tmp_path / "b")
    load_a = torch.load(first.final / "weights.pt", weights_only=True)
    load_b = torch.load(again.final / "weights.pt", weights_only=True)
    assert all(torch.equal(load_a[name], load_b[name]) for name in load_a)
    assert (first.final / "normaliser.json").read_text() == (
        again.final / "normaliser.json").read_text()


def test_without_behaviour_cloning_the_normaliser_is_still_fitted(tmp_path: Path) -> None:
    result = train(tiny(iterations=1, bc_iterations=0), data(), tmp_path / "run")
    stats = json.loads((result.final / "normaliser.json").read_text())
    assert stats["groups"]["node"]["count"] > 0
    rows = list(csv.DictReader(result.metrics.read_text().splitlines()))
    assert rows[0]["phase"] == "bc" and rows[0]["bc_loss"] == ""  # statistics, no imitation


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["train", *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_the_train_command_trains_and_publishes(tmp_path: Path) -> None:
    code, output = invoke(
        "--workload", WORKLOAD, "--cluster", "builtin:small", "--iterations", "1",
        "--episodes-per-iteration", "2", "--replays", "2", "--bc-iterations", "1",
        "--min-jobs", "1", "--max-jobs", "1", "--teacher", "fifo", "--seed", "5",
        "--out", str(tmp_path / "run"), "--publish-to", str(tmp_path / "models"),
        "--version", "v1")
    assert code == 0, output
    assert "teacher: fifo" in output and "published v1 (#1)" in output
    assert (tmp_path / "run" / "metrics.csv").is_file()
    assert verify(tmp_path / "models") == []
    metadata = json.loads((tmp_path / "models" / "v1" / "metadata.json").read_text())
    assert metadata["command"].startswith("dagpilot") and metadata["seed"] == 5


@pytest.mark.parametrize(("args", "error", "message"), [
    (("--publish-to", "m"), SpecError, "go together"),
    (("--backend", "spark"), SpecError, "local or ray"),
    (("--publish-to", "m", "--version", "bad/name"), RegistryError, "version"),
    (("--episodes-per-iteration", "3", "--replays", "2"), SpecError, "multiple of the replays"),
    (("--teacher", "oracle"), SpecError, "unknown teacher"),
])
def test_the_train_command_refuses_bad_options_before_training(
        tmp_path: Path, args: tuple[str, ...], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        invoke("--workload", WORKLOAD, "--cluster", "builtin:small",
               "--out", str(tmp_path / "run"), *args)
    assert not (tmp_path / "run").exists()
