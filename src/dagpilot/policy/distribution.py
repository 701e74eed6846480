"""The actor's distribution: a categorical over the feasible (candidate, node) pairs.

Infeasible pairs get a logit of -inf, so their probability is exactly 0: no sample or argmax
can choose one (a property test checks it). A fixed bias (the PCIe fallback penalty) may shift
feasible pairs' logits; it is part of the input, not learned. Every row must hold at least one
feasible pair; the agent asks the network only then.
"""

from __future__ import annotations

import torch
from torch import Tensor


def masked_logits(scores: Tensor, feasible: Tensor, bias: Tensor | None = None) -> Tensor:
    """(B, C, N) scores (plus a fixed `bias`, when given) -> (B, C x N) logits, -inf where
    infeasible."""
    if not bool(feasible.flatten(1).any(dim=1).all()):
        raise ValueError("every decision needs at least one feasible (candidate, node) pair")
    if bias is not None:
        scores = scores + bias
    return scores.masked_fill(~feasible, float("-inf")).flatten(1)


def log_probs(logits: Tensor) -> Tensor:
    return torch.log_softmax(logits, dim=-1)


def entropy(log_p: Tensor) -> Tensor:
    """(B,) entropy of each row; infeasible pairs (p = 0) add nothing."""
    finite = torch.isfinite(log_p)
    safe = torch.where(finite, log_p, torch.zeros_like(log_p))
    return -(safe.exp() * safe).sum(-1)


def sample(logits: Tensor, generator: torch.Generator | None) -> Tensor:
    """(B,) flat pair indices drawn from the masked softmax."""
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def greedy(logits: Tensor) -> Tensor:
    """(B,) the most likely feasible pair (the first on ties)."""
    return logits.argmax(dim=-1)
