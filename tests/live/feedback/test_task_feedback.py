"""Per-task feedback on real workloads in real cgroups: the eBPF program's figures against the
cgroup's and against what each workload measured itself doing.

Tolerances (why):
- CPU: eBPF within 3 % + 30 ms of the cgroup's (both count the same on-CPU time; sched_switch
  counts from switch to switch, the cgroup from its own clock updates), and the cgroup within
  [workload - 10 ms, workload + 150 ms] (the shell that joins the cgroup and Python's exit).
- I/O: O_DIRECT bytes exactly once each, so eBPF within [done, done + 1 MiB] written and
  [done, done + 8 MiB] read (Python reads a few files of its own).
- Memory: the cgroup's peak within [held, held + 24 MiB] (the interpreter's own memory).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.node_agent.ebpf_loader import DEFAULT_BTF
from dagpilot.live.node_agent.predictions import PredictionFile
from dagpilot.live.node_agent.reading import Sample
from dagpilot.live.node_agent.task_feedback import TaskFeedbackProbe

from ..node_agent.conftest import CGROUP_ROOT, KubeCgroups

MIB = 1 << 20
NODE = "test-node"
INTERPRETER_SLACK = 24 * MIB


class Records:
    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []

    def __call__(self, record: Mapping[str, Any]) -> None:
        self.got.append(json.loads(json.dumps(record)))  # what the journal would keep


def probe_for(kube_cgroups: KubeCgroups, build: Path, sink: Records, *,
              btf: Path = DEFAULT_BTF, predictions: Path | None = None) -> TaskFeedbackProbe:
    ticks = itertools.count(step=10.0)  # each read 10 s after the last: runtimes are known
    return TaskFeedbackProbe(NODE, CGROUP_ROOT, kube_cgroups.kubepods, build, btf,
                             PredictionFile(predictions), sink, clock=lambda: next(ticks))


def finish(kube_cgroups: KubeCgroups) -> None:
    """Let every workload exit (they wait for stdin to close)."""
    kube_cgroups.stop_all()
    kube_cgroups.processes.clear()


def task_values(samples: tuple[Sample, ...], metric: str, uid: str) -> dict[tuple[str, ...], float]:
    names = m.METRICS_BY_NAME[metric].labels
    found = {}
    for s in (s for s in samples if s.metric == metric):
        labels = dict(zip(names, s.labels, strict=True))
        if labels.get(m.POD_UID) == uid:
            found[tuple(v for k, v in labels.items() if k not in (m.NODE, m.POD_UID))] = s.value
    return found


def test_cpu_burner_ebpf_and_cgroup_agree(kube_cgroups: KubeCgroups, ebpf_build: Path,
                                          tmp_path: Path) -> None:
    uid = "fb000000-0000-4000-8000-000000000001"
    procs = kube_cgroups.make_pod(uid, "guaranteed")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"pod_uid": uid, "task_class": "burner",
                                       "cpu_seconds": 0.5}) + "\n")
    records = Records()
    probe = probe_for(kube_cgroups, ebpf_build, records, predictions=predictions)
    try:
        first = probe.read()  # loads eBPF before the workload runs
        assert first.note == ""
        _, did = kube_cgroups.start(procs, "burn-cpu", "1.0")
        live = probe.read().samples
        assert task_values(live, m.POD_EBPF_CPU_SECONDS_TOTAL, uid)[("guaranteed",)] > 0.5
        finish(kube_cgroups)
        samples = probe.read().samples
    finally:
        probe.close()
    [record] = records.got
    cgroup_s, ebpf_s = record["cgroup"]["cpu_seconds"], record["ebpf"]["cpu_seconds"]
    assert did["cpu_s"] - 0.01 <= cgroup_s <= did["cpu_s"] + 0.15
    assert abs(ebpf_s - cgroup_s) <= 0.03 * cgroup_s + 0.03
    assert record["task_class"] == "burner" and record["runtime_s"] == 10.0
    # actual (eBPF's) over the predicted 0.5 s, minus 1: about 1.0
    assert abs(record["waste_ratio"]["cpu"] - (ebpf_s / 0.5 - 1)) < 1e-9
    assert 0.9 <= record["waste_ratio"]["cpu"] <= 1.4
    advice = record["recommendation"]
    assert advice["based_on"] == 1
    assert advice["cpu_cores"] >= ebpf_s / 10 * 1.15 - 0.001  # over 10 s, with headroom
    by_source = task_values(samples, m.TASK_CPU_SECONDS, uid)
    assert by_source == {("burner", "cgroup"): cgroup_s, ("burner", "ebpf"): ebpf_s}
    assert task_values(samples, m.TASK_WASTE_RATIO, uid) == {
        ("burner", "cpu"): record["waste_ratio"]["cpu"]}
    recommended = [s for s in samples if s.metric == m.RECOMMENDED_CPU_CORES]
    assert [s.value for s in recommended] == [advice["cpu_cores"]]


def test_memory_grower_peak(kube_cgroups: KubeCgroups, ebpf_build: Path,
                            tmp_path: Path) -> None:
    uid = "fb000000-0000-4000-8000-000000000002"
    procs = kube_cgroups.make_pod(uid)
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"pod_uid": uid, "task_class": "grower",
                                       "peak_memory_bytes": 128 * MIB}) + "\n")
    records = Records()
    probe = probe_for(kube_cgroups, ebpf_build, records, predictions=predictions)
    try:
        probe.read()
        _, did = kube_cgroups.start(procs, "grow-memory", "64")
        probe.read()
        finish(kube_cgroups)
        probe.read()
    finally:
        probe.close()
    [record] = records.got
    peak = record["cgroup"]["peak_memory_bytes"]
    assert did["held_bytes"] <= peak <= did["held_bytes"] + INTERPRETER_SLACK
    assert abs(record["waste_ratio"]["memory"] - (peak / (128 * MIB) - 1)) < 1e-9
    assert record["waste_ratio"]["memory"] < 0  # half the prediction: over-provisioned
    memory = record["recommendation"]["memory_bytes"]
    assert memory % MIB == 0 and peak * 1.15 <= memory < peak * 1.15 + MIB


def test_io_writer_bytes_charged_to_the_submitting_cgroup(
        kube_cgroups: KubeCgroups, ebpf_build: Path, tmp_path: Path) -> None:
    uid = "fb000000-0000-4000-8000-000000000003"
    bystander = "fb000000-0000-4000-8000-000000000004"
    procs = kube_cgroups.make_pod(uid)
    idle_procs = kube_cgroups.make_pod(bystander)
    if kube_cgroups.hierarchies["io"].version == 1:  # v1 counts only under a throttle rule
        pod = kube_cgroups.pod_dir("io", uid)
        device = whole_disk(tmp_path)
        for rule in ("blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"):
            (pod / rule).write_text(f"{device} {1 << 50}")
    records = Records()
    probe = probe_for(kube_cgroups, ebpf_build, records)
    try:
        probe.read()
        _, did = kube_cgroups.start(procs, "direct-io", "16", str(tmp_path / "direct"))
        kube_cgroups.start(idle_procs, "grow-memory", "1")
        probe.read()
        finish(kube_cgroups)
        probe.read()
    finally:
        probe.close()
    by_uid = {record["pod_uid"]: record for record in records.got}
    ebpf_io, cgroup_io = by_uid[uid]["ebpf"]["io_bytes"], by_uid[uid]["cgroup"]["io_bytes"]
    assert did["written_bytes"] <= ebpf_io["write"] <= did["written_bytes"] + MIB
    assert did["read_bytes"] <= ebpf_io["read"] <= did["read_bytes"] + 8 * MIB
    assert abs(ebpf_io["write"] - cgroup_io["write"]) <= MIB
    assert abs(ebpf_io["read"] - cgroup_io["read"]) <= 8 * MIB
    # The bystander did no I/O of its own: nothing of the writer's lands on it.
    assert by_uid[bystander]["ebpf"]["io_bytes"]["write"] < MIB


def test_without_btf_the_cgroup_figures_stand_alone(kube_cgroups: KubeCgroups,
                                                   ebpf_build: Path, tmp_path: Path) -> None:
    uid = "fb000000-0000-4000-8000-000000000005"
    procs = kube_cgroups.make_pod(uid)
    records = Records()
    probe = probe_for(kube_cgroups, ebpf_build, records, btf=tmp_path / "no-such-btf")
    try:
        assert "no BTF at" in probe.read().note
        _, did = kube_cgroups.start(procs, "burn-cpu", "0.3")
        probe.read()
        finish(kube_cgroups)
        reading = probe.read()
    finally:
        probe.close()
    assert "eBPF unavailable, cgroup figures only: no BTF at" in reading.note
    [record] = records.got
    assert record["ebpf"] is None and "no BTF at" in record["caveat"]
    assert did["cpu_s"] - 0.01 <= record["cgroup"]["cpu_seconds"] <= did["cpu_s"] + 0.15
    assert record["actual"]["cpu_seconds"] == record["cgroup"]["cpu_seconds"]
    assert ("", "ebpf") not in task_values(reading.samples, m.TASK_CPU_SECONDS, uid)


def test_a_pod_whose_cgroup_vanishes_is_finished_from_its_last_figures(
        kube_cgroups: KubeCgroups, ebpf_build: Path) -> None:
    uid = "fb000000-0000-4000-8000-000000000006"
    procs = kube_cgroups.make_pod(uid)
    records = Records()
    probe = probe_for(kube_cgroups, ebpf_build, records)
    try:
        probe.read()
        _, did = kube_cgroups.start(procs, "burn-cpu", "0.2")
        probe.read()
        finish(kube_cgroups)
        for path in sorted((p for p in kube_cgroups.made if f"pod{uid}" in str(p)),
                           key=lambda p: len(p.parts), reverse=True):
            path.rmdir()
            kube_cgroups.made.remove(path)
        probe.read()
    finally:
        probe.close()
    [record] = records.got
    assert "cgroup removed" in record["caveat"]
    # the program's counter outlived the cgroup: what the burner ran, within the tolerance
    # eBPF's figure has against the cgroup's above (a load average near 10 read 0.1946 s
    # for 0.2 s of burning)
    assert record["ebpf"]["cpu_seconds"] >= 0.97 * did["cpu_s"] - 0.03


def whole_disk(path: Path) -> str:
    device = os.stat(path).st_dev
    sys_dir = Path(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}").resolve()
    if (sys_dir / "partition").exists():
        sys_dir = sys_dir.parent
    return (sys_dir / "dev").read_text().strip()
