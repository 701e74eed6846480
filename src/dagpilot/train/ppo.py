"""PPO (Schulman et al., 2017): the only place where gradients flow.

    ratio   = exp(log pi_new(a|s) - log pi_old(a|s))
    L_clip  = -mean(min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A))
    L_value = mean((V(s) - R)^2)
    L       = L_clip + value_coef * L_value - entropy_coef * mean(entropy)

Adam, several epochs of shuffled minibatches over one iteration's steps, gradient norm clipped.
Advantages are normalised per minibatch (when set) before they enter L_clip.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor

from dagpilot.policy import Evaluation, PolicyInput, PolicyNet
from dagpilot.policy.step_table import StepTable
from dagpilot.train.config import PPOSettings
from dagpilot.train.rollout import Episode
from dagpilot.train.targets import ppo_targets


@dataclass(frozen=True)
class Loss:
    total: Tensor
    policy: Tensor
    value: Tensor
    entropy: Tensor
    approx_kl: Tensor  # mean of (old - new) log-probability: how far the policy moved
    clip_fraction: Tensor  # share of steps whose ratio left [1 - eps, 1 + eps]


def ppo_loss(new_log_probs: Tensor, old_log_probs: Tensor, advantages: Tensor, *,
             values: Tensor, returns: Tensor, entropy: Tensor, settings: PPOSettings) -> Loss:
    log_ratio = new_log_probs - old_log_probs
    ratio = log_ratio.exp()
    clipped = ratio.clamp(1.0 - settings.clip, 1.0 + settings.clip)
    policy = -torch.minimum(ratio * advantages, clipped * advantages).mean()
    value = (values - returns).pow(2).mean()
    mean_entropy = entropy.mean()
    total = policy + settings.value_coef * value - settings.entropy_coef * mean_entropy
    with torch.no_grad():
        approx_kl = (-log_ratio).mean()
        clip_fraction = ((ratio - 1.0).abs() > settings.clip).float().mean()
    return Loss(total, policy, value, mean_entropy, approx_kl, clip_fraction)


@dataclass(frozen=True)
class Steps:
    """One iteration's steps, flattened over episodes."""

    inputs: Sequence[PolicyInput]
    actions: npt.NDArray[np.int64]
    old_log_probs: npt.NDArray[np.float64]
    advantages: npt.NDArray[np.float64]
    returns: npt.NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.inputs)

    @classmethod
    def of(cls, episodes: Sequence[Episode], settings: PPOSettings) -> Steps:
        """The episodes' steps, in order, with their PPO targets."""
        targets = ppo_targets(episodes, settings)
        return cls(
            inputs=[item for episode in episodes for item in episode.inputs],
            actions=np.array([a for e in episodes for a in e.actions], dtype=np.int64),
            old_log_probs=np.array([p for e in episodes for p in e.log_probs],
                                   dtype=np.float64),
            advantages=(np.concatenate([t.advantages for t in targets]) if targets
                        else np.zeros(0)),
            returns=np.concatenate([t.returns for t in targets]) if targets else np.zeros(0))


@dataclass(frozen=True)
class UpdateStats:
    policy_loss: float
    value_loss: float
    entropy: float
    approx_kl: float
    clip_fraction: float
    minibatches: int


class PPO:
    """`collate_once` (the default) collates the steps once per update (`StepTable`) and
    evaluates each minibatch from that table (`PolicyNet.evaluate_rows`); without it every
    minibatch goes through `PolicyNet.evaluate`, collated again at every epoch (the reference
    the table is tested against: the same losses and gradients up to float rounding)."""

    def __init__(self, model: PolicyNet, settings: PPOSettings, *,
                 collate_once: bool = True) -> None:
        self.model = model
        self.settings = settings
        self.collate_once = collate_once
        # fused: Adam over all 54 small tensors in one kernel (2 ms a step here, the
        # per-tensor loop 7), the same update up to float rounding
        self.optimizer = torch.optim.Adam(model.parameters(), lr=settings.learning_rate,
                                          fused=True)
        # the clipping's parameters listed once: walking the modules again each minibatch
        # was a third of the clipping's time
        self._parameters = list(model.parameters())

    def update(self, steps: Steps, generator: torch.Generator) -> UpdateStats:
        """`epochs` passes over the steps in shuffled minibatches; means over all of them."""
        self.model.train()
        evaluate = self._evaluator(steps)
        totals = np.zeros(5)
        count = 0
        for _ in range(self.settings.epochs):
            order = torch.randperm(len(steps), generator=generator).tolist()
            for start in range(0, len(order), self.settings.minibatch):
                rows = order[start:start + self.settings.minibatch]
                loss = self._step(steps, rows, evaluate(rows))
                totals += [float(part.detach()) for part in (
                    loss.policy, loss.value, loss.entropy, loss.approx_kl, loss.clip_fraction)]
                count += 1
        policy, value, entropy, approx_kl, clip_fraction = (totals / max(count, 1)).tolist()
        return UpdateStats(policy, value, entropy, approx_kl, clip_fraction, count)

    def _evaluator(self, steps: Steps) -> Callable[[list[int]], Evaluation]:
        """The evaluation of a minibatch's rows, with gradients."""
        if self.collate_once and len(steps):
            table = StepTable.of(steps.inputs, steps.actions.tolist())
            return lambda rows: self.model.evaluate_rows(table, torch.tensor(rows))
        return lambda rows: self.model.evaluate([steps.inputs[i] for i in rows],
                                                steps.actions[rows].tolist())

    def _step(self, steps: Steps, rows: list[int], evaluation: Evaluation) -> Loss:
        advantages = torch.as_tensor(steps.advantages[rows], dtype=torch.float32)
        if self.settings.normalise_advantages and len(rows) > 1:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        loss = ppo_loss(evaluation.log_probs,
                        torch.as_tensor(steps.old_log_probs[rows], dtype=torch.float32),
                        advantages, values=evaluation.values,
                        returns=torch.as_tensor(steps.returns[rows], dtype=torch.float32),
                        entropy=evaluation.entropy, settings=self.settings)
        self.optimizer.zero_grad()
        loss.total.backward()  # type: ignore[no-untyped-call]
        torch.nn.utils.clip_grad_norm_(self._parameters, self.settings.max_grad_norm,
                                       foreach=True)
        self.optimizer.step()
        return loss
