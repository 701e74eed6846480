"""The serving process's CPUs: `--cpus 3` or `--cpus 0-3`, pinned with sched_setaffinity, so
the scheduler's latency does not depend on what else runs on the node (one CPU serves
fastest: docs/SERVING.md, "Give it one CPU")."""

from __future__ import annotations

import contextlib
import os

from dagpilot.core.errors import SpecError


def pin(cpus: frozenset[int]) -> frozenset[int]:
    """Pins this process to `cpus`: every thread it has (sched_setaffinity moves one thread;
    those an import started, torch's among them, would keep every CPU) and, through the
    calling thread's mask, every thread it starts later. The CPUs it runs on."""
    allowed = os.sched_getaffinity(0)
    if not cpus <= allowed:
        raise SpecError(",".join(map(str, sorted(cpus))),
                        f"--cpus: not all of these CPUs are available (allowed: "
                        f"{','.join(map(str, sorted(allowed)))})")
    for thread in os.listdir("/proc/self/task"):
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            os.sched_setaffinity(int(thread), cpus)
    return frozenset(os.sched_getaffinity(0))
