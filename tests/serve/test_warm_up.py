"""A model is warmed up before it serves: the warm-up changes nothing the agent decides or
explains afterwards on a live-like run, and a policy that raises during it is refused like a
model that does not load (the one in service stays)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.agent import Agent, agent_from_files
from dagpilot.registry import load_current, read_current, rollback
from dagpilot.serve import model_reload
from dagpilot.serve.model_reload import ModelPolicy, greedy_policy
from dagpilot.serve.warm_up import warm_up, warm_view
from dagpilot.state import FEATURE_SCHEMA_VERSION
from tests.serve.test_model_reload import SHIPPED, registry
from tests.state.sim_views import busy_default
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]


def shipped_agent() -> Agent:
    model = load_current(SHIPPED, FEATURE_SCHEMA_VERSION)
    return agent_from_files(model.state_dict, model.normaliser, model.config)


def raising(policy: object) -> float:
    raise RuntimeError("the policy raised on its first decision")


def test_a_warmed_agent_decides_and_explains_as_a_cold_one_on_a_live_like_run() -> None:
    cold = greedy_policy(shipped_agent())
    warm = model_reload.serving(load_current(SHIPPED, FEATURE_SCHEMA_VERSION)).policy
    env, view, _ = busy_default("builtin:mix:30", seed=3)
    assert view.cluster is not warm_view().cluster
    compared = 0
    for _ in range(120):
        ours, theirs = cold(view), warm(view)
        assert (theirs.action, theirs.log_prob, theirs.placement) == (
            ours.action, ours.log_prob, ours.placement)
        compared += ours.placement is not None
        view, _, done, _ = env.step(ours.placement)
        if done:
            break
    assert compared > 50


def test_a_policy_that_raises_while_warming_up_is_refused_and_the_previous_one_stays(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = registry(tmp_path)
    models = ModelPolicy(root)
    serving = models.current()
    assert serving is not None and serving.version == read_current(root)

    monkeypatch.setattr(model_reload, "warm_up", raising)
    rollback(root)
    models.refresh()
    assert models.current() is serving
    assert models.load_error is not None and "first decision" in models.load_error


def test_a_first_load_that_fails_its_warm_up_is_tried_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = registry(tmp_path)
    monkeypatch.setattr(model_reload, "warm_up", raising)
    models = ModelPolicy(root)
    assert models.current() is None and "first decision" in (models.load_error or "")
    monkeypatch.setattr(model_reload, "warm_up", warm_up)
    models.refresh()
    serving = models.current()
    assert serving is not None and serving.version == read_current(root)
