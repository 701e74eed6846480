"""Time continuity of metric time series: no gap over the limit, timestamps increasing.

A metric time series is a run of samples of one quantity taken at a regular interval (a
Prometheus range query, a node-exporter CSV). Two sources are read:

- a CSV with a time column (`timestamp` or `time`, any case, optionally suffixed `_s` or `_ms`).
  Numbers are seconds, or milliseconds when the column name ends in `_ms` or the values exceed
  1e11 (epoch milliseconds; epoch seconds stay below that until the year 5138); text is parsed
  as ISO 8601. The text columns name the series (node, pod, metric ...); numbers are values.
- a Prometheus range-query response: `{"status": "success", "data": {"resultType": "matrix",
  "result": [{"metric": {...}, "values": [[t, "v"], ...]}]}}`; a series is one result.

Event logs (pod creation times, task starts) are not samples and are not checked here.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import Violation
from dagpilot.core.reading.gunzip import read_decompressed
from dagpilot.core.reading.limits import MAX_TABLE_BYTES
from dagpilot.workloads.validation.numbers import seconds

TIME_COLUMNS = ("timestamp", "time", "timestamp_s", "time_s", "timestamp_ms", "time_ms")
_EPOCH_MS_ABOVE = 1e11


def time_column(columns: list[str]) -> str | None:
    """The column of a CSV header that holds sample times, if any."""
    by_name = {column.strip().lower(): column for column in columns}
    return next((by_name[name] for name in TIME_COLUMNS if name in by_name), None)


def series_violations(file: str, series: str, times: np.ndarray, record: Callable[[int], str],
                      max_gap_s: float) -> list[Violation]:
    """Gaps over `max_gap_s` and out-of-order samples in one series (times in file order, s)."""
    found: list[Violation] = []
    if len(times) == 0:
        return found
    steps = np.diff(times)
    backwards = np.flatnonzero(steps <= 0)
    if len(backwards):
        at = int(backwards[0]) + 1
        found.append(Violation(file, record(at), "time.order", (
            f"series {series}: {len(backwards)} sample(s) not after the one before, the first "
            f"t={seconds(times[at])} s after t={seconds(times[at - 1])} s")))
    order = np.argsort(times, kind="stable")
    ordered = times[order]
    for index in np.flatnonzero(np.diff(ordered) > max_gap_s):
        start, end = float(ordered[index]), float(ordered[index + 1])
        found.append(Violation(file, record(int(order[index + 1])), "time.gap", (
            f"series {series}: no sample for {seconds(end - start)} s from t={seconds(start)} s "
            f"to t={seconds(end)} s (at most {seconds(max_gap_s)} s allowed)")))
    return found


def csv_violations(path: Path, max_gap_s: float) -> list[Violation]:
    """Continuity of every series of a metrics CSV; the header is line 1."""
    file = str(path)
    data = read_decompressed(path, MAX_TABLE_BYTES)
    try:
        frame = pl.read_csv(io.BytesIO(data), infer_schema_length=10_000)
    except (pl.exceptions.PolarsError, UnicodeDecodeError) as error:
        raise InvalidInput(file, "", "", f"not a readable CSV: {error}") from error
    column = time_column(frame.columns)
    if column is None:
        raise InvalidInput(file, "line 1", "timestamp", "no timestamp or time column")
    seconds = _seconds(frame, column, file)
    keys = [name for name, dtype in frame.schema.items()
            if name != column and dtype == pl.String]
    table = pl.DataFrame({"_t": seconds, "_row": np.arange(frame.height)})
    frame = frame.select(keys).hstack(table) if keys else table
    found = _missing_times(frame, file, column)
    frame = frame.filter(pl.col("_t").is_not_nan())
    groups = frame.partition_by(keys, maintain_order=True) if keys else [frame]
    for group in groups:
        rows = group["_row"].to_numpy()
        name = _series_name(group, keys)
        found.extend(series_violations(file, name, group["_t"].to_numpy(), _csv_lines(rows),
                                       max_gap_s))
    return found


def prometheus_violations(file: str, document: dict[str, Any],
                          max_gap_s: float) -> list[Violation]:
    """Continuity of every series of a Prometheus range-query response."""
    if document.get("status") != "success":
        reason = document.get("error", document.get("status"))
        raise InvalidInput(file, "status", "status", f"the query did not succeed: {reason!r}")
    data = document.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix":
        return []  # a vector or scalar is one sample per series: nothing to be continuous
    results = data.get("result")
    if not isinstance(results, list):
        raise InvalidInput(file, "data.result", "result", "expected a list of series")
    found: list[Violation] = []
    for index, result in enumerate(results):
        where = f"data.result[{index}]"
        times = _prometheus_times(file, where, result)
        name = _metric_name(result.get("metric", {}))
        found.extend(series_violations(file, name, times, _json_samples(where), max_gap_s))
    return found


def _csv_lines(rows: np.ndarray) -> Callable[[int], str]:
    """Record names of a series' samples: CSV lines, the header being line 1."""
    return lambda index: f"line {int(rows[index]) + 2}"


def _json_samples(where: str) -> Callable[[int], str]:
    return lambda index: f"{where}.values[{index}]"


def _seconds(frame: pl.DataFrame, column: str, file: str) -> np.ndarray:
    values = frame[column]
    if values.dtype == pl.String:
        try:
            parsed = values.str.to_datetime(time_zone="UTC", strict=False)
        except pl.exceptions.PolarsError as error:
            raise InvalidInput(file, "", column, f"timestamps are not ISO 8601: {error}") from error
        return (parsed.dt.epoch("ms").cast(pl.Float64) / 1000.0).fill_null(np.nan).to_numpy()
    if not values.dtype.is_numeric():
        raise InvalidInput(file, "", column, f"timestamps must be numbers or ISO 8601 text, "
                           f"not {values.dtype}")
    seconds = values.cast(pl.Float64).fill_null(np.nan).to_numpy()
    largest = np.nanmax(seconds, initial=0.0)
    in_ms = column.lower().endswith("_ms") or bool(largest > _EPOCH_MS_ABOVE)
    return seconds / 1000.0 if in_ms else seconds


def _missing_times(frame: pl.DataFrame, file: str, column: str) -> list[Violation]:
    missing = frame.filter(pl.col("_t").is_nan())["_row"]
    if missing.is_empty():
        return []
    return [Violation(file, f"line {int(missing[0]) + 2}", "time.missing",
                      f"{len(missing)} sample(s) without a readable {column!r}")]


def _series_name(group: pl.DataFrame, keys: list[str]) -> str:
    if not keys:
        return "(all rows)"
    first = group.row(0, named=True)
    return "{" + ", ".join(f"{key}={first[key]!r}" for key in keys) + "}"


def _prometheus_times(file: str, where: str, result: Any) -> np.ndarray:
    values = result.get("values") if isinstance(result, dict) else None
    if not isinstance(values, list):
        raise InvalidInput(file, where, "values", "expected a list of [time, value] pairs")
    try:
        return np.array([float(pair[0]) for pair in values], dtype=float)
    except (TypeError, ValueError, IndexError, KeyError) as error:
        raise InvalidInput(file, where, "values",
                           f"a sample is not a [time, value] pair: {error}") from error


def _metric_name(metric: Any) -> str:
    if not isinstance(metric, dict):
        return "{}"
    labels = ", ".join(f"{k}={v!r}" for k, v in sorted(metric.items()) if k != "__name__")
    return f"{metric.get('__name__', '')}{{{labels}}}"
