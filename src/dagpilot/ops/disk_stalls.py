"""I/O stalls and slow I/O from /proc/diskstats snapshots taken a known interval apart.

A device is stalled when I/Os were in flight all along (its busy time grew by at least 90 %
of the interval) and none completed: the device or its path has stopped answering, which is
how an NVMe timeout or a hung network disk looks before the kernel log says so. It is slow
when I/Os completed at a mean await above 50 ms (the design's moderate congestion).
One file may hold several snapshots one after the other (`cat /proc/diskstats; sleep 5;
cat /proc/diskstats`): a device named again starts the next one.
"""

from __future__ import annotations

from collections.abc import Sequence

from dagpilot.core.errors import InvalidInput
from dagpilot.live.node_agent.diskstats import DiskCounters, parse_diskstats
from dagpilot.ops.findings import Finding

STALL_BUSY_SHARE = 0.9
SLOW_AWAIT_MS = 50.0
NEXT_COMMAND = "iostat -x {device} 5 3; cat /sys/block/{device}/inflight"

Snapshot = dict[str, DiskCounters]


def snapshots(text: str, name: str) -> list[Snapshot]:
    """The snapshots of one diskstats text, in order."""
    blocks: list[list[str]] = [[]]
    seen: set[str] = set()
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        device = fields[2] if len(fields) > 2 else ""
        if device in seen:
            blocks.append([])
            seen = set()
        seen.add(device)
        blocks[-1].append(line)
    return [parse_diskstats("\n".join(block), name) for block in blocks if block]


def findings(taken: Sequence[Snapshot], interval_s: float, name: str) -> list[Finding]:
    """Stalled and slow devices between the first and the last snapshot."""
    if len(taken) < 2:
        raise InvalidInput(name, "", "", "one diskstats snapshot shows no change: give two, "
                           "taken --diskstats-interval seconds apart")
    span_s = interval_s * (len(taken) - 1)
    first, last = taken[0], taken[-1]
    found = []
    for device in sorted(set(first) & set(last)):
        finding = _device_finding(device, first[device], last[device], span_s)
        if finding is not None:
            found.append(finding)
    return found


def _device_finding(device: str, before: DiskCounters, after: DiskCounters,
                    span_s: float) -> Finding | None:
    completed = after.completed_ios - before.completed_ios
    busy_ms = after.busy_ms - before.busy_ms
    if completed < 0 or busy_ms < 0:
        return None  # counters went back: the device was replaced between the snapshots
    command = NEXT_COMMAND.format(device=device)
    if completed == 0 and after.in_flight > 0 and busy_ms >= STALL_BUSY_SHARE * span_s * 1e3:
        return Finding("storage", f"{device}: I/O stalled", (
            f"{after.in_flight} I/Os in flight, none completed in {span_s:g} s; device busy "
            f"{busy_ms / (span_s * 10):.0f} % of that time",), command)
    if completed > 0:
        await_ms = (after.io_ticks_ms - before.io_ticks_ms) / completed
        if await_ms > SLOW_AWAIT_MS:
            return Finding("storage", f"{device}: slow I/O", (
                f"mean await {await_ms:.0f} ms over {completed} I/Os in {span_s:g} s "
                f"(above {SLOW_AWAIT_MS:g} ms)",), command)
    return None
