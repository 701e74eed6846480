"""Alibaba v2018 `batch_task` rows whose values the reader must replace or cannot trust.

The reader substitutes settings defaults for missing requests and instance counts (`nan`, or -1,
the trace's marker for an invalid value), so the drafts no longer show them; these checks read
the rows themselves. A task that never ended (`end_time` 0) whose `mean_instance_duration`
equals its `start_time` carries a duration computed from the missing end: it is not a runtime.
"""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl

from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import Severity, Violation
from dagpilot.core.reading.gunzip import read_decompressed
from dagpilot.core.reading.limits import MAX_TABLE_BYTES

_MISSING = ("", "nan", "NaN", "-1")
_REQUESTS = ("plan_cpu", "plan_mem")
_TIMES = ("start_time", "end_time", "mean_instance_duration")


def row_violations(path: Path) -> list[Violation]:
    """Missing requests and instance counts, and durations of tasks that never ended."""
    try:
        data = read_decompressed(path, MAX_TABLE_BYTES)  # the bytes the reader read (pinned)
        rows = pl.read_csv(io.BytesIO(data), infer_schema_length=0).with_row_index("_row")
    except (pl.exceptions.PolarsError, InvalidInput, UnicodeDecodeError):
        return []  # the reader reports what makes the file unreadable
    file = str(path)
    found: list[Violation] = []
    for column in _REQUESTS:
        found += _flag(file, rows, _missing(rows, column), "field.requests",
                       f"{column} is missing: the reader uses the settings default")
    found += _flag(file, rows, _missing(rows, "instance_num"), "field.instances",
                   "instance_num is missing: the reader assumes 1 instance")
    if set(_TIMES) <= set(rows.columns):
        start, end, mean = (pl.col(c).cast(pl.Float64, strict=False) for c in _TIMES)
        found += _flag(file, rows, (end == 0) & (mean == start) & (start > 1), "field.runtime",
                       "never ended (end_time 0) and its mean_instance_duration equals its "
                       "start_time: not a runtime", show="mean_instance_duration")
    return sorted(found, key=lambda v: int(v.record.removeprefix("line ")))


def _missing(rows: pl.DataFrame, column: str) -> pl.Expr:
    if column not in rows.columns:
        return pl.lit(value=False)
    return pl.col(column).is_null() | pl.col(column).str.strip_chars().is_in(_MISSING)


def _flag(file: str, rows: pl.DataFrame, condition: pl.Expr, rule: str, message: str, *,
          show: str | None = None) -> list[Violation]:
    names = [c for c in ("job_name", "task_name", "status") if c in rows.columns]
    found: list[Violation] = []
    for row in rows.filter(condition).iter_rows(named=True):
        who = " ".join(str(row[c]) for c in names)
        value = f" ({show} {row[show]})" if show else ""
        found.append(Violation(file, f"line {row['_row'] + 2}", rule, f"{who}: {message}{value}",
                               Severity.WARNING))
    return found
