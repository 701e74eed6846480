"""`dagpilot online run --once`: a bad config is `error: ...` and exit 2; a quiet journal
is one `no-drift` cycle."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dagpilot.cli import app, main
from dagpilot.journal import Journal

SEED = ("online_learning:\n  enable: true\n  max_retries: 3\n  rollback_on_failure: true\n"
        "  cooldown_minutes: 60\n")


def main_fails(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
               *args: str) -> str:
    """`dagpilot ARGS` through the entry point: exit 2 and the error line on stderr."""
    monkeypatch.setattr(sys, "argv", ["dagpilot", *args])
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("error:")
    return error


def test_a_bad_key_is_an_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(SEED + "  max_retry: 2\n")
    error = main_fails(monkeypatch, capsys, "online", "run", "--config", str(config), "--once")
    assert "online_learning.max_retry" in error
    assert "unknown key" in error


def test_one_cycle_without_drift(registry: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(SEED)
    journal = Journal(tmp_path / "journal.jsonl")
    journal.write("feedback", {"task_class": "etl", "runtime_s": 10.0,
                               "predicted": {"runtime_s": 10.0}})
    journal.close()
    result = CliRunner().invoke(app, [
        "online", "run", "--config", str(config), "--journal", str(journal.path),
        "--models", str(registry), "--state", str(tmp_path / "state"), "--cpus", "0",
        "--once"])
    assert result.exit_code == 0, result.output
    assert "online: no-drift" in result.output
    assert "dagpilot_online_breaker_open 0" in (tmp_path / "state" / "online.prom").read_text()


def test_cpus_outside_this_process_are_refused(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(SEED)
    beyond = str(max(os.sched_getaffinity(0)) + 1)
    error = main_fails(monkeypatch, capsys, "online", "run", "--config", str(config),
                       "--cpus", beyond, "--once")
    assert "--cpus: this process may use CPUs" in error
    error = main_fails(monkeypatch, capsys, "online", "run", "--config", str(config),
                       "--cpus", "1-x", "--once")
    assert "--cpus takes CPU numbers and ranges" in error
