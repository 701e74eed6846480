"""Storage await: iostat's arithmetic on hand-written /proc/diskstats snapshots, and the probe
against timed direct writes to a real loop device of the test's own."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.node_agent.disk_await import DiskAwaitProbe

from .conftest import KubeCgroups, needs_root, run

# major minor name, then reads, merged, sectors, ms reading, writes, merged, sectors, ms writing,
# in flight, ms busy, weighted ms, discards, merged, sectors, ms discarding, flushes, ms flushing
BEFORE = """\
 254 0 vda 1000 0 8000 500 2000 0 16000 1500 0 900 2000 10 0 80 100 5 50
 254 1 vda1 900 0 7000 400 1900 0 15000 1400 0 800 1800 0 0 0 0 0 0
   7 0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 259 0 nvme0n1 100 0 800 10 100 0 800 10 0 20 20
"""
AFTER = """\
 254 0 vda 1100 0 8800 700 2290 0 18000 2900 0 1500 4000 20 0 160 200 6 60
 254 1 vda1 1000 0 7800 600 2190 0 17000 2800 0 1400 3800 0 0 0 0 0 0
   7 0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 259 0 nvme0n1 100 0 800 10 100 0 800 10 0 20 20
"""


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fake_host(tmp_path: Path) -> tuple[Path, Path]:
    proc, sys = tmp_path / "proc", tmp_path / "sys"
    proc.mkdir()
    for disk in ("vda", "loop0", "nvme0n1"):  # whole disks; vda1 is a partition
        (sys / "block" / disk).mkdir(parents=True)
    return proc, sys


def test_await_is_iostat_arithmetic(tmp_path: Path) -> None:
    proc, sys = fake_host(tmp_path)
    clock = Clock()
    probe = DiskAwaitProbe("n", proc, sys, clock=clock)
    (proc / "diskstats").write_text(BEFORE)
    assert probe.read().samples == ()  # the first read is the baseline
    (proc / "diskstats").write_text(AFTER)
    clock.now = 5.0
    got = {(s.metric, s.labels[1]): s.value for s in probe.read().samples}
    # vda: (200 + 1400 + 100) ms over (100 + 290 + 10) I/Os; nvme0n1 idle; loop0 and the
    # partition vda1 are not reported.
    assert got == {(m.DISK_AWAIT_MILLISECONDS, "vda"): 1700 / 400,
                   (m.DISK_IOS_PER_SECOND, "vda"): 400 / 5,
                   (m.DISK_AWAIT_MILLISECONDS, "nvme0n1"): 0.0,
                   (m.DISK_IOS_PER_SECOND, "nvme0n1"): 0.0}


def test_a_replaced_device_starts_a_new_baseline(tmp_path: Path) -> None:
    proc, sys = fake_host(tmp_path)
    clock = Clock()
    probe = DiskAwaitProbe("n", proc, sys, re.compile("vda"), clock=clock)
    (proc / "diskstats").write_text(AFTER)
    probe.read()
    (proc / "diskstats").write_text(BEFORE)  # counters went down: not a negative await
    clock.now = 5.0
    assert probe.read().samples == ()
    (proc / "diskstats").write_text(AFTER)
    clock.now = 10.0
    assert {s.metric: s.value for s in probe.read().samples}[m.DISK_AWAIT_MILLISECONDS] == 4.25


def test_malformed_diskstats_names_the_line(tmp_path: Path) -> None:
    proc, sys = fake_host(tmp_path)
    (proc / "diskstats").write_text(BEFORE + " 8 0 sda 1 2 x 4 5 6 7 8 9 10 11\n")
    with pytest.raises(InvalidInput, match=r"diskstats: line 5: expected major, minor, name"):
        DiskAwaitProbe("n", proc, sys).read()


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[str]:
    """A loop device of the test's own over a file, with direct I/O to the file's disk."""
    needs_root()
    backing = tmp_path / "loop-backing"
    with backing.open("wb") as file:
        file.truncate(16 << 20)
    device = run("losetup", "--find", "--show", "--direct-io=on", str(backing)).strip()
    try:
        yield device
    finally:
        run("losetup", "--detach", device)


def test_await_matches_timed_writes_on_a_loop_device(loop_device: str,
                                                     kube_cgroups: KubeCgroups) -> None:
    name = Path(loop_device).name
    clock = Clock()
    probe = DiskAwaitProbe("n", Path("/proc"), Path("/sys"), re.compile(re.escape(name)),
                           clock=clock)
    probe.read()
    _, did = kube_cgroups.start(kube_cgroups.make_pod("await-writer"), "await-writes", "300",
                                loop_device)
    clock.now = 1.0  # so that I/Os per second reads as the period's count
    got = {s.metric: s.value for s in probe.read().samples}
    # Only the writer uses the device (udev may read a few blocks when it appears).
    assert did["writes"] <= got[m.DISK_IOS_PER_SECOND] <= did["writes"] + 16
    # The kernel times each I/O inside the writer's syscall: at most the syscall's latency (and
    # the counters' truncation to whole milliseconds: under 1 ms over the period), and most of
    # it when the I/O reaches a disk (48-85 % in trial runs here).
    mean_ms = did["mean_latency_ms"]
    assert 0.2 * mean_ms <= got[m.DISK_AWAIT_MILLISECONDS] <= mean_ms + 1 / did["writes"]
