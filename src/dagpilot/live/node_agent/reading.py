"""What a probe hands the agent: samples, or the reason it cannot measure on this node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from dagpilot.core.errors import DagpilotError

from .metric_names import METRICS_BY_NAME


@dataclass(frozen=True, slots=True)
class Sample:
    """One exported value: a metric of metric_names with its labels in the metric's order."""

    metric: str
    labels: tuple[str, ...]
    value: float


def sample(metric: str, value: float, **labels: str) -> Sample:
    """A Sample whose labels are exactly the metric's (a misspelt label fails here, not later)."""
    spec = METRICS_BY_NAME[metric]
    if set(labels) != set(spec.labels):
        raise ValueError(f"{metric} takes labels {spec.labels}, got {sorted(labels)}")
    return Sample(metric, tuple(labels[name] for name in spec.labels), float(value))


@dataclass(frozen=True, slots=True)
class ProbeReading:
    samples: tuple[Sample, ...]
    # Measured, but not everything: e.g. bandwidth without utilisation (no peak configured).
    note: str = ""


class ProbeUnavailable(DagpilotError):
    """This probe cannot measure on this node (kernel, hardware, kubelet); says why."""

    def __init__(self, probe: str, reason: str) -> None:
        self.probe = probe
        self.reason = reason
        super().__init__(f"probe {probe}: {reason}")


class Probe(Protocol):
    @property
    def name(self) -> str: ...

    def read(self) -> ProbeReading:
        """This period's samples; raises ProbeUnavailable when the node cannot provide them."""
        ...
