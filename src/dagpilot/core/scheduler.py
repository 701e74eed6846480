"""The Scheduler protocol the simulator and the serving side call, and the Placement it returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView, PodRef


@dataclass(frozen=True, slots=True)
class Placement:
    """A binding of one pending pod to a node, with the scheduler's reasons."""

    pod: PodRef
    node: str
    gpus: tuple[int, ...] = ()  # indices into the node's GPUs; empty lets the node pick
    score: float = 0.0
    alternatives: tuple[tuple[str, float], ...] = ()  # the runners-up: (node, score)
    rejected: tuple[tuple[str, str], ...] = ()  # (node, why it was filtered out)


class Scheduler(Protocol):
    """Chooses placements one at a time.

    At a decision point the caller calls `decide` until it returns None, applying each placement
    to the view before the next call. None means: place nothing more until something changes.
    """

    name: str

    def reset(self, cluster: Cluster, rng: np.random.Generator) -> None:
        """Forget everything from a previous run; `rng` breaks ties."""
        ...

    def decide(self, view: ClusterView) -> Placement | None: ...
