"""A forced sequence of three bad fine-tunes, against a real registry: the gate refuses each,
the third opens the breaker, `current` rolls back to the model serving before the failures,
and the cooldown holds off the next fine-tune; the alert's metric file says so."""

from __future__ import annotations

import dataclasses
from collections.abc import Set
from pathlib import Path

import pytest
import torch

from dagpilot.journal import Journal
from dagpilot.online.adapter import Adapter
from dagpilot.online.config import AdapterSettings, OnlineConfig
from dagpilot.online.finetune import FineTuneResult
from dagpilot.online.worker import FineTuneJob
from dagpilot.online.world import serving_model
from dagpilot.registry import publish, read_current

SETTINGS = AdapterSettings(validation_seeds=3, horizon_h=0.05)


def bad_fine_tune(job: FineTuneJob, cpus: Set[int]) -> FineTuneResult:
    """The serving weights with non-finite deltas on the pair scorer's query: made bad on
    purpose (as a diverged update would leave them)."""
    del cpus
    model, _ = serving_model(job.models, job.version)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    state["pairs.query.weight"][0, 0] = torch.nan
    return FineTuneResult(state, 1, 0, 0.0)


def slow_streak(journal: Journal, start: int) -> None:
    for index in range(5):
        journal.write("feedback", {"pod_uid": f"u{start + index}", "task_class": "etl",
                                   "runtime_s": 150.0, "predicted": {"runtime_s": 100.0}})


def test_three_bad_fine_tunes_roll_back_and_cool_down(registry: Path, tmp_path: Path,
                                                      request: pytest.FixtureRequest) -> None:
    # A model published by an earlier (good) adaptation serves; `base` stayed stable before it.
    publish(registry, "base.online-1", registry / "base")
    assert read_current(registry) == "base.online-1"
    journal = Journal(tmp_path / "journal.jsonl")
    request.addfinalizer(journal.close)
    now = [1000.0]
    config = OnlineConfig(adapter=SETTINGS)
    adapter = Adapter(config, journal_path=journal.path, models=registry,
                      state=tmp_path / "state", cpus={0}, fine_tuner=bad_fine_tune,
                      clock=lambda: now[0])
    reports = []
    for round_ in range(3):
        slow_streak(journal, 5 * round_)
        reports.append(adapter.cycle())
        if round_ < 2:  # the stable model is the one serving before the failures began
            publish(registry, f"other-{round_}", registry / "base")  # e.g. by hand
    assert [r.action for r in reports] == ["failed"] * 3
    assert all("non-finite" in r.detail for r in reports)
    assert [r.opened is not None for r in reports] == [False, False, True]
    opened = reports[-1].opened
    assert opened is not None
    assert opened.rolled_back_to == "base.online-1" == read_current(registry)
    assert opened.cooldown_until == now[0] + 60 * 60
    metrics = (tmp_path / "state" / "online.prom").read_text()
    assert "dagpilot_online_breaker_open 1" in metrics
    assert "dagpilot_online_rollbacks_total 1" in metrics

    slow_streak(journal, 15)  # drift again, inside the cooldown: no fine-tune
    assert adapter.cycle().action == "cooling"
    now[0] += 60 * 60 + 1
    assert adapter.cycle().action == "failed"  # after it, the adapter tries again
    assert read_current(registry) == "base.online-1"


def test_a_restarted_adapter_keeps_its_count(registry: Path, tmp_path: Path,
                                             request: pytest.FixtureRequest) -> None:
    journal = Journal(tmp_path / "journal.jsonl")
    request.addfinalizer(journal.close)
    config = dataclasses.replace(OnlineConfig(adapter=SETTINGS), max_retries=2)
    kwargs = {"journal_path": journal.path, "models": registry, "state": tmp_path / "state",
              "cpus": {0}, "fine_tuner": bad_fine_tune}
    slow_streak(journal, 0)
    assert Adapter(config, **kwargs).cycle().opened is None  # type: ignore[arg-type]
    slow_streak(journal, 5)
    again = Adapter(config, **kwargs)  # type: ignore[arg-type]
    assert again.breaker.state.failures == 1
    assert again.cycle().opened is not None  # the second failure overall opens it
