"""PolicyNet: encoders, pair scorer (actor) and critic in one torch module.

    net = PolicyNet.create(PolicyConfig(), seed=0)   # explicit seed: initialisation is a draw
    output = net(collate(inputs))                    # logits (B, C x N) and values (B,)
    logits = net.logits(collate(inputs))             # the actor alone (serving)
    evaluation = net.evaluate(inputs, actions)       # log-probs, values, entropy for PPO
    evaluation = net.evaluate_rows(table, index)     # the same for a StepTable's decisions

Without gradients, one decision at a time, the node embeddings and keys of the nodes that
did not change since the last decision come from `node_memory` (set it to None to always
compute them); the graph summaries likewise from the graph encoder's cache.

An action is a flat index `c x N + n` into one input's (candidate, node) grid (`PolicyInput.
shape`); `evaluate` maps it into the padded batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from dagpilot.policy.config import PolicyConfig
from dagpilot.policy.critic import Critic
from dagpilot.policy.distribution import entropy, log_probs, masked_logits
from dagpilot.policy.graph_encoder import TaskGraphEncoder
from dagpilot.policy.inputs import Batch, PolicyInput, collate
from dagpilot.policy.layers import run_linear
from dagpilot.policy.node_encoder import NodeEncoder
from dagpilot.policy.pair_scorer import PairScorer
from dagpilot.policy.row_memory import RowMemory
from dagpilot.policy.step_table import StepRows, StepTable


@dataclass(frozen=True)
class PolicyOutput:
    logits: Tensor  # (B, C x N) masked: -inf on infeasible pairs
    values: Tensor  # (B,)
    grid: tuple[int, int]  # (C, N) of the padded batch


@dataclass(frozen=True)
class Evaluation:
    """What PPO needs for a batch of stored decisions and the actions taken there."""

    log_probs: Tensor  # (B,)
    values: Tensor  # (B,)
    entropy: Tensor  # (B,)


class PolicyNet(nn.Module):
    def __init__(self, config: PolicyConfig) -> None:
        super().__init__()
        self.config = config
        self.graphs = TaskGraphEncoder(config)
        self.nodes = NodeEncoder(config.node_dim, config.d_model)
        self.pairs = PairScorer(config.d_model, config.pair_dim, config.pair_rank)
        self.critic = Critic(config.d_model)
        # A plain attribute, not a module or buffer: the state_dict keys stay as they were.
        self.node_memory: RowMemory | None = RowMemory()
        self._node_slots = tuple((module, name) for part in (self.nodes, self.pairs.key)
                                 for module in part.modules() for name in module._parameters)

    @classmethod
    def create(cls, config: PolicyConfig, seed: int) -> PolicyNet:
        """A freshly initialised network; the seed fixes the initial weights."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return cls(config)

    @classmethod
    def from_state(cls, config: PolicyConfig, state_dict: Mapping[str, Any]) -> PolicyNet:
        """A network with stored weights; every parameter must be there, and nothing else."""
        net = cls(config)
        net.load_state_dict(dict(state_dict), strict=True)
        net.eval()
        return net

    def forward(self, batch: Batch) -> PolicyOutput:
        candidates, nodes, logits = self._actor(batch)
        values = self.critic(candidates, batch.candidate_valid, nodes, batch.node_valid)
        return PolicyOutput(logits, values, batch.grid)

    def logits(self, batch: Batch) -> Tensor:
        """The actor alone: `forward(batch).logits` without the critic's value, which only
        training reads (a greedy decision in serving does not)."""
        return self._actor(batch)[2]

    def _actor(self, batch: Batch) -> tuple[Tensor, Tensor, Tensor]:
        """(candidate embeddings, node embeddings, masked logits)."""
        candidates = self.graphs(batch.graph, batch.positions, batch.graph_valid, batch.tasks,
                                 batch.candidate_valid)
        nodes, logits = self._pair_logits(candidates, self._nodes_and_keys(batch.nodes),
                                          batch)
        return candidates, nodes, logits

    def _pair_logits(self, candidates: Tensor, nodes_and_keys: tuple[Tensor, Tensor],
                     batch: Batch | StepRows) -> tuple[Tensor, Tensor]:
        """(node embeddings, masked logits) of the candidates on the batch's nodes."""
        nodes, keys = nodes_and_keys
        scores = self.pairs.scores(candidates, keys, batch.pairs, batch.pair_job)
        return nodes, masked_logits(scores, batch.feasible, batch.bias)

    def forget(self) -> None:
        """Drop the inference memories (graph summaries, node rows): what follows is computed
        as a fresh network computes it. A summary computed in another batch may differ from a
        fresh one in its last bits (the BLAS picks kernels by the rows it is given), so a
        session that must decide as a fresh one would (`Agent.reset`) starts without them."""
        if self.graphs.summary_cache is not None:
            self.graphs.summary_cache.clear()
        if self.node_memory is not None:
            self.node_memory.clear()

    def prepare_nodes(self, rows: Tensor) -> None:
        """Bring the node memory up to date with (N, node_dim) normalised node rows ahead
        of a decision on them (`Agent.prepare`), which then finds their embeddings and keys
        computed; nothing without a memory, or for fewer rows than it keeps (`full_rows`)."""
        if self.node_memory is not None and len(rows) > self.node_memory.full_rows:
            with torch.inference_mode():
                self.node_memory.outputs(rows, self._node_parameters(), self._embed_nodes)

    def _nodes_and_keys(self, rows: Tensor) -> tuple[Tensor, Tensor]:
        """(B, N, node_dim) -> the node embeddings (B, N, d) and their pair-scorer keys
        (B, N, r); for one decision without gradients only the rows that changed since the
        last one are computed (`node_memory`)."""
        memory = self.node_memory
        if (memory is None or torch.is_grad_enabled() or rows.shape[0] != 1
                or rows.device.type != "cpu"):
            return self._embed_nodes(rows)
        nodes, keys = memory.outputs(rows[0], self._node_parameters(), self._embed_nodes)
        return nodes.unsqueeze(0), keys.unsqueeze(0)

    def _embed_nodes(self, rows: Tensor) -> tuple[Tensor, Tensor]:
        nodes = self.nodes(rows)
        return nodes, run_linear(self.pairs.key, nodes)

    def _node_parameters(self) -> list[Tensor]:
        """What the node embeddings and keys depend on, looked up afresh (one may have been
        replaced)."""
        return [parameter for module, name in self._node_slots
                if (parameter := module._parameters[name]) is not None]

    def evaluate(self, inputs: Sequence[PolicyInput], actions: Sequence[int]) -> Evaluation:
        """Log-probabilities of `actions` (flat indices into each input's own grid), the
        values and the entropies, with gradients."""
        output = self(collate(inputs))
        index = torch.tensor([padded_index(action, item.shape, output.grid)
                              for action, item in zip(actions, inputs, strict=True)])
        return _evaluation(output.logits, output.values, index)

    def evaluate_rows(self, table: StepTable, index: Tensor) -> Evaluation:
        """`evaluate` of the table's decisions at `index` and their actions, up to float
        rounding: each distinct graph (`embed_distinct`) and node row of them encoded once,
        nothing collated again."""
        rows = table.rows(index)
        candidates = self.graphs.embed_distinct(rows.graphs, rows.tasks, rows.candidate_valid)
        nodes, keys = self._embed_nodes(rows.node_rows)  # each distinct node row once
        nodes, logits = self._pair_logits(candidates, (_gathered(nodes, rows.node_of),
                                                       _gathered(keys, rows.node_of)), rows)
        values = self.critic(candidates, rows.candidate_valid, nodes, rows.node_valid)
        return _evaluation(logits, values, rows.actions)


def _gathered(rows: Tensor, index: Tensor) -> Tensor:
    """(U, D) rows at an index of any shape -> (*index.shape, D); `index_select`, whose
    gradient (`index_add_`) is several times cheaper than advanced indexing's here."""
    return rows.index_select(0, index.flatten()).view(*index.shape, rows.shape[-1])


def _evaluation(logits: Tensor, values: Tensor, actions: Tensor) -> Evaluation:
    """(B, C x N) masked logits, (B,) values and (B,) flat actions into that grid."""
    log_p = log_probs(logits)
    return Evaluation(log_p.gather(1, actions[:, None]).squeeze(1), values, entropy(log_p))


def padded_index(action: int, shape: tuple[int, int], grid: tuple[int, int]) -> int:
    """A flat index into a (C, N) grid, moved into the padded (C', N') grid."""
    candidate, node = divmod(action, shape[1])
    return candidate * grid[1] + node
