"""Per-task feedback: what each finished pod really used, against what was predicted.

Every period the probe reads each pod's cgroup (CPU time, peak memory, block I/O bytes) and the
eBPF program's figures for the same cgroups (ebpf_loader.py). A pod is finished when its cgroup
tree, which had processes, has none left, or when its cgroup vanished first (then the figures
are the last period's, and the record says so). For each finished pod it makes one feedback
record: both sources' figures, the prediction (predictions.py), the waste ratio per resource,
and the recommendation for its task class (right_sizing.py). The record goes to `sink` (the CLI
points it at the decision journal) and its figures are exported for the last KEEP_FINISHED
pods. Where eBPF cannot load the probe says why (its note) and uses the cgroup figures.
"""

from __future__ import annotations

import logging
import os
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import metric_names as m
from .cgroup_hierarchy import Hierarchy
from .ebpf_loader import EbpfFigures, FeedbackEbpf, cgroup_id
from .kernel_files import read_int, read_keyed, require
from .pod_cgroups import PodCgroup, hierarchy_pods
from .pod_io import _io_bytes
from .predictions import Prediction, PredictionFile
from .reading import ProbeReading, ProbeUnavailable, Sample, sample
from .right_sizing import Recommendation, Usage, recommend, waste_ratios

log = logging.getLogger(__name__)

