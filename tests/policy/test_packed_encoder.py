"""The Transformer over the valid slots only gives the module's outputs on those slots."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from dagpilot.policy.packed_encoder import encode_valid, packable, unpack


def encoder(norm_first: bool = True) -> nn.TransformerEncoder:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True,
                                       norm_first=norm_first)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


def test_valid_slots_come_out_as_the_module_computes_them() -> None:
    module = encoder()
    generator = torch.Generator().manual_seed(1)
    tokens = torch.randn(5, 9, 16, generator=generator)
    lengths = torch.tensor([1, 9, 4, 2, 7])
    valid = torch.arange(9)[None, :] < lengths[:, None]
    valid[2, 1] = False  # a hole inside a graph is masked like the tail
    with torch.inference_mode():
        expected = module(tokens, src_key_padding_mask=~valid)
        packed = unpack(encode_valid(module, tokens[valid], valid), valid)
        module.eval()  # torch's fused inference path: the same figures within rounding
        fused = module(tokens, src_key_padding_mask=~valid)
    assert torch.allclose(packed[valid], expected[valid], atol=1e-5, rtol=0.0)
    assert torch.allclose(packed[valid], fused[valid], atol=1e-5, rtol=0.0)
    assert torch.equal(packed[~valid], torch.zeros_like(packed[~valid]))


def test_only_pre_norm_relu_encoders_without_dropout_are_packed() -> None:
    assert packable(encoder())
    assert not packable(encoder(norm_first=False))
    with_dropout = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=True, norm_first=True),
        1, enable_nested_tensor=False)
    assert not packable(with_dropout)


def test_attention_groups_give_the_one_layout_outputs_and_gradients() -> None:
    """Graphs ordered by width in two groups, each attended in a layout of its own width,
    give every valid slot what one layout of the widest gives, with gradients alike."""
    module = encoder()
    generator = torch.Generator().manual_seed(2)
    lengths = torch.tensor([1, 2, 2, 3, 9, 8])
    valid = torch.arange(9)[None, :] < lengths[:, None]
    valid[4, 5] = False  # a hole
    tokens = torch.randn(int(valid.sum()), 16, generator=generator, requires_grad=True)
    one = encode_valid(module, tokens, valid)
    (one_gradient,) = torch.autograd.grad(one.square().sum(), tokens)
    grouped = encode_valid(module, tokens, valid, (4, 2))
    (grouped_gradient,) = torch.autograd.grad(grouped.square().sum(), tokens)
    torch.testing.assert_close(grouped, one, atol=1e-5, rtol=0.0)
    torch.testing.assert_close(grouped_gradient, one_gradient, atol=1e-5, rtol=1e-5)


def test_attention_groups_must_cover_the_graphs() -> None:
    valid = torch.ones(3, 2, dtype=torch.bool)
    with pytest.raises(ValueError, match="groups of 2 graphs for 3"):
        encode_valid(encoder(), torch.zeros(6, 16), valid, (1, 1))
