"""The model in service follows the registry's `current`: a new version serves from the next
decision on (none lost, none made twice); one that fails to load leaves the previous one
serving, with the reason; no model at all means every decision is the fallback's until one
appears."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from dagpilot.registry import read_current, rollback
from dagpilot.serve.deadline import DeadlineRunner
from dagpilot.serve.decisions import FALLBACK, MODEL, Decider
from dagpilot.serve.fallback import Fallback
from dagpilot.serve.model_reload import ModelPolicy
from tests.serve.test_decisions import view
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]

SHIPPED = Path(__file__).resolve().parents[2] / "models"


def registry(tmp_path: Path) -> Path:
    root = tmp_path / "models"
    shutil.copytree(SHIPPED, root, symlinks=True)
    return root


def point_current(root: Path, version: str) -> None:
    scratch = root / "current.tmp"
    scratch.symlink_to(version)
    os.replace(scratch, root / "current")


def test_a_new_current_serves_from_the_next_decision(tmp_path: Path) -> None:
    root = registry(tmp_path)
    models = ModelPolicy(root)
    runner = DeadlineRunner(5.0)
    decider = Decider(models, runner, Fallback())
    first = read_current(root)
    before = decider.decide(view(2.0))
    switched = rollback(root)
    models.refresh()
    after = decider.decide(view(2.0))
    runner.close()
    assert (before.outcome, before.version) == (MODEL, first)
    assert (after.outcome, after.version) == (MODEL, switched.current) and switched.current != first
    assert models.reloads == 2 and models.load_error is None


def test_a_current_that_fails_to_load_leaves_the_previous_model_serving(
        tmp_path: Path) -> None:
    root = registry(tmp_path)
    models = ModelPolicy(root)
    serving = models.current()
    assert serving is not None
    broken = next(p.name for p in root.iterdir() if p.is_dir() and p.name != serving.version)
    (root / broken / "weights.pt").write_bytes(b"not the published bytes")
    point_current(root, broken)
    models.refresh()
    assert models.current() is serving and models.load_error is not None
    assert "weights.pt" in models.load_error


def test_without_a_model_the_fallback_decides_until_one_is_published(tmp_path: Path) -> None:
    root = tmp_path / "models"
    models = ModelPolicy(root)
    runner = DeadlineRunner(5.0)
    decider = Decider(models, runner, Fallback())
    assert models.current() is None and models.load_error is not None
    assert decider.decide(view(2.0)).outcome == FALLBACK
    shutil.copytree(SHIPPED, root, symlinks=True)
    models.refresh()
    assert decider.decide(view(2.0)).outcome == MODEL
    runner.close()
