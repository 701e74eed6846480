"""`Agent.choose` for the lanes of a lock-step round together: a handful of torch calls for
the batch instead of a dozen per lane.

A round's logits are (B, C_max x N): each lane's grid first, its padded candidates after it
at -inf. Softmax and log-softmax over a row reduce in the same vector lanes whatever follows
the row, and a padded entry adds exp(-inf) = 0 exactly, so one call over the batch gives
each lane's prefix bit for bit as the call over that lane's row alone (tests compare them
with `Agent.choose`). Each lane still draws with its own generator, as many numbers as its
row has entries: `torch.multinomial` of one sample is the argmax of p / q, q exponential
draws, one per entry (the "exponential race"); here each lane fills its row's prefix of q
from its own generator, the padding stays at 1 (p = 0 there: never the first maximum), and
one division and argmax serve the batch, without multinomial's checks of each row (a
softmax is finite, non-negative and sums to 1). The chosen pods' rows are stacked for one
log-sum-exp.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from dagpilot.agent import Agent, Decision, Ready
from dagpilot.core.view import ClusterView

Lane = tuple[Agent, ClusterView, Ready, torch.Generator]


def choose_all(lanes: Sequence[Lane], logits: torch.Tensor,
               estimates: Sequence[float]) -> list[Decision]:
    """Each lane's sampled decision from its row of the batch's `logits`, as
    `Agent.choose(..., greedy=False)` makes it. Call under `torch.inference_mode`."""
    nodes = logits.shape[1] // max(ready.policy_input.shape[0] for _, _, ready, _ in lanes)
    log_p = torch.log_softmax(logits, dim=-1)
    probs = torch.softmax(logits, dim=-1)
    chosen = _race(probs, [(ready.policy_input.shape[0] * nodes, generator)
                           for _, _, ready, generator in lanes])
    rows = log_p.view(len(lanes), -1, nodes)[
        torch.arange(len(lanes)), torch.tensor([pick // nodes for pick in chosen])]
    log_conditional = (rows - torch.logsumexp(rows, 1, keepdim=True)).numpy()
    picked = log_p[torch.arange(len(lanes)), torch.tensor(chosen)].tolist()
    return [agent.decision(view, ready, pick, conditional, log_prob=log_prob,
                           estimate=estimate)
            for (agent, view, ready, _), pick, conditional, log_prob, estimate in zip(
                lanes, chosen, log_conditional, picked, estimates, strict=True)]


def _race(probs: torch.Tensor, rows: Sequence[tuple[int, torch.Generator]]) -> list[int]:
    """`torch.multinomial(probs[lane, :width], 1, generator=generator)` for each lane's
    (width, generator), bit for bit, and the generators left where it leaves them."""
    race = torch.ones_like(probs)
    for lane, (width, generator) in enumerate(rows):
        race[lane, :width].exponential_(generator=generator)
    picks: list[int] = (probs / race).argmax(-1).tolist()
    return picks
