"""The adapter hands the fine-tune and the gate what the feedback shows: a journal whose
I/O-bound tasks ran slow on zone-b's nodes reaches the fine-tuner as a slow zone-b."""

from __future__ import annotations

from collections.abc import Set
from pathlib import Path

from dagpilot.journal import Journal
from dagpilot.online.adapter import Adapter
from dagpilot.online.config import AdapterSettings, OnlineConfig
from dagpilot.online.finetune import FineTuneResult
from dagpilot.online.worker import FineTuneFailed, FineTuneJob

SETTINGS = AdapterSettings(workload="builtin:mix", validation_seeds=2, horizon_h=1.0)


def test_feedback_with_nodes_recalibrates_the_fine_tunes_world(registry: Path,
                                                                tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.jsonl")
    # scan: 35 % of its runtime on storage in builtin:mix; zone-b's run fires the trigger
    for node, slowdown in (("node-0001", 1.0), ("node-0004", 2.4)):
        for index in range(6):
            journal.write("feedback", {"pod_uid": f"{node}-{index}", "node": node,
                                       "task_class": "scan", "runtime_s": 100.0 * slowdown,
                                       "actual": {"io_bytes": 0},
                                       "predicted": {"runtime_s": 100.0}})
    journal.close()
    seen: list[FineTuneJob] = []

    def capture(job: FineTuneJob, cpus: Set[int]) -> FineTuneResult:
        del cpus
        seen.append(job)
        raise FineTuneFailed("stopped by the test")

    adapter = Adapter(OnlineConfig(adapter=SETTINGS), journal_path=journal.path,
                      models=registry, state=tmp_path / "state", cpus={0},
                      fine_tuner=capture)
    report = adapter.cycle()
    assert (report.action, report.detail) == ("failed", "stopped by the test")
    assert report.drift is not None and report.drift.task_class == "scan"
    [job] = seen
    assert job.recalibration is not None and job.recalibration == adapter.recalibration
    [zone] = job.recalibration.slow_zones
    assert zone.zone == "zone-b" and zone.samples == 6
    assert zone.io_multiplier > 4.5  # 1 + 1.4 / 0.35 = 5
