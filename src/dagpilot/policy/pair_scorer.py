"""Pair scoring: one score per (candidate, node) pair, with tiny work per pair.

    score(c, n) = <Q e_c, K e_n> / sqrt(r) + <U e_c, p(job(c), n)> + w . e_c

`e_c`, `e_n` are the candidate and node embeddings (non-linear: MLPs and the Transformer), so a
rank-r inner product of their projections approximates any smooth interaction of the two, such
as how tightly a pod's requests fit a node's free resources (a sum of r separable terms); the
second term weighs the job's distance features of that node by what matters to this candidate
(a shuffle member cares, a lone task does not); the last prefers some pods whatever the node.
The work per pair is r + pair_dim multiply-adds, done as one matrix product: 16 candidates on
5,000 nodes cost about 3 million multiply-adds, and nothing of size C x N x r is stored.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class PairScorer(nn.Module):
    def __init__(self, d_model: int, pair_dim: int, rank: int) -> None:
        super().__init__()
        self.query = nn.Linear(d_model, rank)
        self.key = nn.Linear(d_model, rank)
        self.pair = nn.Linear(d_model, pair_dim)
        self.bias = nn.Linear(d_model, 1)
        self.scale = 1.0 / math.sqrt(rank)
        # start near uniform over feasible pairs: behaviour cloning or PPO then shape it
        for layer in (self.query, self.pair, self.bias):
            nn.init.normal_(layer.weight, std=0.01)
            nn.init.zeros_(layer.bias)

    def forward(self, candidates: Tensor, nodes: Tensor, pairs: Tensor,
                pair_job: Tensor) -> Tensor:
        """(B, C, d), (B, N, d), (B, J, N, pair_dim), (B, C) -> scores (B, C, N)."""
        inner = self.query(candidates) @ self.key(nodes).transpose(1, 2) * self.scale
        rows = torch.arange(pairs.shape[0], device=pair_job.device)[:, None]
        per_candidate = pairs[rows, pair_job]  # (B, C, N, pair_dim): small, pair_dim is 8
        distance = (per_candidate @ self.pair(candidates).unsqueeze(-1)).squeeze(-1)
        scores: Tensor = inner + distance + self.bias(candidates)
        return scores
