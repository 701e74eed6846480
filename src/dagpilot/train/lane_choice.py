"""`Agent.choose` for the lanes of a lock-step round together: a handful of torch calls for
the batch instead of a dozen per lane.

A round's logits are (B, C_max x N): each lane's grid first, its padded candidates after it
at -inf. Softmax and log-softmax over a row reduce in the same vector lanes whatever follows
the row, and a padded entry adds exp(-inf) = 0 exactly, so one call over the batch gives
each lane's prefix bit for bit as the call over that lane's row alone (tests compare them
with `Agent.choose`). Each lane still draws from its own row with its own generator
(`torch.multinomial` draws one number per entry of the row it is given, so the row must not
be padded), and the chosen pods' rows are stacked for one log-sum-exp.
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
    chosen = [_draw(probs[lane, :ready.policy_input.shape[0] * nodes], generator)
              for lane, (_, _, ready, generator) in enumerate(lanes)]
    rows = log_p.view(len(lanes), -1, nodes)[
        torch.arange(len(lanes)), torch.tensor([pick // nodes for pick in chosen])]
    log_conditional = (rows - torch.logsumexp(rows, 1, keepdim=True)).numpy()
    picked = log_p[torch.arange(len(lanes)), torch.tensor(chosen)].tolist()
    return [agent.decision(view, ready, pick, conditional, log_prob=log_prob,
                           estimate=estimate)
            for (agent, view, ready, _), pick, conditional, log_prob, estimate in zip(
                lanes, chosen, log_conditional, picked, estimates, strict=True)]


def _draw(probs: torch.Tensor, generator: torch.Generator) -> int:
    """`policy.sample`'s draw from one lane's unpadded probabilities."""
    return int(torch.multinomial(probs.unsqueeze(0), 1, generator=generator)[0, 0])

