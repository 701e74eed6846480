"""The agent's loop: every period, run each probe, publish what they measured and their status.

A probe that cannot measure (ProbeUnavailable) or fails in any other way is reported through
dagpilot_probe_available{probe, reason} = 0 and exports nothing that period; the others go on.
Periods are kept on a fixed grid: a slow period shortens the wait after it, and a period that
overruns the next tick starts the following one at once instead of piling up.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from . import metric_names as m
from .config import AgentConfig
from .exporter import Exporter, SnapshotCollector
from .probes import build_probes
from .reading import Probe, ProbeUnavailable, Sample, sample

log = logging.getLogger(__name__)


class NodeAgent:
    def __init__(self, node: str, probes: Sequence[Probe], collector: SnapshotCollector,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self.node = node
        self.probes = list(probes)
        self.collector = collector
        self._wall_clock = wall_clock
        self._last_reason: dict[str, str] = {}
        self.periods = 0

    def collect_once(self) -> list[Sample]:
        """One period: every probe measured, the whole set published at once."""
        samples: list[Sample] = []
        for probe in self.probes:
            samples += self._measure(probe)
        self.collector.publish(samples)
        self.periods += 1
        return samples

    def run(self, stop: threading.Event, period_s: float) -> None:
        """Collect every period_s until `stop` is set."""
        next_tick = time.monotonic()
        while not stop.is_set():
            self.collect_once()
            next_tick += period_s
            now = time.monotonic()
            next_tick = max(next_tick, now)  # after an overrun, skip the ticks missed
            stop.wait(next_tick - now)

    def close(self) -> None:
        for probe in self.probes:
            close = getattr(probe, "close", None)
            if callable(close):
                close()

    def _measure(self, probe: Probe) -> list[Sample]:
        started = time.perf_counter()
        samples: list[Sample] = []
        try:
            reading = probe.read()
            samples += reading.samples
            reason, available = reading.note, 1.0
        except ProbeUnavailable as error:
            reason, available = error.reason, 0.0
        except Exception as error:  # one broken probe must not stop the others
            reason, available = f"{type(error).__name__}: {error}", 0.0
        self._log_change(probe.name, reason, available)
        labels = {m.NODE: self.node, m.PROBE: probe.name}
        samples += [sample(m.PROBE_AVAILABLE, available, reason=reason, **labels),
                    sample(m.PROBE_DURATION_SECONDS, time.perf_counter() - started, **labels)]
        if available:
            samples.append(sample(m.PROBE_SAMPLE_TIMESTAMP_SECONDS, self._wall_clock(),
                                  **labels))
        return samples

    def _log_change(self, probe: str, reason: str, available: float) -> None:
        """Log a probe's status when it changes, not every period."""
        if self._last_reason.get(probe) == reason:
            return
        self._last_reason[probe] = reason
        if not available:
            log.warning("probe %s unavailable: %s", probe, reason)
        elif reason:
            log.info("probe %s: %s", probe, reason)


def serve(config: AgentConfig, stop: threading.Event,
          ready: Callable[[int], None] = lambda port: None) -> None:
    """The whole agent: probes, exporter on config.port, the loop until `stop` is set.

    `ready` gets the port once metrics are served (the real one when config.port is 0).
    """
    collector = SnapshotCollector()
    agent = NodeAgent(config.node_name, build_probes(config), collector)
    exporter = Exporter(collector, config.address, config.port)
    try:
        ready(exporter.port)
        agent.run(stop, config.period_s)
    finally:
        exporter.stop()
        agent.close()
