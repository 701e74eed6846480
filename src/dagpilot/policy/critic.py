"""The critic: the value of a decision's state from pooled candidate and node embeddings."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from dagpilot.policy.layers import masked_max, masked_mean, mlp


class Critic(nn.Module):
    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.value = mlp(4 * d_model, d_model, 1)

    def forward(self, candidates: Tensor, candidate_valid: Tensor, nodes: Tensor,
                node_valid: Tensor) -> Tensor:
        """Mean and max over the real candidates and nodes -> (B,) values."""
        pooled = torch.cat([masked_mean(candidates, candidate_valid),
                            masked_max(candidates, candidate_valid),
                            masked_mean(nodes, node_valid), masked_max(nodes, node_valid)], -1)
        values: Tensor = self.value(pooled).squeeze(-1)
        return values
