"""The engine and Kubernetes overheads fitted to the recorded CWS Nextflow runs.

Only overheads are fitted, never runtimes or scheduling, and only on CALIBRATION_WORKFLOWS:
- configured: Nextflow's `queueSize` 300 (the runs' nextflow.config, cluster.json);
- measured in the traces: one start-up slot per node (each node started about one pod every
  3 s whatever its queue, in every pipeline) and its median start-up time (the median gap
  between consecutive starts on a busy node, 3 s); requests freed at the engine's next poll
  (Nextflow deletes a finished pod when its poll notices it, and kube-scheduler frees a pod's
  requests only when it is deleted);
- searched (`bench/calibrate_overheads.py`: a grid on the mean |relative error| of the
  `original` runs' makespans): the polling period, the submission latency and the log-space
  spread of the start-up delay.
docs/BENCHMARKS.md ("Fidelity") gives the search, the figures and the held-out check.

They are not the SimSettings defaults: they describe Nextflow on that 4-node cluster (its poll
loop, a kubelet that starts pods one at a time), while the defaults serve every workload;
`CWS_OVERHEADS.apply(settings)` puts them on any settings.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from dagpilot.core.config import SimSettings

CALIBRATION_WORKFLOWS = ("ampliseq", "chipseq", "nanoseq")
"""Every other pipeline of the six in name order; atacseq, eager and rnaseq are held out."""


@dataclass(frozen=True)
class Overheads:
    """The overhead settings of SimSettings that the fidelity check fits."""

    poll_interval_s: float
    submit_latency_s: float
    startup_median_s: float
    startup_sigma: float
    startup_slots_per_node: int
    release_at_poll: bool
    engine_queue_size: int

    def apply(self, settings: SimSettings) -> SimSettings:
        """The settings with these overheads."""
        return dataclasses.replace(settings, **self.as_dict())

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def with_changes(self, **changes: Any) -> Overheads:
        return dataclasses.replace(self, **changes)


CWS_OVERHEADS = Overheads(
    poll_interval_s=10.0,
    submit_latency_s=1.5,
    startup_median_s=3.0,
    startup_sigma=0.4,
    startup_slots_per_node=1,
    release_at_poll=True,
    engine_queue_size=300,
)
"""Fitted on CALIBRATION_WORKFLOWS (see the module docstring)."""
