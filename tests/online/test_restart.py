"""A restarted adapter remembers, in breaker.json, the journal time up to which feedback has
been acted on: it does not fire again on a drift it already handled, and a new drift after
that time still fires."""

from __future__ import annotations

import json
from collections.abc import Set
from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.journal import Journal
from dagpilot.online.adapter import BREAKER_FILE, Adapter
from dagpilot.online.config import AdapterSettings, OnlineConfig
from dagpilot.online.finetune import FineTuneResult
from dagpilot.online.worker import FineTuneFailed, FineTuneJob

CONFIG = OnlineConfig(adapter=AdapterSettings(validation_seeds=3, horizon_h=0.05))


class CountingFineTuner:
    """Counts the fine-tunes started; each one fails (no weights), which is all the trigger's
    bookkeeping needs to see."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def __call__(self, job: FineTuneJob, cpus: Set[int]) -> FineTuneResult:
        del cpus
        self.started.append(job.drift.task_class)
        raise FineTuneFailed("failed on purpose")


def streak(journal: Journal, task_class: str, start: int) -> None:
    for index in range(5):
        journal.write("feedback", {"pod_uid": f"u{start + index}", "task_class": task_class,
                                   "runtime_s": 150.0, "predicted": {"runtime_s": 100.0}})


def adapter(registry: Path, tmp_path: Path, journal: Journal,
            fine_tuner: CountingFineTuner) -> Adapter:
    return Adapter(CONFIG, journal_path=journal.path, models=registry,
                   state=tmp_path / "state", cpus={0}, fine_tuner=fine_tuner)


def test_a_restart_does_not_fire_again_on_a_handled_drift(
        registry: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    journal = Journal(tmp_path / "journal.jsonl")
    request.addfinalizer(journal.close)
    fine_tuner = CountingFineTuner()
    streak(journal, "etl", 0)
    assert adapter(registry, tmp_path, journal, fine_tuner).cycle().action == "failed"
    saved = json.loads((tmp_path / "state" / BREAKER_FILE).read_text())
    last_t = max(r["t"] for r in map(json.loads, journal.path.read_text().splitlines()))
    assert saved["acted_until_t"] == last_t

    restarted = adapter(registry, tmp_path, journal, fine_tuner)  # a new process
    assert restarted.cycle().action == "no-drift"
    assert fine_tuner.started == ["etl"]

    streak(journal, "sort", 5)  # a new drift, after the handled one
    assert adapter(registry, tmp_path, journal, fine_tuner).cycle().action == "failed"
    assert fine_tuner.started == ["etl", "sort"]


def test_a_state_file_from_before_the_field_reads_the_whole_journal(
        registry: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    journal = Journal(tmp_path / "journal.jsonl")
    request.addfinalizer(journal.close)
    state = tmp_path / "state"
    state.mkdir()
    (state / BREAKER_FILE).write_text(json.dumps({"failures": 1, "stable": "base"}))
    fine_tuner = CountingFineTuner()
    streak(journal, "etl", 0)
    again = adapter(registry, tmp_path, journal, fine_tuner)
    assert again.breaker.state.failures == 1
    assert again.cycle().action == "failed"
    assert fine_tuner.started == ["etl"]


@pytest.mark.parametrize("value", ["yesterday", True, None])
def test_a_bad_acted_until_t_is_an_error_naming_the_field(
        registry: Path, tmp_path: Path, value: object) -> None:
    state = tmp_path / "state"
    state.mkdir()
    text = json.dumps({"acted_until_t": value}) if value is not None else (
        '{"acted_until_t": Infinity}')
    (state / BREAKER_FILE).write_text(text)
    with pytest.raises(InvalidInput, match="acted_until_t"):
        Adapter(CONFIG, journal_path=tmp_path / "journal.jsonl", models=registry, state=state,
                cpus={0})
