"""Pair scoring: one score per (candidate, node) pair, with tiny work per pair.

    score(c, n) = <Q e_c, K e_n> / sqrt(r) + <U e_c, p(job(c), n)> + w . e_c

`e_c`, `e_n` are the candidate and node embeddings (non-linear: MLPs and the Transformer), so a
rank-r inner product of their projections approximates any smooth interaction of the two, such
as how tightly a pod's requests fit a node's free resources (a sum of r separable terms); the
second term weighs the job's distance features of that node by what matters to this candidate
(a shuffle member cares, a lone task does not); the last prefers some pods whatever the node.
The work per pair is r + pair_dim multiply-adds, done as one matrix product: 16 candidates on
5,000 nodes cost about 3 million multiply-adds, and nothing of size C x N x r is stored. The
distance term is one product with the jobs' (N, J x pair_dim) features as they are, so no
(C, N, pair_dim) copy is made: J x pair_dim multiply-adds per pair, yet faster than the copy
even at J = C = 16 (bench/decision_latency.py).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from dagpilot.policy.layers import run_linear


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
        return self.scores(candidates, self.key(nodes), pairs, pair_job)

    def scores(self, candidates: Tensor, keys: Tensor, pairs: Tensor,
               pair_job: Tensor) -> Tensor:
        """`forward` with the nodes' keys `self.key(nodes)` (B, N, r) given: they depend on
        each node alone, so the network may remember them between decisions."""
        inner = run_linear(self.query, candidates) @ keys.transpose(1, 2) * self.scale
        distance = job_distance_scores(pairs, pair_job, run_linear(self.pair, candidates))
        return inner + distance + run_linear(self.bias, candidates)


def job_distance_scores(pairs: Tensor, pair_job: Tensor, weights: Tensor) -> Tensor:
    """(B, J, N, P) job features, (B, C) job rows, (B, C, P) weights -> (B, C, N) scores
    <pairs[b, pair_job[b, c], n], weights[b, c]>."""
    batch, jobs, nodes, width = pairs.shape
    if jobs == 1:  # every candidate of one job (common): the same product, without the blocks
        return weights @ pairs.squeeze(1).transpose(1, 2)
    # Each candidate's weights go in its job's block of a (J x P)-long column, zeros elsewhere:
    # the other jobs' features then add exact zeros to its score.
    own = pair_job.unsqueeze(1) == torch.arange(jobs, device=pair_job.device)[None, :, None]
    blocks = own.to(weights.dtype).unsqueeze(2) * weights.transpose(1, 2).unsqueeze(1)
    columns = blocks.reshape(batch, jobs * width, -1)  # (B, J x P, C)
    flat = pairs.permute(0, 2, 1, 3).reshape(batch, nodes, jobs * width)  # a view when J = 1
    return columns.transpose(1, 2) @ flat.transpose(1, 2)
