"""PolicyNet: encoders, pair scorer (actor) and critic in one torch module.

    net = PolicyNet.create(PolicyConfig(), seed=0)   # explicit seed: initialisation is a draw
    output = net(collate(inputs))                    # logits (B, C x N) and values (B,)
    evaluation = net.evaluate(inputs, actions)       # log-probs, values, entropy for PPO

An action is a flat index `c x N + n` into one input's (candidate, node) grid (`PolicyInput.
shape`); `evaluate` maps it into the padded batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from dagpilot.policy.config import PolicyConfig
from dagpilot.policy.critic import Critic
from dagpilot.policy.distribution import entropy, log_probs, masked_logits
from dagpilot.policy.graph_encoder import TaskGraphEncoder
from dagpilot.policy.inputs import Batch, PolicyInput, collate
from dagpilot.policy.node_encoder import NodeEncoder
from dagpilot.policy.pair_scorer import PairScorer


@dataclass(frozen=True)
class PolicyOutput:
    logits: Tensor  # (B, C x N) masked: -inf on infeasible pairs
    values: Tensor  # (B,)
    grid: tuple[int, int]  # (C, N) of the padded batch


@dataclass(frozen=True)
class Evaluation:
    """What PPO needs for a batch of stored decisions and the actions taken there."""

    log_probs: Tensor  # (B,)
    values: Tensor  # (B,)
    entropy: Tensor  # (B,)


class PolicyNet(nn.Module):
    def __init__(self, config: PolicyConfig) -> None:
        super().__init__()
        self.config = config
        self.graphs = TaskGraphEncoder(config)
        self.nodes = NodeEncoder(config.node_dim, config.d_model)
        self.pairs = PairScorer(config.d_model, config.pair_dim, config.pair_rank)
        self.critic = Critic(config.d_model)

    @classmethod
    def create(cls, config: PolicyConfig, seed: int) -> PolicyNet:
        """A freshly initialised network; the seed fixes the initial weights."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return cls(config)

    @classmethod
    def from_state(cls, config: PolicyConfig, state_dict: Mapping[str, Any]) -> PolicyNet:
        """A network with stored weights; every parameter must be there, and nothing else."""
        net = cls(config)
        net.load_state_dict(dict(state_dict), strict=True)
        net.eval()
        return net

    def forward(self, batch: Batch) -> PolicyOutput:
        candidates = self.graphs(batch.graph, batch.positions, batch.graph_valid, batch.tasks,
                                 batch.candidate_valid)
        nodes = self.nodes(batch.nodes)
        scores = self.pairs(candidates, nodes, batch.pairs, batch.pair_job)
        values = self.critic(candidates, batch.candidate_valid, nodes, batch.node_valid)
        return PolicyOutput(masked_logits(scores, batch.feasible, batch.bias), values, batch.grid)

    def evaluate(self, inputs: Sequence[PolicyInput], actions: Sequence[int]) -> Evaluation:
        """Log-probabilities of `actions` (flat indices into each input's own grid), the
        values and the entropies, with gradients."""
        output = self(collate(inputs))
        index = torch.tensor([padded_index(action, item.shape, output.grid)
                              for action, item in zip(actions, inputs, strict=True)])
        log_p = log_probs(output.logits)
        return Evaluation(log_p.gather(1, index[:, None]).squeeze(1), output.values,
                          entropy(log_p))


def padded_index(action: int, shape: tuple[int, int], grid: tuple[int, int]) -> int:
    """A flat index into a (C, N) grid, moved into the padded (C', N') grid."""
    candidate, node = divmod(action, shape[1])
    return candidate * grid[1] + node
