"""Small building blocks shared by the encoders: an MLP, an MLP embedding, masked pooling."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    """Two linear layers with a ReLU between them."""
    return nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, outputs))


def run_mlp(net: nn.Sequential, x: Tensor) -> Tensor:
    """`net(x)` for an `mlp`: with plain layers, their functions called directly, without
    nn.Module's call machinery (no hooks run), which is half the cost of a decision's small
    inputs; the same bits. Any other layer (an adapter) is called as a module."""
    first, activation, last = net
    if type(activation) is not nn.ReLU:
        out: Tensor = net(x)
        return out
    return run_linear(last, F.relu(run_linear(first, x)))


def run_linear(layer: nn.Module, x: Tensor) -> Tensor:
    """`layer(x)`, as `run_mlp` calls it: `F.linear` for a plain nn.Linear."""
    if type(layer) is nn.Linear:
        return F.linear(x, layer.weight, layer.bias)
    out: Tensor = layer(x)
    return out


class Embedding(nn.Module):
    """(..., inputs) -> (..., d_model) through an MLP applied row by row."""

    def __init__(self, inputs: int, d_model: int) -> None:
        super().__init__()
        self.embed = mlp(inputs, d_model, d_model)

    def forward(self, rows: Tensor) -> Tensor:
        return run_mlp(self.embed, rows)


def masked_mean(values: Tensor, valid: Tensor) -> Tensor:
    """Mean over axis -2 of the rows where `valid` (axis -1 of `valid`); 0 when none is."""
    if bool(valid.all()):  # one unpadded decision: no mask to apply (masking is the slow part)
        return values.sum(-2) / float(max(values.shape[-2], 1))
    weights = valid.unsqueeze(-1).to(values.dtype)
    return (values * weights).sum(-2) / weights.sum(-2).clamp(min=1.0)


def masked_max(values: Tensor, valid: Tensor) -> Tensor:
    """Max over axis -2 of the rows where `valid`; 0 when none is."""
    # `amax`, not `max(dim)`: the latter also finds the indices, several times the work.
    filled = values if bool(valid.all()) else values.masked_fill(~valid.unsqueeze(-1),
                                                                   float("-inf"))
    best = torch.amax(filled, dim=-2) if filled.shape[-2] else filled.sum(-2)
    return torch.where(torch.isfinite(best), best, torch.zeros_like(best))
