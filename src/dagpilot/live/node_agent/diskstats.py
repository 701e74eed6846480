"""/proc/diskstats: per device, the completed I/Os and the milliseconds they took."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dagpilot.core.errors import InvalidInput

_MIN_FIELDS = 14  # major, minor, name and the 11 fields every kernel since 2.6 writes
_WITH_DISCARDS = 18  # Linux 4.18 added discards (fields 15-18)


@dataclass(frozen=True, slots=True)
class DiskCounters:
    """Cumulative counters of one device: reads, writes and discards (where the kernel counts
    them), as iostat reads them."""

    completed_ios: int
    io_ticks_ms: int  # the time those I/Os took, summed (not the time the device was busy)
    in_flight: int = 0  # I/Os issued and not completed at the time of reading
    busy_ms: int = 0  # time the device had I/O in flight (iostat's %util numerator)


def read_diskstats(path: Path) -> dict[str, DiskCounters]:
    """Device name -> its counters, for every line of the file."""
    return parse_diskstats(path.read_text(), str(path))


def parse_diskstats(text: str, name: str) -> dict[str, DiskCounters]:
    """Device name -> its counters, for every line of a diskstats text read from `name`."""
    counters: dict[str, DiskCounters] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if len(fields) < _MIN_FIELDS or not all(f.isdigit() for f in fields[3:]):
            raise InvalidInput(name, f"line {number}", "",
                               f"expected major, minor, name and at least 11 counters: {line!r}")
        values = [int(field) for field in fields[3:]]
        reads, read_ms, writes, write_ms = values[0], values[3], values[4], values[7]
        discards, discard_ms = (values[11], values[14]) if len(fields) >= _WITH_DISCARDS else (0, 0)
        counters[fields[2]] = DiskCounters(reads + writes + discards,
                                           read_ms + write_ms + discard_ms,
                                           in_flight=values[8], busy_ms=values[9])
    return counters
