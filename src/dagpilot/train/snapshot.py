"""PolicySnapshot: what a rollout worker needs to act as the learner's current policy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from dagpilot.agent import Agent
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.state import Normaliser


@dataclass(frozen=True)
class PolicySnapshot:
    """Weights (CPU tensors), network sizes and normaliser: plain data, cheap to pickle."""

    config: PolicyConfig
    state_dict: Mapping[str, torch.Tensor]
    normaliser: Normaliser

    @classmethod
    def of(cls, model: PolicyNet, normaliser: Normaliser) -> PolicySnapshot:
        state = {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}
        return cls(model.config, state, normaliser)

    def agent(self) -> Agent:
        """A sampling agent (no explanations: training never reads them)."""
        return Agent(PolicyNet.from_state(self.config, self.state_dict), self.normaliser,
                     explain=False)

    def agents(self, count: int) -> tuple[PolicyNet, list[Agent]]:
        """One network and `count` sampling agents over it, each with its own memories (the
        lanes of lock-step rollouts)."""
        model = PolicyNet.from_state(self.config, self.state_dict)
        return model, [Agent(model, self.normaliser, explain=False) for _ in range(count)]
