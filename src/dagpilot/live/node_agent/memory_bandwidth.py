"""Memory-bandwidth pressure: the node's DRAM traffic, and its share of the peak when known.

Sources, first that works: the memory controllers' CAS counters (uncore_imc.py, through
perf_event_open), then resctrl MBM (resctrl_mbm.py). Without either the probe is unavailable
with both reasons: no number is made up. Traffic over the configured peak is the utilisation the
live view reports as `membw_utilisation`; MBPI is the state encoder's function of it
(state/bands.py), one definition. The first read only sets the baseline.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from . import metric_names as m
from . import resctrl_mbm, uncore_imc
from .reading import ProbeReading, ProbeUnavailable, sample


class TrafficCounter(Protocol):
    @property
    def name(self) -> str: ...

    def bytes_total(self) -> float: ...

    def close(self) -> None: ...


@dataclass
class MemoryBandwidthProbe:
    node: str
    sys_root: Path
    proc_root: Path
    peak_bytes_per_s: float | None = None  # the node's peak DRAM bandwidth, when configured
    clock: Callable[[], float] = time.monotonic
    name: str = m.PROBE_MEMORY_BANDWIDTH
    _counter: TrafficCounter | None = None
    _previous: tuple[float, float] | None = None  # (time, bytes)

    def read(self) -> ProbeReading:
        counter = self._counter or self._open()
        now, total = self.clock(), counter.bytes_total()
        previous, self._previous = self._previous, (now, total)
        if previous is None or now <= previous[0] or total < previous[1]:
            return ProbeReading((), note="baseline: the first rate comes next period")
        rate = (total - previous[1]) / (now - previous[0])
        samples = [sample(m.MEMORY_BANDWIDTH_BYTES_PER_SECOND, rate, node=self.node,
                          source=counter.name)]
        if self.peak_bytes_per_s is None:
            return ProbeReading(tuple(samples), note="utilisation needs --peak-memory-bandwidth")
        samples.append(sample(m.MEMORY_BANDWIDTH_UTILISATION, rate / self.peak_bytes_per_s,
                              node=self.node, source=counter.name))
        return ProbeReading(tuple(samples))

    def close(self) -> None:
        if self._counter is not None:
            self._counter.close()
            self._counter = None

    def _open(self) -> TrafficCounter:
        events = uncore_imc.find_cas_events(self.sys_root)
        if isinstance(events, str):
            uncore_reason = events
        else:
            try:
                self._counter = uncore_imc.UncoreImcCounter(events)
                return self._counter
            except OSError as error:
                uncore_reason = f"uncore_imc: {error}"
        resctrl_reason = resctrl_mbm.unavailable_reason(self.sys_root, self.proc_root)
        if resctrl_reason is None:
            self._counter = resctrl_mbm.ResctrlMbmCounter(self.sys_root)
            return self._counter
        raise ProbeUnavailable(self.name, f"{uncore_reason}; {resctrl_reason}")
