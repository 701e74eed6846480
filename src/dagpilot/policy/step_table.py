"""StepTable: an iteration's stored decisions collated once, for PPO's many minibatches.

`evaluate(inputs, actions)` collates its inputs at every call, and PPO calls it for every
minibatch of every epoch: the same decisions padded again and again, and every candidate's
task graph through the Transformer although most of a minibatch's candidates share a few
graphs. The table holds the decisions' arrays once, as torch tensors: node rows per decision;
the candidates' rows (task features, feasibility, bias, job row) one after another in a pool,
the jobs' distance rows likewise, each behind a row of zeros that padding reads; the distinct
graphs once (`DistinctGraphs`). `rows(index)` gathers a minibatch padded to its own largest C, N
and J, as `collate` pads it, with its distinct graphs, so that `PolicyNet.evaluate_rows`
computes what `evaluate` does on those inputs, up to float rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor

from dagpilot.policy.distinct_graphs import DistinctGraphs, widened
from dagpilot.policy.inputs import PolicyInput
from dagpilot.policy.unique_rows import unique_rows


@dataclass(frozen=True)
class StepRows:
    """A minibatch of the table: `Batch`'s fields but the graphs, which come distinct, and
    each decision's action as a flat index into the minibatch's (C, N) grid."""

    node_rows: Tensor  # (U, node_dim) the distinct node rows of the minibatch
    node_of: Tensor  # (B, N) each decision's nodes as rows of `node_rows`
    node_valid: Tensor  # (B, N)
    tasks: Tensor  # (B, C, task_dim)
    candidate_valid: Tensor  # (B, C)
    pairs: Tensor  # (B, J, N, pair_dim)
    pair_job: Tensor  # (B, C)
    feasible: Tensor  # (B, C, N)
    bias: Tensor | None  # (B, C, N)
    graphs: DistinctGraphs
    actions: Tensor  # (B,)


@dataclass(frozen=True)
class StepTable:
    """S decisions; `*_slot[s, i]` is the pool row of decision s's i-th candidate or job, 0
    (the zero row) past its count."""

    node_rows: Tensor  # (distinct rows, node_dim), a row of zeros among them (padding)
    node_of: Tensor  # (S, N_max) each decision's nodes as rows of `node_rows`
    node_counts: Tensor  # (S,)
    candidate_slot: Tensor  # (S, C_max)
    candidate_counts: Tensor  # (S,)
    tasks: Tensor  # (1 + candidates, task_dim)
    feasible: Tensor  # (1 + candidates, N_max)
    bias: Tensor | None  # (1 + candidates, N_max); None: no decision has one
    pair_job: Tensor  # (1 + candidates,)
    graph_of: Tensor  # (1 + candidates,) row of the candidate's graph in `graphs.graph`
    job_slot: Tensor  # (S, J_max)
    job_counts: Tensor  # (S,) at least 1, as `collate` counts a decision's job rows
    pairs: Tensor  # (1 + jobs, N_max, pair_dim)
    graphs: DistinctGraphs  # every candidate's graph
    graph_widths: Tensor  # (distinct graphs,) their used slots
    action_candidate: Tensor  # (S,)
    action_node: Tensor  # (S,)

    def __len__(self) -> int:
        return int(self.node_of.shape[0])

    @classmethod
    def of(cls, inputs: Sequence[PolicyInput], actions: Sequence[int]) -> StepTable:
        """The decisions and the actions taken there (flat indices into each input's grid)."""
        if not inputs or len(inputs) != len(actions):
            raise ValueError("a step table needs one action for each of at least one input")
        observations = [item.observation for item in inputs]
        candidates = [len(o.task_features) for o in observations]
        jobs = [len(o.pair_features) for o in observations]
        node_counts = [len(o.node_features) for o in observations]
        widest = max(node_counts)
        graphs = DistinctGraphs.of(observations)
        action_candidate, action_node = np.divmod(np.asarray(actions, np.int64),
                                                  np.asarray(node_counts, np.int64))
        node_rows, node_of = _distinct_rows(_padded([o.node_features for o in observations],
                                                    widest))
        return cls(
            node_rows=node_rows, node_of=node_of,
            node_counts=torch.tensor(node_counts),
            candidate_slot=_slots(candidates), candidate_counts=torch.tensor(candidates),
            tasks=_pooled([o.task_features for o in observations]),
            feasible=_pooled([widened(item.feasible, widest) for item in inputs], np.bool_),
            bias=None if all(item.bias is None for item in inputs) else _pooled(
                [widened(np.zeros(item.shape, np.float32) if item.bias is None
                          else item.bias, widest) for item in inputs]),
            pair_job=_pooled([o.pair_job for o in observations], np.int64),
            graph_of=torch.cat([torch.zeros(1, dtype=torch.int64), graphs.of_candidate]),
            job_slot=_slots(jobs), job_counts=torch.tensor([max(j, 1) for j in jobs]),
            pairs=_pooled([widened(o.pair_features, widest) for o in observations]),
            graphs=graphs, graph_widths=graphs.used_slots(),
            action_candidate=torch.from_numpy(action_candidate),
            action_node=torch.from_numpy(action_node))

    def rows(self, index: Tensor) -> StepRows:
        """The decisions at `index` (B,), padded as `collate` pads them."""
        nodes = int(self.node_counts[index].max())
        candidate = self.candidate_slot[index, :int(self.candidate_counts[index].max())]
        job = self.job_slot[index, :int(self.job_counts[index].max())]
        candidate_valid = candidate > 0
        node_of = self.node_of[index, :nodes]
        distinct_nodes, node_of = torch.unique(node_of, return_inverse=True)
        return StepRows(
            node_rows=self.node_rows[distinct_nodes], node_of=node_of,
            node_valid=torch.arange(nodes)[None, :] < self.node_counts[index, None],
            tasks=self.tasks[candidate], candidate_valid=candidate_valid,
            pairs=self.pairs[job, :nodes], pair_job=self.pair_job[candidate],
            feasible=self.feasible[candidate, :nodes],
            bias=None if self.bias is None else self.bias[candidate, :nodes],
            graphs=self._distinct(self.graph_of[candidate[candidate_valid]]),
            actions=self.action_candidate[index] * nodes + self.action_node[index])

    def _distinct(self, graph_rows: Tensor) -> DistinctGraphs:
        """The graphs of M candidates, each distinct one once, narrowest first, cut to their
        used slots, in two attention groups where that pads much less."""
        distinct, of_candidate = torch.unique(graph_rows, return_inverse=True)
        widths, order = torch.sort(self.graph_widths[distinct], stable=True)
        distinct = distinct[order]
        place = torch.empty_like(order)
        place[order] = torch.arange(len(order))
        width = int(widths[-1])
        return DistinctGraphs(self.graphs.graph[distinct, :width],
                              self.graphs.positions[distinct, :width],
                              self.graphs.valid[distinct, :width], place[of_candidate],
                              _attention_groups(widths.tolist()))


def _attention_groups(widths: list[int]) -> tuple[int, ...]:
    """Ascending widths -> the graphs in each attention group: the split into two with the
    fewest padded slots, taken when it saves a third of them (each group costs its own
    calls)."""
    whole = len(widths) * widths[-1]
    cost, split = min((count * widths[count - 1] + (len(widths) - count) * widths[-1], count)
                      for count in range(1, len(widths) + 1))
    if cost > whole * 2 / 3 or split == len(widths):
        return ()
    return (split, len(widths) - split)


def _slots(counts: Sequence[int]) -> Tensor:
    """(S, max count): pool rows 1, 2, ... of each decision's items in order, 0 past them."""
    widest = max(*counts, 1)
    starts = np.cumsum([0, *counts[:-1]]) + 1
    index = np.arange(widest)[None, :]
    lengths = np.asarray(counts)[:, None]
    return torch.from_numpy(np.where(index < lengths, starts[:, None] + index, 0))


def _pooled(arrays: Sequence[npt.NDArray[np.generic]],
            dtype: type[np.generic] = np.float32) -> Tensor:
    """The arrays' rows one after another, behind one row of zeros."""
    tail = arrays[0].shape[1:]
    return torch.from_numpy(np.concatenate(
        [np.zeros((1, *tail), dtype), *(np.asarray(a, dtype) for a in arrays)]))


def _padded(arrays: Sequence[npt.NDArray[np.float32]], nodes: int) -> npt.NDArray[np.float32]:
    """(n_s, D) arrays -> (S, nodes, D), zeros past each one's rows."""
    if all(len(array) == nodes for array in arrays):
        return np.stack(arrays).astype(np.float32, copy=False)
    out = np.zeros((len(arrays), nodes, arrays[0].shape[-1]), np.float32)
    for row, array in enumerate(arrays):
        out[row, :len(array)] = array
    return out


def _distinct_rows(rows: npt.NDArray[np.float32]) -> tuple[Tensor, Tensor]:
    """(S, N, D) -> the distinct (exact bytes) rows (U, D) and (S, N) the row of each."""
    flat = np.ascontiguousarray(rows.reshape(-1, rows.shape[-1]))
    first, inverse = unique_rows(flat)
    return (torch.from_numpy(flat[first]),
            torch.from_numpy(inverse.reshape(rows.shape[:2]).astype(np.int64)))
