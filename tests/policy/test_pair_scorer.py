"""The pair scorer's distance term: one product over the jobs' features equals reading each
candidate's own job row."""

from __future__ import annotations

import pytest
import torch

from dagpilot.policy.pair_scorer import job_distance_scores


def by_gather(pairs: torch.Tensor, pair_job: torch.Tensor,
              weights: torch.Tensor) -> torch.Tensor:
    """<pairs[b, pair_job[b, c], n], weights[b, c]>, row by row."""
    rows = torch.arange(pairs.shape[0])[:, None]
    return (pairs[rows, pair_job] @ weights.unsqueeze(-1)).squeeze(-1)


@pytest.mark.parametrize(("batch", "jobs", "candidates", "nodes"),
                         [(1, 1, 1, 5), (1, 1, 16, 40), (1, 5, 16, 40), (3, 4, 6, 9),
                          (2, 16, 16, 7)])
def test_the_distance_term_reads_each_candidates_own_job(batch: int, jobs: int, candidates: int,
                                                        nodes: int) -> None:
    generator = torch.Generator().manual_seed(jobs * 100 + candidates)
    pairs = (torch.rand(batch, jobs, nodes, 8, generator=generator) < 0.3).float()
    pair_job = torch.randint(0, jobs, (batch, candidates), generator=generator)
    weights = torch.randn(batch, candidates, 8, generator=generator)
    fast = job_distance_scores(pairs, pair_job, weights)
    assert fast.shape == (batch, candidates, nodes)
    assert torch.allclose(fast, by_gather(pairs, pair_job, weights), atol=1e-5, rtol=0.0)


def test_the_distance_term_passes_gradients_to_the_weights() -> None:
    pairs = torch.ones(1, 2, 3, 8)
    weights = torch.randn(1, 4, 8, requires_grad=True)
    job_distance_scores(pairs, torch.tensor([[0, 1, 1, 0]]), weights).sum().backward()
    assert weights.grad is not None
    assert torch.equal(weights.grad, torch.full((1, 4, 8), 3.0))  # 3 nodes, all features 1
