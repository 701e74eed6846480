"""The task-graph encoder: a small Transformer over the K tasks of each candidate's job.

Tokens are the job-graph slots of `state.job_graph` (slot 0 is the candidate itself, then the
tasks that compete with it, the work it unlocks and where its inputs come from), each embedded
from its features plus the topology-aware positional encoding. Attention runs only over the
valid slots. A candidate's embedding joins its own token, the mean of its job's tokens and an
MLP of its task features.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from dagpilot.policy.config import PolicyConfig
from dagpilot.policy.layers import masked_mean, mlp
from dagpilot.policy.positional import TopologyEncoding


class TaskGraphEncoder(nn.Module):
    def __init__(self, config: PolicyConfig) -> None:
        super().__init__()
        d = config.d_model
        self.tokens = nn.Linear(config.graph_dim, d)
        self.positions = TopologyEncoding(config.position_dim, d)
        layer = nn.TransformerEncoderLayer(
            d, config.heads, config.feedforward, dropout=0.0, batch_first=True,
            norm_first=True)
        # nested tensors are a prototype fast path that warns; padded attention is exact here
        self.transformer = nn.TransformerEncoder(layer, config.layers,
                                                 enable_nested_tensor=False)
        self.task = mlp(config.task_dim, d, d)
        self.combine = mlp(3 * d, d, d)

    def forward(self, graph: Tensor, positions: Tensor, graph_valid: Tensor, tasks: Tensor,
                candidate_valid: Tensor) -> Tensor:
        """(B, C, K, .) graphs and (B, C, task_dim) tasks -> (B, C, d); padded rows are 0."""
        batch, candidates = candidate_valid.shape
        out = graph.new_zeros(batch, candidates, self.tokens.out_features)
        if not bool(candidate_valid.any()):
            return out
        valid = graph_valid[candidate_valid]  # (M, K): only real candidates enter attention
        tokens = self.tokens(graph[candidate_valid]) + self.positions(positions[candidate_valid])
        encoded: Tensor = self.transformer(tokens, src_key_padding_mask=~valid)
        combined = torch.cat([encoded[:, 0], masked_mean(encoded, valid),
                              self.task(tasks[candidate_valid])], dim=-1)
        out[candidate_valid] = self.combine(combined)
        return out
