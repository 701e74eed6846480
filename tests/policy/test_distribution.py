"""The masked categorical: an infeasible pair is never chosen, whatever the scores."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dagpilot.policy import greedy, sample
from dagpilot.policy.distribution import entropy, log_probs, masked_logits

SHAPES = st.tuples(st.integers(1, 4), st.integers(1, 6), st.integers(1, 9))


@st.composite
def scores_and_masks(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    batch, candidates, nodes = draw(SHAPES)
    scores = draw(hnp.arrays(np.float32, (batch, candidates, nodes), elements=st.floats(
        -1e4, 1e4, width=32)))
    mask = draw(hnp.arrays(np.bool_, (batch, candidates, nodes)))
    flat = mask.reshape(batch, -1)
    for row in range(batch):
        if not flat[row].any():
            flat[row, draw(st.integers(0, candidates * nodes - 1))] = True
    return scores, flat.reshape(mask.shape)


@settings(max_examples=150, deadline=None)
@given(scores_and_masks(), st.integers(0, 2**31 - 1))
def test_no_sample_or_argmax_lands_on_an_infeasible_pair(
        case: tuple[np.ndarray, np.ndarray], seed: int) -> None:
    scores, mask = case
    # the infeasible pairs get the highest raw scores: the mask alone must keep them out
    scores = np.where(mask, scores, np.float32(1e4))
    logits = masked_logits(torch.from_numpy(scores), torch.from_numpy(mask))
    flat = mask.reshape(len(mask), -1)
    generator = torch.Generator().manual_seed(seed)
    for pick in (greedy(logits), sample(logits, generator), sample(logits, generator)):
        assert flat[np.arange(len(flat)), pick.numpy()].all()
    probabilities = log_probs(logits).exp().numpy()
    assert (probabilities[~flat] == 0).all()
    assert np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    assert torch.isfinite(entropy(log_probs(logits))).all()


def test_entropy_of_a_uniform_choice_among_k_pairs_is_log_k() -> None:
    mask = torch.tensor([[[True, True, False], [False, True, True]]])
    logits = masked_logits(torch.zeros(1, 2, 3), mask)
    assert float(entropy(log_probs(logits))[0]) == np.float32(np.log(4))


def test_sampling_with_one_generator_seed_repeats() -> None:
    logits = masked_logits(torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0)),
                           torch.ones(3, 4, 5, dtype=torch.bool))
    first = sample(logits, torch.Generator().manual_seed(11))
    again = sample(logits, torch.Generator().manual_seed(11))
    assert torch.equal(first, again)
