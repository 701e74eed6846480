"""LoRA on the actor's last two layers: only the adapters train, the merge is exact."""

from __future__ import annotations

import copy
import time

import pytest
import torch

from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.online.config import OBJECTIVES, AdapterSettings
from dagpilot.online.finetune import fine_tune
from dagpilot.online.lora import attach, merged_state, trainable
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.state import Normaliser
from dagpilot.workloads import load

SMALL = PolicyConfig(d_model=16, heads=2, layers=1, feedforward=32, pair_rank=8)


def test_adapters_start_at_zero_and_only_they_require_gradients() -> None:
    net = PolicyNet.create(SMALL, seed=1)
    before = copy.deepcopy(net.state_dict())
    adapters = attach(net, rank=2)
    assert {id(p) for p in net.parameters() if p.requires_grad} == {
        id(p) for p in trainable(adapters)}
    merged = merged_state(net)
    assert merged.keys() == before.keys()
    assert all(torch.equal(merged[k], before[k]) for k in before)  # B = 0: no change yet


def test_the_merged_state_computes_what_the_adapted_network_computes() -> None:
    net = PolicyNet.create(SMALL, seed=1)
    adapters = attach(net, rank=2)
    with torch.no_grad():
        for adapter in adapters:
            adapter.lora_b.normal_(std=0.5)
    plain = PolicyNet.from_state(SMALL, merged_state(net))  # strict: same keys and shapes
    x = torch.randn(3, SMALL.d_model)
    for name, adapter in zip(("query", "key"), adapters, strict=True):
        layer = getattr(plain.pairs, name)
        assert not torch.allclose(layer(x), adapter.base(x))
        torch.testing.assert_close(layer(x), adapter(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_a_fine_tune_moves_only_the_last_two_layers_within_its_deadline(objective: str) -> None:
    net = PolicyNet.create(SMALL, seed=2)
    jobs = load("builtin:mlflow:4")
    settings = AdapterSettings(scenarios=1, replays=2, horizon_h=0.05, learning_rate=1e-2,
                               objective=objective)
    started = time.time()
    result = fine_tune(net, Normaliser.fresh(), jobs, load_cluster("builtin:small"),
                       sim=SimSettings(), settings=settings, seed=0, deadline=started)
    assert result.iterations == 1  # a deadline already past still runs one iteration
    before = net.state_dict()
    changed = {k for k in before if not torch.equal(before[k], result.state[k])}
    assert changed and changed <= {"pairs.query.weight", "pairs.key.weight"}


def test_a_fine_tune_never_touches_the_model_it_was_given() -> None:
    net = PolicyNet.create(SMALL, seed=3)
    before = copy.deepcopy(net.state_dict())
    fine_tune(net, Normaliser.fresh(), load("builtin:mlflow:4"), load_cluster("builtin:small"),
              sim=SimSettings(), settings=AdapterSettings(scenarios=1, replays=2,
                                                          horizon_h=0.05),
              seed=0, deadline=0.0)
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    assert not any(isinstance(m, torch.nn.Module) and hasattr(m, "lora_a")
                   for m in net.modules())
