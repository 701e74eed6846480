"""The best checkpoint: the lowest evaluation ratio, copied whole and atomically as best/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.state import Normaliser
from dagpilot.train.best import BestCheckpoint
from dagpilot.train.export import export_model

SMALL = PolicyConfig(d_model=16, heads=2, layers=1, feedforward=32, pair_rank=8)


def checkpoint(root: Path, iteration: int) -> Path:
    return export_model(root / f"iter-{iteration:04d}", PolicyNet.create(SMALL, iteration),
                        Normaliser.fresh(), {"ppo_iterations_done": iteration})


def test_the_lowest_ratio_wins_the_earlier_on_a_tie_and_no_number_never_wins() -> None:
    best = BestCheckpoint()
    for iteration, ratio in enumerate([float("nan"), 1.2, 0.9, 0.9, 1.0, float("nan")]):
        best.offer(Path(f"iter-{iteration}"), iteration, ratio)
    assert best.selected is not None
    assert (best.selected.iteration, best.selected.ratio) == (2, 0.9)
    assert best.selected.folder == Path("iter-2")


def test_nothing_offered_writes_nothing(tmp_path: Path) -> None:
    assert BestCheckpoint().write(tmp_path / "best") is None
    assert list(tmp_path.iterdir()) == []


def test_best_is_the_selected_folder_with_its_selection_in_the_metadata(tmp_path: Path) -> None:
    best = BestCheckpoint()
    for iteration, ratio in enumerate([1.1, 0.95, 1.0]):
        best.offer(checkpoint(tmp_path / "checkpoints", iteration), iteration, ratio)
    (tmp_path / ".best.partial").mkdir()  # left by a run that crashed while writing best/
    (tmp_path / ".best.partial" / "weights.pt").write_bytes(b"half")
    (tmp_path / "best").mkdir()  # an earlier run's
    (tmp_path / "best" / "stale").write_text("x")
    assert best.write(tmp_path / "best") == tmp_path / "best"
    chosen = tmp_path / "checkpoints" / "iter-0001"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best", "checkpoints"]  # no scratch
    assert sorted(p.name for p in (tmp_path / "best").iterdir()) == sorted(
        p.name for p in chosen.iterdir())
    for name in ("weights.pt", "normaliser.json", "config.json"):
        assert (tmp_path / "best" / name).read_bytes() == (chosen / name).read_bytes()
    metadata = json.loads((tmp_path / "best" / "metadata.json").read_text())
    assert metadata.pop("built_with")["torch"] == torch.__version__  # export_model's record
    assert metadata == {"ppo_iterations_done": 1,
                        "selected": {"by": "eval_ratio", "iteration": 1, "ratio": 0.95}}


def test_a_failed_copy_leaves_no_best(tmp_path: Path) -> None:
    best = BestCheckpoint()
    folder = checkpoint(tmp_path / "checkpoints", 0)
    best.offer(folder, 0, 1.0)
    (folder / "metadata.json").write_text("{not json")
    with pytest.raises(json.JSONDecodeError):
        best.write(tmp_path / "best")
    assert not (tmp_path / "best").exists()
