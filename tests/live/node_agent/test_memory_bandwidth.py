"""Memory bandwidth: what this machine offers (the reason when nothing), the uncore_imc path
through a real perf counter, and resctrl MBM's arithmetic on a hand-written tree."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.node_agent import uncore_imc
from dagpilot.live.node_agent.memory_bandwidth import MemoryBandwidthProbe
from dagpilot.live.node_agent.reading import ProbeUnavailable

from .conftest import needs_root

SOFTWARE_PMU_TYPE = 1  # PERF_TYPE_SOFTWARE; config 0 is cpu-clock, nanoseconds on that CPU


class RecordingClock:
    def __init__(self) -> None:
        self.times: list[float] = []

    def __call__(self) -> float:
        self.times.append(time.monotonic())
        return self.times[-1]


def test_this_machine_says_why_it_cannot_count() -> None:
    events = uncore_imc.find_cas_events(Path("/sys"))
    if not isinstance(events, str) or Path("/sys/fs/resctrl/info").is_dir():
        pytest.skip("this machine has a memory-bandwidth counter")
    probe = MemoryBandwidthProbe("n", Path("/sys"), Path("/proc"))
    with pytest.raises(ProbeUnavailable) as caught:
        probe.read()
    assert "uncore_imc" in caught.value.reason
    assert "resctrl" in caught.value.reason


def fake_imc(sys_root: Path, name: str, event: str, pmu_type: int, cpumask: str = "0") -> Path:
    pmu = sys_root / "bus/event_source/devices" / name
    (pmu / "events").mkdir(parents=True)
    (pmu / "format").mkdir()
    (pmu / "type").write_text(f"{pmu_type}\n")
    (pmu / "cpumask").write_text(f"{cpumask}\n")
    (pmu / "format/event").write_text("config:0-7\n")
    (pmu / "format/umask").write_text("config:8-15\n")
    for cas in uncore_imc.CAS_EVENTS:
        (pmu / "events" / cas).write_text(f"{event}\n")
        (pmu / "events" / f"{cas}.scale").write_text("6.103515625e-5\n")
        (pmu / "events" / f"{cas}.unit").write_text("MiB\n")
    return pmu


def test_cas_event_config_scale_and_cpus(tmp_path: Path) -> None:
    fake_imc(tmp_path, "uncore_imc_0", "event=0x04,umask=0x03", 13, "0,36")
    fake_imc(tmp_path, "uncore_imc_free_running_0", "event=0xff", 14)  # other events: ignored
    events = uncore_imc.find_cas_events(tmp_path)
    assert not isinstance(events, str)
    assert [(e.pmu, e.pmu_type, e.config, e.bytes_per_count, e.cpus) for e in events] == [
        ("uncore_imc_0", 13, 0x0304, 64.0, (0, 36))] * 2


def test_a_pmu_without_cas_events_is_a_reason(tmp_path: Path) -> None:
    pmu = fake_imc(tmp_path, "uncore_imc_0", "event=0x04,umask=0x03", 13)
    (pmu / "events/cas_count_write").unlink()
    reason = uncore_imc.find_cas_events(tmp_path)
    assert isinstance(reason, str)
    assert "cas_count_read / cas_count_write" in reason


def test_uncore_path_reads_a_real_perf_counter(tmp_path: Path) -> None:
    """The kernel's software cpu-clock PMU stands in for a memory controller: it counts the
    nanoseconds CPU 0 runs, so the 'bandwidth' must be 2 events x 1e9 counts/s x 64 bytes."""
    needs_root()
    fake_imc(tmp_path, "uncore_imc_0", "event=0x00", SOFTWARE_PMU_TYPE)
    clock = RecordingClock()
    probe = MemoryBandwidthProbe("n", tmp_path, tmp_path, peak_bytes_per_s=256e9, clock=clock)
    try:
        assert probe.read().samples == ()  # baseline
        time.sleep(0.3)  # time for the counter to count, not a wait for a condition
        samples = {s.metric: s for s in probe.read().samples}
    finally:
        probe.close()
    rate = samples[m.MEMORY_BANDWIDTH_BYTES_PER_SECOND]
    assert rate.labels == ("n", "uncore_imc")
    assert rate.value == pytest.approx(2 * 1e9 * 64, rel=0.1)
    assert samples[m.MEMORY_BANDWIDTH_UTILISATION].value == pytest.approx(rate.value / 256e9)


def test_perf_event_open_failure_is_a_reason(tmp_path: Path) -> None:
    fake_imc(tmp_path, "uncore_imc_0", "event=0x04", 4242)  # no PMU has this type
    with pytest.raises(ProbeUnavailable, match=r"uncore_imc: .*perf_event_open\(type=4242"):
        MemoryBandwidthProbe("n", tmp_path, tmp_path).read()


def resctrl_tree(sys_root: Path, root_bytes: tuple[int, int], group_bytes: int) -> None:
    mount = sys_root / "fs/resctrl"
    (mount / "info/L3_MON").mkdir(parents=True, exist_ok=True)
    (mount / "info/L3_MON/mon_features").write_text("llc_occupancy\nmbm_total_bytes\n"
                                                    "mbm_local_bytes\n")
    for domain, value in zip(("mon_L3_00", "mon_L3_01"), root_bytes, strict=True):
        (mount / "mon_data" / domain).mkdir(parents=True, exist_ok=True)
        (mount / "mon_data" / domain / "mbm_total_bytes").write_text(f"{value}\n")
    group = mount / "batch" / "mon_data" / "mon_L3_00"
    group.mkdir(parents=True, exist_ok=True)
    (group / "mbm_total_bytes").write_text(f"{group_bytes}\n")
    sub = mount / "batch" / "mon_groups" / "job1" / "mon_data" / "mon_L3_00"
    sub.mkdir(parents=True, exist_ok=True)
    (sub / "mbm_total_bytes").write_text("999999999999\n")  # inside "batch": not added again


def test_resctrl_mbm_sums_groups_and_domains(tmp_path: Path) -> None:
    resctrl_tree(tmp_path, (1_000, 2_000), 3_000)
    clock = iter([10.0, 12.0])
    probe = MemoryBandwidthProbe("n", tmp_path, tmp_path, clock=lambda: next(clock))
    first = probe.read()
    assert first.samples == ()
    resctrl_tree(tmp_path, (5_000, 4_000), 7_000)  # +4,000 +2,000 +4,000 bytes in 2 s
    reading = probe.read()
    assert [(s.metric, s.labels, s.value) for s in reading.samples] == [
        (m.MEMORY_BANDWIDTH_BYTES_PER_SECOND, ("n", "resctrl_mbm"), 5_000.0)]
    assert "peak-memory-bandwidth" in reading.note


def test_resctrl_reasons(tmp_path: Path) -> None:
    (tmp_path / "filesystems").write_text("nodev\tsysfs\nnodev\tresctrl\n")
    with pytest.raises(ProbeUnavailable, match="resctrl: not mounted at"):
        MemoryBandwidthProbe("n", tmp_path, tmp_path).read()
    (tmp_path / "fs/resctrl/info/L3_MON").mkdir(parents=True)
    (tmp_path / "fs/resctrl/info/L3_MON/mon_features").write_text("llc_occupancy\n")
    with pytest.raises(ProbeUnavailable, match="resctrl: no mbm_total_bytes"):
        MemoryBandwidthProbe("n", tmp_path, tmp_path).read()
