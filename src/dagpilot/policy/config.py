"""PolicyConfig: the network's hyper-parameters and the input sizes it was built for.

It is saved in a model's `config.json`, so a stored model rebuilds exactly the network its
weights belong to; `from_dict` refuses input sizes other than the current feature schema's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dagpilot.core.errors import DagpilotError
from dagpilot.state.job_graph import DEFAULT_GRAPH_TASKS
from dagpilot.state.schema import GRAPH, NODE, PAIR, POSITION, TASK

DEFAULT_CANDIDATES = 16


class PolicyConfigError(DagpilotError):
    """A stored policy configuration this code cannot build."""


@dataclass(frozen=True)
class PolicyConfig:
    """Sizes of the network. The `*_dim` fields are the feature schema's; the rest are choices.

    `max_candidates` (C) caps the pods scored per decision and `graph_tasks` (K) the tasks of a
    candidate's job the Transformer reads: together with the node count N they bound the cost
    of a decision at O(C x K^2 x d + N x d^2 + C x N x (pair_rank + pair_dim)).
    """

    d_model: int = 64
    heads: int = 4
    layers: int = 2
    feedforward: int = 128
    pair_rank: int = 32
    max_candidates: int = DEFAULT_CANDIDATES
    graph_tasks: int = DEFAULT_GRAPH_TASKS
    node_dim: int = NODE.dim
    task_dim: int = TASK.dim
    pair_dim: int = PAIR.dim
    graph_dim: int = GRAPH.dim
    position_dim: int = POSITION.dim

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise PolicyConfigError(f"policy {field.name} must be a positive integer, "
                                        f"found {value!r}")
        if self.d_model % self.heads:
            raise PolicyConfigError(f"d_model {self.d_model} is not a multiple of heads "
                                    f"{self.heads}")

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PolicyConfig:
        """The configuration saved by `to_dict`; refuses unknown keys and other input sizes."""
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise PolicyConfigError(f"unknown policy settings: {', '.join(unknown)}")
        config = cls(**dict(raw))
        expected = cls()
        for name in ("node_dim", "task_dim", "pair_dim", "graph_dim", "position_dim"):
            if getattr(config, name) != getattr(expected, name):
                raise PolicyConfigError(
                    f"the model reads {name} = {getattr(config, name)}, this dagpilot's "
                    f"feature schema has {getattr(expected, name)}")
        return config
