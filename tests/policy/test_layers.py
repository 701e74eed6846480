"""Masked pooling: the unmasked shortcut gives what the masked form gives."""

from __future__ import annotations

import torch

from dagpilot.policy.layers import masked_max, masked_mean


def reference_mean(values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    weights = valid.unsqueeze(-1).to(values.dtype)
    return (values * weights).sum(-2) / weights.sum(-2).clamp(min=1.0)


def reference_max(values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    best = values.masked_fill(~valid.unsqueeze(-1), float("-inf")).max(dim=-2).values
    return torch.where(torch.isfinite(best), best, torch.zeros_like(best))


def test_pooling_all_valid_rows_and_some_rows_match_the_masked_form() -> None:
    values = torch.randn(3, 7, 5, generator=torch.Generator().manual_seed(0))
    every = torch.ones(3, 7, dtype=torch.bool)
    some = every.clone()
    some[0, 4:] = False
    some[2] = False  # nothing valid: 0
    for valid in (every, some):
        assert torch.equal(masked_max(values, valid), reference_max(values, valid))
        assert torch.allclose(masked_mean(values, valid), reference_mean(values, valid),
                              atol=1e-6, rtol=0.0)
    assert torch.equal(masked_max(values, some)[2], torch.zeros(5))
    assert torch.equal(masked_mean(values, some)[2], torch.zeros(5))
