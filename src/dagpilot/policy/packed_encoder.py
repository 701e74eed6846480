"""The graph Transformer over the valid slots only: decisions, and training's evaluation.

A candidate's graph fills on average a third of its K slots, and `nn.TransformerEncoder`
computes every slot: the padded ones go through the layer norms, the attention projections
and the feed-forward layers, to be thrown away (their keys are masked, their outputs unread).
Here the valid tokens are packed into one (T, d) matrix for every per-token operation, and
only the attention itself sees the (M, K) layout, through the same key mask. The valid
tokens' outputs are those of the module, computed with the module's own parameters and layers
(pre-norm, ReLU, no dropout: `packable` says whether an encoder is of that kind).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def packable(encoder: nn.TransformerEncoder) -> bool:
    """Whether `encode_valid` computes what `encoder` does: pre-norm layers with ReLU and no
    dropout, packed input projections, no extra attention parameters, no final norm."""
    return encoder.norm is None and all(_packable(layer) for layer in encoder.layers)


def _packable(layer: nn.Module) -> bool:
    if not isinstance(layer, nn.TransformerEncoderLayer):
        return False
    attention = layer.self_attn
    no_dropout = attention.dropout == 0.0 and all(
        part.p == 0.0 for part in (layer.dropout, layer.dropout1, layer.dropout2))
    return (layer.norm_first and layer.activation is F.relu and no_dropout
            and attention.batch_first and attention._qkv_same_embed_dim
            and attention.in_proj_bias is not None and attention.bias_k is None
            and not attention.add_zero_attn)


def encode_valid(encoder: nn.TransformerEncoder, tokens: Tensor, valid: Tensor,
                 groups: Sequence[int] = ()) -> Tensor:
    """(T, d) embedded valid tokens, in `valid.nonzero()` order, and (M, K) the valid slots
    -> (T, d) their encoder outputs. Only when `packable(encoder)` and without dropout.
    `groups`: numbers of consecutive graphs whose attention runs on their own layout, as wide
    as the group's widest graph (graphs ordered by width: a few wide ones then pad only each
    other); empty, one layout for all."""
    layouts = _layouts(valid, groups)
    out = tokens
    for layer in encoder.layers:
        assert isinstance(layer, nn.TransformerEncoderLayer)
        out = out + _grouped_attention(layer.self_attn, layer.norm1(out), layouts)
        out = out + layer.linear2(F.relu(layer.linear1(layer.norm2(out))))
    return out


def _layouts(valid: Tensor, groups: Sequence[int]) -> list[_Layout]:
    """Each group's tokens (a range of the packed rows), valid slots and key mask."""
    if not groups:
        return [_Layout(0, -1, valid.nonzero(as_tuple=True), valid[:, None, None, :])]
    if sum(groups) != len(valid):
        raise ValueError(f"attention groups of {sum(groups)} graphs for {len(valid)}")
    layouts, first, start = [], 0, 0
    for count in groups:
        part = valid[first:first + count]
        width = int(part.any(0).nonzero().max()) + 1 if bool(part.any()) else 1
        part = part[:, :width]
        end = start + int(part.sum())
        layouts.append(_Layout(start, end, part.nonzero(as_tuple=True),
                               part[:, None, None, :]))
        first, start = first + count, end
    return layouts


class _Layout(NamedTuple):
    start: int  # first packed token
    end: int  # one past the last (-1: all of them)
    slots: tuple[Tensor, ...]
    keys: Tensor  # (M, 1, 1, K)


def _grouped_attention(attention: nn.MultiheadAttention, tokens: Tensor,
                       layouts: list[_Layout]) -> Tensor:
    if len(layouts) == 1 and layouts[0].end == -1:
        return _attention(attention, tokens, layouts[0].slots, layouts[0].keys)
    return torch.cat([_attention(attention, tokens[layout.start:layout.end], layout.slots,
                                 layout.keys) for layout in layouts])


def _attention(attention: nn.MultiheadAttention, tokens: Tensor, slots: tuple[Tensor, ...],
               keys: Tensor) -> Tensor:
    """Self-attention of the packed tokens within their own graph."""
    graphs, width = keys.shape[0], keys.shape[-1]
    d, heads = tokens.shape[-1], attention.num_heads
    projected = F.linear(tokens, attention.in_proj_weight, attention.in_proj_bias)  # (T, 3d)
    padded = tokens.new_zeros(graphs, width, 3 * d)
    padded[slots] = projected
    q, k, v = padded.view(graphs, width, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
    mixed = F.scaled_dot_product_attention(q, k, v, attn_mask=keys)  # (M, H, K, d / H)
    rows = mixed.permute(0, 2, 1, 3).reshape(graphs, width, d)[slots]
    out: Tensor = F.linear(rows, attention.out_proj.weight, attention.out_proj.bias)
    return out


def unpack(values: Tensor, valid: Tensor) -> Tensor:
    """(T, d) packed rows -> (M, K, d) with zeros in the invalid slots."""
    out = values.new_zeros(*valid.shape, values.shape[-1])
    out[valid] = values
    return out

