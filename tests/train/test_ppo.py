"""The clipped PPO loss on a 4-step episode with known ratios and advantages, and an update
that moves the policy the way the advantages say."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.train.config import PPOSettings
from dagpilot.train.ppo import PPO, Loss, Steps, UpdateStats, ppo_loss
from tests.policy.builders import policy_input

RATIOS = [0.5, 0.7, 1.3, 1.1]
CONFIG = PolicyConfig(d_model=16, heads=2, layers=2, feedforward=32, pair_rank=8)
ADVANTAGES = [1.0, -1.0, 2.0, -0.5]


def loss_of(ratios: list[float]) -> tuple[Loss, torch.Tensor]:
    new = torch.tensor([math.log(r) for r in ratios], requires_grad=True)
    loss = ppo_loss(new, torch.zeros(4), torch.tensor(ADVANTAGES),
                    values=torch.tensor([1.0, 2.0, 3.0, 4.0]),
                    returns=torch.tensor([1.5, 2.0, 2.0, 4.0]),
                    entropy=torch.tensor([1.0, 2.0, 3.0, 2.0]),
                    settings=PPOSettings(clip=0.2, value_coef=0.5, entropy_coef=0.01))
    return loss, new


def test_the_clipped_surrogate_by_hand() -> None:
    """eps = 0.2:
    step  ratio  A     r x A   clip(r) x A   min
    0     0.5    1     0.5     0.8           0.5    (below the range, A > 0: unclipped)
    1     0.7    -1    -0.7    -0.8          -0.8   (below the range, A < 0: clipped)
    2     1.3    2     2.6     2.4           2.4    (above the range, A > 0: clipped)
    3     1.1    -0.5  -0.55   -0.55         -0.55  (inside the range)
    policy loss = -(0.5 - 0.8 + 2.4 - 0.55) / 4 = -0.3875; 3 of 4 ratios outside the range.
    value loss = mean of (1 - 1.5)^2, 0, (3 - 2)^2, 0 = 0.3125; mean entropy = 2.
    total = -0.3875 + 0.5 x 0.3125 - 0.01 x 2 = -0.25125.
    approx KL = -mean(log r) = -(ln 0.5 + ln 0.7 + ln 1.3 + ln 1.1) / 4 = 0.173037.
    """
    loss, _ = loss_of(RATIOS)
    assert float(loss.policy.detach()) == pytest.approx(-0.3875)
    assert float(loss.value.detach()) == pytest.approx(0.3125)
    assert float(loss.entropy.detach()) == pytest.approx(2.0)
    assert float(loss.total.detach()) == pytest.approx(-0.25125)
    assert float(loss.clip_fraction.detach()) == pytest.approx(0.75)
    assert float(loss.approx_kl.detach()) == pytest.approx(0.173037, abs=1e-6)


def test_clipped_steps_pass_no_gradient() -> None:
    """d(policy loss)/d(log pi_i) = -r_i A_i / 4 where the unclipped term is the minimum:
    step 0: -0.5 x 1 / 4 = -0.125; steps 1 and 2: clipped, 0; step 3: -1.1 x -0.5 / 4 = 0.1375."""
    loss, new = loss_of(RATIOS)
    loss.policy.backward()
    assert new.grad is not None
    assert new.grad.tolist() == pytest.approx([-0.125, 0.0, 0.0, 0.1375])


def test_ratios_of_one_are_the_plain_policy_gradient() -> None:
    loss, _ = loss_of([1.0] * 4)
    assert float(loss.policy.detach()) == pytest.approx(-np.mean(ADVANTAGES))
    assert float(loss.clip_fraction.detach()) == 0.0


def test_an_update_makes_an_advantageous_action_likelier() -> None:
    net = PolicyNet.create(PolicyConfig(d_model=16, heads=2, layers=1, feedforward=32,
                                        pair_rank=8), seed=0)
    item = policy_input(2, 3, seed=1, feasible_share=1.0)
    good, bad = 1, 4
    with torch.no_grad():
        before = net.evaluate([item, item], [good, bad]).log_probs
    steps = Steps([item, item], np.array([good, bad]), before.double().numpy(),
                  advantages=np.array([1.0, -1.0]), returns=np.zeros(2))
    stats = PPO(net, PPOSettings(learning_rate=1e-2, epochs=5, minibatch=2)).update(
        steps, torch.Generator().manual_seed(0))
    with torch.no_grad():
        after = net.evaluate([item, item], [good, bad]).log_probs
    assert after[0] > before[0] and after[1] < before[1]
    assert stats.minibatches == 5
    assert stats.approx_kl != 0.0


def _update(collate_once: bool, steps: Steps) -> tuple[UpdateStats, dict[str, torch.Tensor]]:
    net = PolicyNet.create(CONFIG, seed=3)
    stats = PPO(net, PPOSettings(learning_rate=1e-2, epochs=3, minibatch=3),
                collate_once=collate_once).update(steps, torch.Generator().manual_seed(5))
    return stats, {name: _without_cancelled_biases(name, parameter.detach())
                   for name, parameter in net.named_parameters()}


def _without_cancelled_biases(name: str, parameter: torch.Tensor) -> torch.Tensor:
    """Two parameters add one amount to every logit they touch, which the softmax cancels:
    the attention's key bias (to each score of a query) and the pair scorer's constant (to
    each logit of a decision; the critic does not read it). Their true gradient is 0 and what
    they get is rounding noise, which Adam scales up to full steps of either sign; they are
    left out (the query and value thirds of the attention's bias stay)."""
    if name == "pairs.bias.bias":
        return parameter[:0]
    if not name.endswith("self_attn.in_proj_bias"):
        return parameter
    third = len(parameter) // 3
    return torch.cat([parameter[:third], parameter[2 * third:]])


def test_collating_once_updates_as_collating_every_minibatch() -> None:
    """The same minibatches in the same order, the same losses and the same weights after
    three epochs (up to float rounding) whether each minibatch is collated afresh or
    gathered from the iteration's StepTable; the steps repeat decisions (shared graphs and
    node rows) and differ in size."""
    items = [policy_input(3, 5, seed=1), policy_input(1, 5, slots=1, seed=2),
             policy_input(5, 4, jobs=2, seed=3), policy_input(2, 5, seed=4)]
    inputs = [*items, items[0], items[2], items[0]]
    rng = np.random.default_rng(0)
    actions = np.array([rng.choice(np.flatnonzero(item.feasible.ravel())) for item in inputs])
    steps = Steps(inputs, actions, old_log_probs=rng.normal(-2.0, 0.5, len(inputs)),
                  advantages=rng.normal(0.0, 1.0, len(inputs)),
                  returns=rng.normal(0.0, 1.0, len(inputs)))
    (reference, before), (stats, after) = _update(False, steps), _update(True, steps)
    assert stats.minibatches == reference.minibatches == 9
    for field in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction"):
        assert getattr(stats, field) == pytest.approx(getattr(reference, field), rel=1e-5,
                                                      abs=1e-7), field
    initial = PolicyNet.create(CONFIG, seed=3).state_dict()
    assert any(not torch.equal(after[name], _without_cancelled_biases(name, initial[name]))
               for name in after)
    for name, moved in after.items():
        torch.testing.assert_close(moved, before[name], rtol=1e-5, atol=1e-6, msg=name)


def test_every_minibatch_step_clips_the_gradients_of_all_parameters() -> None:
    """The step the optimiser takes sees gradients whose total norm is `max_grad_norm` at
    most, over every parameter of the network (the clipping's own list of them)."""
    net = PolicyNet.create(CONFIG, seed=4)
    items = [policy_input(3, 5, seed=1), policy_input(2, 5, jobs=2, seed=2)]
    steps = Steps(items, np.array([0, 1]), old_log_probs=np.array([-3.0, -2.0]),
                  advantages=np.array([50.0, -50.0]), returns=np.array([30.0, -30.0]))
    ppo = PPO(net, PPOSettings(epochs=2, minibatch=2, max_grad_norm=1e-3))
    norms: list[float] = []
    step = ppo.optimizer.step

    def seen(*args: object, **kwargs: object) -> None:
        grads = [p.grad for p in net.parameters() if p.grad is not None]
        assert len(grads) == len(list(net.parameters()))
        norms.append(float(torch.linalg.vector_norm(torch.stack(
            [torch.linalg.vector_norm(grad) for grad in grads]))))
        step(*args, **kwargs)

    ppo.optimizer.step = seen  # type: ignore[method-assign]
    ppo.update(steps, torch.Generator().manual_seed(0))
    assert len(norms) == 2 and all(norm <= 1e-3 * (1 + 1e-5) for norm in norms)
