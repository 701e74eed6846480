"""Storage await per device: iostat's arithmetic over the agent's period.

await = (Δ ms reading + Δ ms writing + Δ ms discarding) / (Δ reads + Δ writes + Δ discards)
completed, as sysstat computes it from /proc/diskstats; 0 for a period without a completed I/O,
as iostat prints. Raw milliseconds: the levels 0-3 are the state encoder's (state/bands.py).
The first read only sets the baseline. Whole disks (those in /sys/block) are reported, minus
loop, ram and zram devices unless a device pattern is given.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import metric_names as m
from .diskstats import DiskCounters, read_diskstats
from .reading import ProbeReading, Sample, sample

DEFAULT_EXCLUDED = re.compile(r"(loop|ram|zram)\d+")


@dataclass
class DiskAwaitProbe:
    node: str
    proc_root: Path
    sys_root: Path
    devices: re.Pattern[str] | None = None  # report exactly these names (whole disks or not)
    clock: Callable[[], float] = time.monotonic
    name: str = m.PROBE_DISK_AWAIT
    _previous: dict[str, DiskCounters] = field(default_factory=dict)
    _previous_s: float = 0.0

    def read(self) -> ProbeReading:
        now = self.clock()
        current = {name: counters for name, counters
                   in read_diskstats(self.proc_root / "diskstats").items() if self._wanted(name)}
        samples: list[Sample] = []
        elapsed = now - self._previous_s
        for device, counters in current.items():
            before = self._previous.get(device)
            if before is None or elapsed <= 0:
                continue
            ios = counters.completed_ios - before.completed_ios
            ticks = counters.io_ticks_ms - before.io_ticks_ms
            if ios < 0 or ticks < 0:  # the device was replaced: a new baseline
                continue
            samples += [sample(m.DISK_AWAIT_MILLISECONDS, ticks / ios if ios else 0.0,
                               node=self.node, device=device),
                        sample(m.DISK_IOS_PER_SECOND, ios / elapsed, node=self.node,
                               device=device)]
        self._previous, self._previous_s = current, now
        return ProbeReading(tuple(samples))

    def _wanted(self, device: str) -> bool:
        if self.devices is not None:
            return self.devices.fullmatch(device) is not None
        whole_disk = (self.sys_root / "block" / device).exists()
        return whole_disk and DEFAULT_EXCLUDED.fullmatch(device) is None
