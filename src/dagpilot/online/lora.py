"""Low-rank adapters (LoRA, Hu et al., 2021) on the actor's last two layers, and their merge.

    y = W x + b + (alpha / r) B A x        A: (r, in), B: (out, r); B starts at zero

The actor's last two layers are the pair scorer's query and key projections
(policy/pair_scorer.py): every (candidate, node) score is their inner product, so adapting them
re-weighs what the policy prefers without touching the encoders. Only A and B train; every
other parameter of the network is frozen. `merged_state` folds the deltas into a plain state
(W + (alpha / r) B A under the original keys) that the registry publishes and serving loads like
any other model: adapters never reach serving.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from dagpilot.policy import PolicyNet

TARGETS = ("query", "key")  # attributes of PolicyNet.pairs


class LoRALinear(nn.Module):
    """A frozen nn.Linear plus a trainable rank-r update."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float | None = None) -> None:
        super().__init__()
        self.base = base
        self.rank = rank
        self.scale = (alpha if alpha is not None else float(rank)) / rank
        self.lora_a = nn.Parameter(torch.empty(rank, base.in_features))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))
        nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))
        for parameter in base.parameters():
            parameter.requires_grad_(False)

    def forward(self, x: Tensor) -> Tensor:
        out: Tensor = self.base(x) + self.scale * ((x @ self.lora_a.T) @ self.lora_b.T)
        return out

    def delta(self) -> Tensor:
        """(out, in): what the adapter adds to the base weight."""
        return self.scale * (self.lora_b @ self.lora_a)


def attach(net: PolicyNet, rank: int) -> list[LoRALinear]:
    """Freeze `net` and put adapters on its last two actor layers (in place). The node memory
    is switched off: it watches the base layers' weights, which adapters do not change."""
    for parameter in net.parameters():
        parameter.requires_grad_(False)
    adapters = []
    for name in TARGETS:
        base = getattr(net.pairs, name)
        if not isinstance(base, nn.Linear):
            raise TypeError(f"pairs.{name} already carries an adapter")
        adapter = LoRALinear(base, rank)
        setattr(net.pairs, name, adapter)
        adapters.append(adapter)
    net.node_memory = None
    return adapters


def merged_state(net: PolicyNet) -> dict[str, Tensor]:
    """The state of `net` with every adapter folded into its base layer, under the keys of a
    network without adapters (loadable with `PolicyNet.from_state(..., strict)`)."""
    state: dict[str, Tensor] = {}
    for key, tensor in net.state_dict().items():
        if ".lora_" in key:
            continue
        state[key.replace(".base.", ".")] = tensor.detach().clone()
    for name in TARGETS:
        adapter = getattr(net.pairs, name)
        if isinstance(adapter, LoRALinear):
            weight = f"pairs.{name}.weight"
            state[weight] = state[weight] + adapter.delta().detach()
    return state


def trainable(adapters: list[LoRALinear]) -> list[nn.Parameter]:
    return [p for adapter in adapters for p in (adapter.lora_a, adapter.lora_b)]
