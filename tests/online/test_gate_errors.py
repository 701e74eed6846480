"""A gate that cannot run (a held-back episode with no arrival in its horizon) is a failed
fine-tune the breaker counts, not a crash of `dagpilot online run`."""

from __future__ import annotations

import dataclasses
from collections.abc import Set
from pathlib import Path

import pytest

from dagpilot.core.errors import SpecError
from dagpilot.journal import Journal
from dagpilot.online.adapter import Adapter
from dagpilot.online.config import OnlineConfig
from dagpilot.online.finetune import FineTuneResult
from dagpilot.online.worker import FineTuneJob
from dagpilot.online.world import serving_model
from tests.online.test_breaker import SETTINGS, slow_streak


def unchanged(job: FineTuneJob, cpus: Set[int]) -> FineTuneResult:
    del cpus
    model, _ = serving_model(job.models, job.version)
    return FineTuneResult(dict(model.state_dict()), 1, 0, 0.0)


def test_a_gate_that_cannot_run_is_a_counted_failure(registry: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     request: pytest.FixtureRequest) -> None:
    def no_arrival(*_: object) -> object:
        raise SpecError("poisson", "no job arrives within the horizon")

    monkeypatch.setattr(Adapter, "_gate", no_arrival)
    journal = Journal(tmp_path / "journal.jsonl")
    request.addfinalizer(journal.close)
    adapter = Adapter(OnlineConfig(adapter=SETTINGS), journal_path=journal.path,
                      models=registry, state=tmp_path / "state", cpus={0},
                      fine_tuner=unchanged, clock=lambda: 1000.0)
    slow_streak(journal, 0)
    report = adapter.cycle()
    assert report.action == "failed"
    assert "gate could not run" in report.detail and "no job arrives" in report.detail


def test_the_gate_runs_its_own_horizon_not_the_fine_tunes(registry: Path, tmp_path: Path,
                                                          request: pytest.FixtureRequest
                                                          ) -> None:
    # The real gate: a fine-tune horizon with arrivals, a gate horizon without any.
    settings = dataclasses.replace(SETTINGS, horizon_h=0.2, gate_horizon_h=1e-4)
    journal = Journal(tmp_path / "journal.jsonl")
    request.addfinalizer(journal.close)
    adapter = Adapter(OnlineConfig(adapter=settings), journal_path=journal.path,
                      models=registry, state=tmp_path / "state", cpus={0},
                      fine_tuner=unchanged, clock=lambda: 1000.0)
    slow_streak(journal, 0)
    report = adapter.cycle()
    assert report.action == "failed"
    assert "gate could not run" in report.detail and "0.0001 h" in report.detail
