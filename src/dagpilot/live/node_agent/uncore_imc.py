"""DRAM traffic from the memory controllers' CAS counters (Intel uncore_imc PMUs).

Every read or write burst the controller issues is one CAS command of one cache line. The
kernel describes each PMU under /sys/bus/event_source/devices/uncore_imc_N: its perf `type`,
the CPUs to open it on (`cpumask`, one per socket), the events `cas_count_read` and
`cas_count_write` (`event=0x04,umask=0x03`), their `.scale` and `.unit` (6.103515625e-5 MiB,
i.e. 64 bytes), and `format/` saying which config bits each term fills.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dagpilot.core.errors import InvalidInput

from .perf_event import PerfCounter

NAME = "uncore_imc"
CAS_EVENTS = ("cas_count_read", "cas_count_write")
CACHE_LINE_BYTES = 64.0
_UNITS = {"B": 1.0, "bytes": 1.0, "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30}


@dataclass(frozen=True, slots=True)
class UncoreEvent:
    pmu: str
    pmu_type: int
    config: int
    bytes_per_count: float
    cpus: tuple[int, ...]


def find_cas_events(sys_root: Path) -> list[UncoreEvent] | str:
    """Both CAS events of every uncore_imc PMU, or why there are none."""
    devices = sys_root / "bus" / "event_source" / "devices"
    pmus = sorted(path for path in devices.glob("uncore_imc*") if "free_running" not in path.name)
    if not pmus:
        return (f"no uncore_imc PMU under {devices} (not an Intel server CPU, or a VM that "
                "does not pass the uncore PMUs through)")
    events: list[UncoreEvent] = []
    for pmu in pmus:
        if not all((pmu / "events" / event).is_file() for event in CAS_EVENTS):
            return f"{pmu} has no {' / '.join(CAS_EVENTS)} events"
        events += [_event(pmu, name) for name in CAS_EVENTS]
    return events


class UncoreImcCounter:
    """The node's DRAM bytes so far: every CAS event on every PMU, summed."""

    name = NAME

    def __init__(self, events: list[UncoreEvent]) -> None:
        self._counters: list[tuple[PerfCounter, float]] = []
        try:
            for event in events:
                for cpu in event.cpus:
                    counter = PerfCounter(event.pmu_type, event.config, cpu)
                    self._counters.append((counter, event.bytes_per_count))
        except OSError:
            self.close()
            raise

    def bytes_total(self) -> float:
        return sum(counter.value() * scale for counter, scale in self._counters)

    def close(self) -> None:
        for counter, _ in self._counters:
            counter.close()
        self._counters = []


def _event(pmu: Path, name: str) -> UncoreEvent:
    spec_path = pmu / "events" / name
    config = 0
    for term in spec_path.read_text().strip().split(","):
        key, _, value = term.partition("=")
        config |= _placed(_number(value or "1", spec_path, key), _format(pmu, key))
    return UncoreEvent(pmu.name, int((pmu / "type").read_text()), config,
                       _bytes_per_count(pmu / "events", name),
                       _cpu_list((pmu / "cpumask").read_text()))


def _format(pmu: Path, term: str) -> list[tuple[int, int]]:
    """The bit ranges (low, high) of `config` a term fills: format/<term> holds `config:0-7`."""
    path = pmu / "format" / term
    field, _, ranges = path.read_text().strip().partition(":")
    if field != "config":
        raise InvalidInput(str(path), "", term, f"only `config` bits are supported, not {field}")
    bits: list[tuple[int, int]] = []
    for part in ranges.split(","):
        low, _, high = part.partition("-")
        bits.append((int(low), int(high or low)))
    return bits


def _placed(value: int, bits: list[tuple[int, int]]) -> int:
    """`value` spread over the bit ranges, low bits first (as perf's tools do)."""
    placed, shift = 0, 0
    for low, high in bits:
        width = high - low + 1
        placed |= ((value >> shift) & ((1 << width) - 1)) << low
        shift += width
    return placed


def _bytes_per_count(events: Path, name: str) -> float:
    scale_path, unit_path = events / f"{name}.scale", events / f"{name}.unit"
    if not scale_path.is_file():
        return CACHE_LINE_BYTES
    unit = unit_path.read_text().strip() if unit_path.is_file() else "B"
    if unit not in _UNITS:
        raise InvalidInput(str(unit_path), "", "unit", f"unknown unit {unit!r}")
    return float(scale_path.read_text()) * _UNITS[unit]


def _number(text: str, path: Path, term: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise InvalidInput(str(path), "", term, f"not a number: {text!r}") from None


def _cpu_list(text: str) -> tuple[int, ...]:
    """A kernel CPU list such as `0,36` or `0-3,8`."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        low, _, high = part.partition("-")
        cpus += range(int(low), int(high or low) + 1)
    return tuple(cpus)
