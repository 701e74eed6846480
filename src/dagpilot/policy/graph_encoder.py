"""The task-graph encoder: a small Transformer over the K tasks of each candidate's job.

Tokens are the job-graph slots of `state.job_graph` (slot 0 is the candidate itself, then the
tasks that compete with it, the work it unlocks and where its inputs come from), each embedded
from its features plus the topology-aware positional encoding. Attention runs only over the
valid slots. A candidate's embedding joins its own token, the mean of its job's tokens and an
MLP of its task features.

The Transformer's part (own token and mean) is the costly one and changes only when the job's
tasks change state, so without gradients (decisions, not training's `evaluate`) it comes from a
`GraphSummaryCache` where it can; set `summary_cache` to None to always compute it.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from dagpilot.policy.config import PolicyConfig
from dagpilot.policy.distinct_graphs import DistinctGraphs
from dagpilot.policy.graph_cache import GraphSummaryCache
from dagpilot.policy.layers import masked_mean, mlp, run_mlp
from dagpilot.policy.packed_encoder import encode_valid, packable, unpack
from dagpilot.policy.positional import TopologyEncoding


class TaskGraphEncoder(nn.Module):
    def __init__(self, config: PolicyConfig) -> None:
        super().__init__()
        d = config.d_model
        self.tokens = nn.Linear(config.graph_dim, d)
        self.positions = TopologyEncoding(config.position_dim, d)
        layer = nn.TransformerEncoderLayer(
            d, config.heads, config.feedforward, dropout=0.0, batch_first=True,
            norm_first=True)
        # nested tensors are a prototype fast path that warns; padded attention is exact here
        self.transformer = nn.TransformerEncoder(layer, config.layers,
                                                 enable_nested_tensor=False)
        self.task = mlp(config.task_dim, d, d)
        self.combine = mlp(3 * d, d, d)
        # Plain attributes, not modules or buffers: the state_dict keys stay as they were.
        self.summary_cache: GraphSummaryCache | None = GraphSummaryCache()
        self._packable = packable(self.transformer)
        self._summary_slots = tuple((module, name) for part in (
            self.tokens, self.positions, self.transformer) for module in part.modules()
            for name in module._parameters)

    def forward(self, graph: Tensor, positions: Tensor, graph_valid: Tensor, tasks: Tensor,
                candidate_valid: Tensor) -> Tensor:
        """(B, C, K, .) graphs and (B, C, task_dim) tasks -> (B, C, d); padded rows are 0."""
        batch, candidates = candidate_valid.shape
        if not bool(candidate_valid.any()):
            return graph.new_zeros(batch, candidates, self.tokens.out_features)
        if bool(candidate_valid.all()):  # nothing padded (one decision): reshapes, no masks
            return self._embed(graph.flatten(0, 1), positions.flatten(0, 1),
                               graph_valid.flatten(0, 1), tasks.flatten(0, 1)).view(
                                   batch, candidates, -1)
        out = graph.new_zeros(batch, candidates, self.tokens.out_features)
        out[candidate_valid] = self._embed(graph[candidate_valid], positions[candidate_valid],
                                           graph_valid[candidate_valid], tasks[candidate_valid])
        return out

    def _embed(self, graph: Tensor, positions: Tensor, valid: Tensor, tasks: Tensor) -> Tensor:
        """(M, K, .) graphs and (M, task_dim) tasks of M real candidates -> (M, d)."""
        cache = self.summary_cache
        if cache is None or torch.is_grad_enabled() or graph.device.type != "cpu":
            summary = self._summarise(graph, positions, valid)
        else:
            summary = cache.summaries(graph, positions, valid, self._summary_parameters(),
                                      self._summarise)
        return self.combine_summaries(summary, tasks)

    def embed_distinct(self, graphs: DistinctGraphs, tasks: Tensor,
                       candidate_valid: Tensor) -> Tensor:
        """`forward`'s (B, C, d) when the candidates' graphs come as distinct ones: each is
        summarised once, with only its valid slots computed where the encoder allows it, and
        its gradient is the sum over the candidates that share it (training's evaluation: many
        candidates of a minibatch share a job's graph)."""
        summary = self.summarise(graphs.graph, graphs.positions, graphs.valid,
                                 packed=self._packable, groups=graphs.groups).index_select(
                                     0, graphs.of_candidate)
        out = tasks.new_zeros(*candidate_valid.shape, self.tokens.out_features)
        out[candidate_valid] = self.combine_summaries(summary, tasks[candidate_valid])
        return out

    def combine_summaries(self, summary: Tensor, tasks: Tensor) -> Tensor:
        """(M, 2d) graph summaries and (M, task_dim) task rows -> (M, d) candidates."""
        return run_mlp(self.combine, torch.cat([summary, run_mlp(self.task, tasks)], dim=-1))

    def _summarise(self, graph: Tensor, positions: Tensor, valid: Tensor) -> Tensor:
        """Without gradients, only the valid slots are computed at all (`packed_encoder`)."""
        return self.summarise(graph, positions, valid,
                              packed=not torch.is_grad_enabled() and self._packable)

    def summarise(self, graph: Tensor, positions: Tensor, valid: Tensor, *,
                  packed: bool, groups: Sequence[int] = ()) -> Tensor:
        """(M, K, .) graphs -> (M, 2d): each candidate's own token and its job's mean token;
        attention runs only over the valid slots. `packed` (only for a `packable` encoder):
        the per-token layers see the valid slots alone; the same values up to rounding, with
        or without gradients; `groups` as `encode_valid` takes them."""
        if packed:
            tokens = self.tokens(graph[valid]) + self.positions(positions[valid])  # (T, d)
            encoded = unpack(encode_valid(self.transformer, tokens, valid, groups), valid)
        else:
            tokens = self.tokens(graph) + self.positions(positions)
            encoded = self.transformer(tokens, src_key_padding_mask=~valid)
        return torch.cat([encoded[:, 0], masked_mean(encoded, valid)], dim=-1)

    def _summary_parameters(self) -> list[Tensor]:
        """The parameters a summary depends on (what the cache follows), looked up afresh: one
        may have been replaced."""
        return [parameter for module, name in self._summary_slots
                if (parameter := module._parameters[name]) is not None]
