"""The CSV training log."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dagpilot.train.metrics import COLUMNS, MetricsLog


def test_rows_are_written_as_they_come_with_blanks_for_what_is_missing(tmp_path: Path) -> None:
    log = MetricsLog(tmp_path / "run" / "metrics.csv")
    log.write({"phase": "bc", "iteration": 0, "bc_loss": 1.23456789})
    log.write({"phase": "ppo", "iteration": 0, "entropy": float("nan"), "steps": 12})
    rows = list(csv.DictReader((tmp_path / "run" / "metrics.csv").read_text().splitlines()))
    assert list(rows[0]) == list(COLUMNS)
    assert (rows[0]["phase"], rows[0]["bc_loss"], rows[0]["policy_loss"]) == ("bc", "1.23457", "")
    assert (rows[1]["steps"], rows[1]["entropy"]) == ("12", "")


def test_an_unknown_column_is_a_mistake(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown metric columns"):
        MetricsLog(tmp_path / "m.csv").write({"loss": 1.0})
