"""`runs.csv` of a CWS folder: one row per recorded run, with its recorded makespan.

Columns: workflow, strategy, rep and makespan_s are required; n_tasks, n_failed, n_nodes_used,
first_submit_ms and last_complete_ms are read when present. A run's `job_id` is the id the `cws`
loader gives its job (`rnaseq/original/1`), so recorded and simulated runs pair up by id.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from dagpilot.core.errors import InvalidInput
from dagpilot.core.numbers import MAX_EXACT
from dagpilot.workloads.cws import (
    LINE,
    MAX_MS,
    check_ranges,
    read_table,
    require_columns,
    to_numbers,
)

TEXT_COLUMNS = ("workflow", "strategy")
REQUIRED_NUMBERS = ("rep", "makespan_s")
OPTIONAL_NUMBERS = ("n_tasks", "n_failed", "n_nodes_used", "first_submit_ms", "last_complete_ms")
_MS = 1000.0
LIMITS = {"makespan_s": (0.0, MAX_MS / _MS),
          **dict.fromkeys(("rep", *OPTIONAL_NUMBERS), (0.0, MAX_EXACT))}


@dataclass(frozen=True, slots=True)
class RecordedRun:
    workflow: str
    strategy: str
    rep: int
    makespan_s: float
    n_tasks: int | None = None
    n_failed: int | None = None
    n_nodes_used: int | None = None
    first_submit_s: float | None = None
    last_complete_s: float | None = None

    @property
    def job_id(self) -> str:
        return f"{self.workflow}/{self.strategy}/{self.rep}"


def read_runs(path: Path) -> list[RecordedRun]:
    """Every row of a `runs.csv`, in file order."""
    file = str(path)
    frame = read_table(path)
    require_columns(frame, TEXT_COLUMNS + REQUIRED_NUMBERS, file)
    present = [c for c in OPTIONAL_NUMBERS if c in frame.columns]
    frame = to_numbers(frame, REQUIRED_NUMBERS + tuple(present), file)
    check_ranges(frame, LIMITS, file)
    for column in TEXT_COLUMNS + REQUIRED_NUMBERS:
        missing = frame.filter(pl.col(column).is_null())
        if missing.height:
            raise InvalidInput(file, f"line {missing[LINE][0]}", column, "missing value")
    return [_run(row, file) for row in frame.iter_rows(named=True)]


def _run(row: dict[str, Any], file: str) -> RecordedRun:
    def whole(column: str) -> int | None:
        value = row.get(column)
        if value is None:
            return None
        if value != int(value):
            raise InvalidInput(file, f"line {row[LINE]}", column,
                               f"expected a whole number, got {value}")
        return int(value)

    def seconds(column: str) -> float | None:
        value = row.get(column)
        return None if value is None else float(value) / _MS

    return RecordedRun(row["workflow"], row["strategy"], whole("rep") or 0,
                       float(row["makespan_s"]), whole("n_tasks"), whole("n_failed"),
                       whole("n_nodes_used"), seconds("first_submit_ms"),
                       seconds("last_complete_ms"))