KEEP_FINISHED = 256  # finished pods exported (and remembered, so none is recorded twice)
RECENT_PER_CLASS = 20  # finished pods of a class the recommendation looks at
FeedbackSink = Callable[[Mapping[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Figures:
    """One pod at one moment; None where a source cannot measure."""

    cgroup_cpu_s: float
    peak_memory_bytes: float
    cgroup_io: tuple[int, int] | None  # (read, written) bytes
    ebpf_cpu_s: float | None
    ebpf_io: tuple[int, int] | None


@dataclass
class _Tracked:
    pod: PodCgroup
    cpu_id: int
    io_id: int | None
    started: float | None = None  # when the agent first saw a process in it
    last: Figures | None = None


@dataclass(frozen=True, slots=True)
class Finished:
    uid: str
    task_class: str
    figures: Figures
    runtime_s: float
    ratios: dict[str, float]
    record: dict[str, Any] = field(hash=False)


@dataclass
class TaskFeedbackProbe:
    node: str
    cgroup_root: Path
    kubepods: str
    ebpf_dir: Path
    btf: Path
    predictions: PredictionFile
    sink: FeedbackSink | None = None
    clock: Callable[[], float] = time.monotonic
    name: str = m.PROBE_TASK_FEEDBACK
    _ebpf: FeedbackEbpf | str | None = None
    _tracked: dict[str, _Tracked] = field(default_factory=dict)
    _finished: OrderedDict[str, Finished] = field(default_factory=OrderedDict)
    _recent: dict[str, deque[tuple[Usage, float]]] = field(default_factory=dict)

    def read(self) -> ProbeReading:
        cpu, pods = hierarchy_pods(self.cgroup_root, "cpu", self.kubepods, self.name)
        memory, _ = hierarchy_pods(self.cgroup_root, "memory", self.kubepods, self.name)
        io = self._io_hierarchy()
        ebpf = self._ebpf_figures(cpu, io)
        now = self.clock()
        seen = set()
        for pod in pods:
            seen.add(pod.uid)
            if pod.uid not in self._finished:
                self._observe(pod, cpu, memory, io=io, ebpf=ebpf, now=now)
        for uid in [uid for uid in self._tracked if uid not in seen]:
            self._vanished(uid, ebpf, now)
        note = "" if not isinstance(self._ebpf, str) else \
            f"eBPF unavailable, cgroup figures only: {self._ebpf}"
        return ProbeReading(tuple(self._live_samples(ebpf) + self._finished_samples()), note)

    def close(self) -> None:
        if isinstance(self._ebpf, FeedbackEbpf):
            self._ebpf.close()

    # --- measuring -----------------------------------------------------------------------------
    def _io_hierarchy(self) -> Hierarchy | None:
        try:
            return hierarchy_pods(self.cgroup_root, "io", self.kubepods, self.name)[0]
        except ProbeUnavailable:
            return None  # CPU and memory feedback without I/O

    def _ebpf_figures(self, cpu: Hierarchy, io: Hierarchy | None) -> EbpfFigures | None:
        if self._ebpf is None:
            self._ebpf = FeedbackEbpf.start(self.ebpf_dir, self.btf, cpu.version == 1,
                                            io is not None and io.version == 1)
            if isinstance(self._ebpf, str):
                log.warning("task feedback without eBPF: %s", self._ebpf)
        if isinstance(self._ebpf, str):
            return None
        figures = self._ebpf.read()
        if isinstance(figures, str):  # the loader died: say so from now on
            self._ebpf.close()
            self._ebpf = figures
            log.warning("task feedback without eBPF: %s", figures)
            return None
        return figures

    def _observe(self, pod: PodCgroup, cpu: Hierarchy, memory: Hierarchy, *,
                 io: Hierarchy | None, ebpf: EbpfFigures | None, now: float) -> None:
        try:
            tracked = self._tracked.get(pod.uid) or self._track(pod, cpu, io)
            io_pod = _same_pod(pod, cpu, io)
            tracked.last = Figures(
                _cpu_seconds(cpu, pod.path), _peak_memory(memory, _same_pod(pod, cpu, memory)),
                _io_bytes(io, io_pod) if io is not None and io_pod is not None else None,
                ebpf.cpu_seconds(tracked.cpu_id) if ebpf else None,
                ebpf.read_write_bytes(tracked.io_id) if ebpf and tracked.io_id else None)
            running = _has_processes(pod.path)
        except FileNotFoundError:  # removed meanwhile: the next period sees it gone
            return
        if running and tracked.started is None:
            tracked.started = now
        elif not running and tracked.started is not None:
            self._finish(tracked, tracked.last, now, "")

    def _track(self, pod: PodCgroup, cpu: Hierarchy, io: Hierarchy | None) -> _Tracked:
        io_pod = _same_pod(pod, cpu, io)
        tracked = _Tracked(pod, cgroup_id(pod.path),
                           cgroup_id(io_pod.path) if io_pod is not None else None)
        self._tracked[pod.uid] = tracked
        return tracked

    def _vanished(self, uid: str, ebpf: EbpfFigures | None, now: float) -> None:
        tracked = self._tracked.pop(uid)
        if tracked.started is None or tracked.last is None:
            return  # never ran a process: nothing to learn from
        last = tracked.last
        if ebpf:  # the program's counters outlive the cgroup: take their final values
            last = Figures(last.cgroup_cpu_s, last.peak_memory_bytes, last.cgroup_io,
                           ebpf.cpu_seconds(tracked.cpu_id),
                           ebpf.read_write_bytes(tracked.io_id) if tracked.io_id else None)
        self._finish(tracked, last, now, "cgroup removed before the agent saw it idle: "
                                         "cgroup figures are the last period's")

    # --- finishing -----------------------------------------------------------------------------
    def _finish(self, tracked: _Tracked, figures: Figures, now: float, caveat: str) -> None:
        self._tracked.pop(tracked.pod.uid, None)
        assert tracked.started is not None
        runtime_s = max(now - tracked.started, 0.0)
        prediction = self.predictions.current().get(tracked.pod.uid)
        task_class = prediction.task_class if prediction else ""
        actual = _actual(figures)
        ratios = waste_ratios(actual, prediction.usage) if prediction else {}
        advice = self._learn(task_class, actual, runtime_s)
        record = _record(self.node, tracked.pod, task_class, figures=figures,
                         runtime_s=runtime_s, prediction=prediction, ratios=ratios,
                         advice=advice, caveat=caveat or self._ebpf_caveat())
        self._finished[tracked.pod.uid] = Finished(tracked.pod.uid, task_class, figures,
                                                    runtime_s, ratios, record)
        while len(self._finished) > KEEP_FINISHED:
            self._finished.popitem(last=False)
        if self.sink is not None:
            try:
                self.sink(record)
            except (OSError, ValueError) as error:  # the figures stay exported regardless
                log.warning("feedback for pod %s not journalled: %s", tracked.pod.uid, error)

    def _learn(self, task_class: str, actual: Usage, runtime_s: float) -> Recommendation | None:
        if not task_class:
            return None
        recent = self._recent.setdefault(task_class, deque(maxlen=RECENT_PER_CLASS))
        recent.append((actual, runtime_s))
        return recommend(list(recent))

    def _ebpf_caveat(self) -> str:
        return f"eBPF unavailable: {self._ebpf}" if isinstance(self._ebpf, str) else ""

    # --- exporting -----------------------------------------------------------------------------
    def _live_samples(self, ebpf: EbpfFigures | None) -> list[Sample]:
        if ebpf is None:
            return []
        samples: list[Sample] = []
        for tracked in self._tracked.values():
            labels = {m.NODE: self.node, m.POD_UID: tracked.pod.uid, m.QOS: tracked.pod.qos}
            samples.append(sample(m.POD_EBPF_CPU_SECONDS_TOTAL,
                                  ebpf.cpu_seconds(tracked.cpu_id), **labels))
            if tracked.io_id is not None:
                read_bytes, written = ebpf.read_write_bytes(tracked.io_id)
                samples += [sample(m.POD_EBPF_IO_BYTES_TOTAL, read_bytes, direction="read",
                                   **labels),
                            sample(m.POD_EBPF_IO_BYTES_TOTAL, written, direction="write",
                                   **labels)]
        return samples

    def _finished_samples(self) -> list[Sample]:
        samples: list[Sample] = []
        for done in self._finished.values():
            samples += _task_samples(self.node, done)
        for task_class, recent in self._recent.items():
            advice = recommend(list(recent))
            if advice is not None:
                labels = {m.NODE: self.node, m.TASK_CLASS: task_class}
                samples += [sample(m.RECOMMENDED_CPU_CORES, advice.cpu_cores, **labels),
                            sample(m.RECOMMENDED_MEMORY_BYTES, advice.memory_bytes, **labels)]
        return samples


def _task_samples(node: str, done: Finished) -> list[Sample]:
    labels = {m.NODE: node, m.POD_UID: done.uid, m.TASK_CLASS: done.task_class}
    figures = done.figures
    samples = [sample(m.TASK_CPU_SECONDS, figures.cgroup_cpu_s, source="cgroup", **labels),
               sample(m.TASK_PEAK_MEMORY_BYTES, figures.peak_memory_bytes, **labels)]
    if figures.ebpf_cpu_s is not None:
        samples.append(sample(m.TASK_CPU_SECONDS, figures.ebpf_cpu_s, source="ebpf", **labels))
    for source, io in (("cgroup", figures.cgroup_io), ("ebpf", figures.ebpf_io)):
        if io is not None:
            samples += [sample(m.TASK_IO_BYTES, io[0], source=source, direction="read",
                               **labels),
                        sample(m.TASK_IO_BYTES, io[1], source=source, direction="write",
                               **labels)]
    samples += [sample(m.TASK_WASTE_RATIO, ratio, resource=resource, **labels)
                for resource, ratio in done.ratios.items()]
    return samples


def _actual(figures: Figures) -> Usage:
    """eBPF's figures where it measured (v1 blkio counts nothing without throttle rules),
    the cgroup's otherwise; peak memory is always the cgroup's."""
    cpu_s = figures.ebpf_cpu_s if figures.ebpf_cpu_s is not None else figures.cgroup_cpu_s
    io = figures.ebpf_io if figures.ebpf_io is not None else figures.cgroup_io
    return Usage(cpu_s, figures.peak_memory_bytes, sum(io) if io else 0.0)


def _record(node: str, pod: PodCgroup, task_class: str, *, figures: Figures, runtime_s: float,
            prediction: Prediction | None, ratios: dict[str, float],
            advice: Recommendation | None, caveat: str) -> dict[str, Any]:
    """The journal's `feedback` record (docs/LIVE.md, "Per-task feedback")."""
    return {
        "node": node, "pod_uid": pod.uid, "qos": pod.qos, "task_class": task_class,
        "runtime_s": round(runtime_s, 3),
        "cgroup": {"cpu_seconds": figures.cgroup_cpu_s,
                   "peak_memory_bytes": figures.peak_memory_bytes,
                   "io_bytes": _io_record(figures.cgroup_io)},
        "ebpf": None if figures.ebpf_cpu_s is None else {
            "cpu_seconds": figures.ebpf_cpu_s, "io_bytes": _io_record(figures.ebpf_io)},
        "actual": asdict(_actual(figures)),
        "predicted": asdict(prediction.usage) if prediction else None,
        "waste_ratio": ratios,
        "recommendation": asdict(advice) if advice else None,
        "caveat": caveat,
    }


def _io_record(io: tuple[int, int] | None) -> dict[str, int] | None:
    return None if io is None else {"read": io[0], "write": io[1]}


def _same_pod(pod: PodCgroup, cpu: Hierarchy, other: Hierarchy | None) -> PodCgroup | None:
    """The pod's cgroup in another controller's hierarchy (the same relative path)."""
    if other is None:
        return None
    return PodCgroup(pod.uid, pod.qos, other.root / pod.path.relative_to(cpu.root))


def _cpu_seconds(hierarchy: Hierarchy, path: Path) -> float:
    if hierarchy.version == 1:
        return read_int(path / "cpuacct.usage") / 1e9
    stat_path = path / "cpu.stat"
    return require(read_keyed(stat_path), "usage_usec", stat_path) / 1e6


def _peak_memory(hierarchy: Hierarchy, pod: PodCgroup | None) -> float:
    assert pod is not None
    name = "memory.max_usage_in_bytes" if hierarchy.version == 1 else "memory.peak"
    if not (pod.path / name).is_file():  # memory.peak needs Linux 5.19
        name = "memory.current"
    return float(read_int(pod.path / name))


def _has_processes(path: Path) -> bool:
    """Whether any cgroup of the tree holds a process."""
    for folder, _, _ in os.walk(path):
        if (Path(folder) / "cgroup.procs").read_text().strip():
            return True
    return False
