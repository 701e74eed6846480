"""diagnose-node's evidence from real-format kernel-log lines, real and hand-made diskstats,
node conditions, Leases and ping-mesh series (the API-server side runs live in
tests/live/ops/)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.ops import disk_stalls, kernel_log, node_status
from dagpilot.ops.diagnose_node import Sources, assess
from tests.conftest import FIXTURES

OPS = FIXTURES / "ops"
NOW = 1_800_000_000.0


def _lines(name: str) -> list[str]:
    return (OPS / name).read_text().splitlines()


def test_lockups_hung_tasks_and_nvme_timeouts_are_found_with_their_lines() -> None:
    found = {f.summary.split(" (")[0]: f for f in kernel_log.findings(_lines(
        "dmesg-lockup-nvme.log"))}
    assert set(found) == {
        "soft lockup: a CPU ran kernel code without scheduling",
        "hung tasks: tasks blocked in uninterruptible sleep",
        "NVMe command timeouts or controller resets", "block I/O errors"}
    lockup = found["soft lockup: a CPU ran kernel code without scheduling"]
    assert lockup.cause == "kernel"
    assert lockup.evidence == ("[ 5242.118807] watchdog: BUG: soft lockup - CPU#3 stuck for "
                               "22s! [kworker/3:1H:412]",)
    assert len(found["hung tasks: tasks blocked in uninterruptible sleep"].evidence) == 2
    nvme = found["NVMe command timeouts or controller resets"]
    assert nvme.cause == "storage" and len(nvme.evidence) == 3  # two aborts and the reset
    assert "nvme" in nvme.next_command


def test_a_link_down_at_the_end_of_the_log_is_network_one_back_up_is_not() -> None:
    found = kernel_log.findings(_lines("journal-link.log"))
    assert [(f.cause, f.summary) for f in found] == [
        ("network", "link eno1 down (not up again in the log)"),
        ("network", "link ens2f0np0 down (not up again in the log)")]
    assert found[0].next_command == "ip -s link show eno1; ethtool eno1"


def test_a_quiet_log_has_no_findings_and_long_evidence_is_cut() -> None:
    assert kernel_log.findings(["[ 1.0] EXT4-fs (vda1): mounted filesystem", ""]) == []
    hung = [f"INFO: task t:{n} blocked for more than 120 seconds." for n in range(9)]
    (finding,) = kernel_log.findings(hung)
    assert finding.evidence[-1] == "... and 4 more"
    assert len(finding.evidence) == kernel_log.EVIDENCE_LINES + 1


def test_a_device_with_io_in_flight_and_none_completed_is_stalled_a_slow_one_is_slow() -> None:
    taken = disk_stalls.snapshots((OPS / "diskstats-stalled").read_text(), "diskstats")
    assert len(taken) == 2
    found = {f.summary: f for f in disk_stalls.findings(taken, 5.0, "diskstats")}
    assert set(found) == {"nvme0n1: I/O stalled", "nvme0n1p1: I/O stalled", "vda: slow I/O"}
    assert found["nvme0n1: I/O stalled"].evidence == (
        "32 I/Os in flight, none completed in 5 s; device busy 100 % of that time",)
    assert found["vda: slow I/O"].evidence == (
        "mean await 100 ms over 100 I/Os in 5 s (above 50 ms)",)


def test_this_machines_diskstats_read_back_to_back_show_no_stall() -> None:
    """Two real reads a moment apart: every device parses, and none can look stalled (its
    busy time cannot grow by 90 % of a 5 s interval in between)."""
    text = Path("/proc/diskstats").read_text()
    taken = disk_stalls.snapshots(text + Path("/proc/diskstats").read_text(), "/proc/diskstats")
    assert len(taken) == 2 and set(taken[0]) == set(taken[1])
    assert set(taken[0]) == {line.split()[2] for line in text.splitlines()}
    assert [f for f in disk_stalls.findings(taken, 5.0, "/proc/diskstats")
            if "stalled" in f.summary] == []


def test_one_snapshot_or_a_broken_line_is_a_clear_error() -> None:
    one = disk_stalls.snapshots(" 253 0 vda" + " 0" * 17, "one")
    with pytest.raises(InvalidInput, match="one: one diskstats snapshot"):
        disk_stalls.findings(one, 5.0, "one")
    with pytest.raises(InvalidInput, match="bad: line 1"):
        disk_stalls.snapshots("253 0 vda 1 2 x\n", "bad")


def _node(*conditions: dict[str, str]) -> dict[str, object]:
    return {"metadata": {"name": "n1"}, "status": {"conditions": list(conditions)}}


READY_FALSE = {"type": "Ready", "status": "False", "reason": "KubeletNotReady",
               "message": "PLEG is not healthy"}


def _lease(age_s: float, duration: int = 40) -> dict[str, object]:
    stamp = datetime.fromtimestamp(NOW - age_s, UTC).isoformat().replace("+00:00", "Z")
    return {"spec": {"holderIdentity": "n1", "leaseDurationSeconds": duration,
                     "renewTime": stamp}}


def test_a_stale_lease_is_network_a_fresh_one_is_only_evidence() -> None:
    finding, line = node_status.lease_finding("n1", _lease(300), NOW)
    assert finding is not None and finding.cause == "network"
    assert line == "Lease renewed 300 s ago (duration 40 s, holder n1)"
    assert node_status.lease_finding("n1", _lease(5), NOW)[0] is None
    missing, _ = node_status.lease_finding("n1", None, NOW)
    assert missing is not None and missing.summary == "no node Lease"


def test_conditions_name_their_cause() -> None:
    node = _node(READY_FALSE, {"type": "NetworkUnavailable", "status": "True",
                               "reason": "NoRouteCreated"},
                 {"type": "KernelDeadlock", "status": "True", "reason": "DockerHung"},
                 {"type": "DiskPressure", "status": "False"})
    found = node_status.condition_findings("n1", node)
    assert [(f.cause, f.summary) for f in found] == [
        ("kernel", "condition KernelDeadlock=True"),
        ("network", "condition NetworkUnavailable=True")]
    assert "spec.nodeName=n1" in found[1].next_command


def test_ping_loss_to_the_node_from_most_peers_is_network() -> None:
    loss = [({"src": "a", "dst": "n1"}, 1.0), ({"src": "b", "dst": "n1"}, 0.8),
            ({"src": "c", "dst": "n1"}, 0.0), ({"src": "n1", "dst": "a"}, 0.1)]
    found, line = node_status.ping_findings("n1", loss)
    assert [f.summary for f in found] == ["ping mesh: 2 of 3 peers lose connects to n1"]
    assert found[0].evidence == ("dagpilot_ping_loss_ratio to a: 1.00",
                                 "dagpilot_ping_loss_ratio to b: 0.80")
    assert line == "ping mesh: 3 peers measure the node, it measures 1"


def test_assess_puts_it_together_and_says_what_it_did_not_check() -> None:
    sources = Sources(kernel_log=OPS / "dmesg-lockup-nvme.log",
                      diskstats=(OPS / "diskstats-stalled",))
    diagnosis = assess("n1", _node(READY_FALSE), _lease(5), None, sources, now_s=NOW)
    assert diagnosis.not_ready
    assert diagnosis.ready.startswith("Ready=False; reason KubeletNotReady; message PLEG")
    assert [f.cause for f in diagnosis.by_cause()] == ["storage"] * 5 + ["kernel"] * 2
    assert diagnosis.checked[1] == "ping mesh: not checked (no --prometheus)"
    healthy = assess("n1", _node({"type": "Ready", "status": "True"}), _lease(5), [],
                     Sources(), now_s=NOW)
    assert not healthy.not_ready and healthy.findings == ()
    assert "kernel log: not checked (no --kernel-log)" in healthy.checked
