"""What limits a recorded task: CPU share, I/O share and the task class derived from them.

Traces record averages, not profiles, so the rule is deliberately simple:
- cpu_intensity = recorded CPU utilisation (percent of one core) / 100 / cores, clamped to 0..1;
- io_intensity = the share of the runtime a reference disk (REFERENCE_DISK_BYTES_S) would spend
  moving the recorded bytes, capped by the share the CPU left idle (a task busy on its cores 99 %
  of the time read its bytes from the page cache, not from a disk); 0 for a task with no runtime;
- the class is IO when the I/O share beats the CPU share (so the CPU share is under one half),
  CPU otherwise.
"""

from __future__ import annotations

import math

from dagpilot.core.types import TaskClass

REFERENCE_DISK_BYTES_S = 200e6  # a common SSD's sustained throughput


def _clamp01(value: float) -> float:
    return min(1.0, max(0.0, value))


def cpu_share(cpu_percent: float | None, cores: float) -> float:
    """Share of the requested cores kept busy; 1.0 when nothing was recorded."""
    if cpu_percent is None or math.isnan(cpu_percent) or cores <= 0 or math.isnan(cores):
        return 1.0
    return _clamp01(cpu_percent / 100.0 / cores)


def io_share(bytes_moved: float, runtime_s: float, cpu_intensity: float) -> float:
    """Share of the runtime spent waiting on storage to move `bytes_moved`."""
    if not runtime_s > 0 or not bytes_moved > 0:  # also false for NaN
        return 0.0
    return min(_clamp01(bytes_moved / REFERENCE_DISK_BYTES_S / runtime_s), 1.0 - cpu_intensity)


def task_class(cpu_intensity: float, io_intensity: float) -> TaskClass:
    return TaskClass.IO if io_intensity > cpu_intensity else TaskClass.CPU
