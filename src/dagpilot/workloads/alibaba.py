"""Alibaba cluster-trace-v2018 `batch_task` rows -> one job per `job_name`.

The argument is a CSV file (plain or gzipped) or a folder, whose `*.csv` and `*.csv.gz` files are
read in name order. Job ids are `<file stem>/<job_name>`, so samples that share jobs do not collide.

Row -> task:
- `task_name` encodes the DAG: `M3_1_2` is task 3, which depends on tasks 1 and 2; the letters
  are not semantic. Tokens after the first `_` that are not whole numbers (`M1_Stg8`, a trailing
  `_`) are ignored. A name that does not start with letters then digits (the trace's
  `task_<random>` names) is not DAG-encoded: it becomes an independent task nobody can name.
- A dependency on a number that no task of the job carries (the samples dropped some rows) is
  dropped, and the job gets a label `alibaba.dropped_parents` with the count. A number carried
  by several tasks makes the dependent wait for all of them.
- `instance_num` -> instances (1 when "nan": the trace's Waiting rows);
  `mean_instance_duration` -> runtime_s, for Terminated rows only (the trace writes 1 when it is
  unknown, so those tasks take 1 s); `plan_cpu` / 100 -> cores and `plan_mem` / 100 x
  `settings.alibaba_machine_memory` -> bytes, each the settings default when "nan" or -1 (the
  trace's marker for an invalid value; 101 too for `plan_mem`, normalised to 0..100).
- `start_time` / `end_time` of 0 mean "not started" / "not ended". A job arrives at the earliest
  start of its tasks (0 when none started); tasks keep their times in `recorded`.
- Numbers are finite and within LIMITS (times not negative, an end not before its start,
  at most MAX_INSTANCES instances); "nan" is only read where the trace writes it (instance_num,
  mean_instance_duration, plan_cpu, plan_mem). The header names each column once and no row
  is shorter than it (core.csv_shape).
- A job whose rows are not all Terminated gets a label `alibaba.status` with the status counts
  and no recorded makespan.
- A task that did not terminate (Running, Waiting, Failed) has no measured runtime: a Running
  row's `mean_instance_duration` covers only the instances that ended, or is computed from the
  missing end (days long: docs/DATA.md, `field.runtime`), a Waiting row's is the placeholder 1
  and a Failed row's is how long the failed attempt ran. Such a task takes
  `settings.default_runtime_s`, like a runtime no other trace records, and the job gets a label
  `alibaba.default_runtimes` with their count; each file logs its total at INFO.
"""

from __future__ import annotations

import csv
import io
import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from dagpilot.core.config import LoaderSettings
from dagpilot.core.csv_shape import check_shape
from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft
from dagpilot.core.numbers import MAX_CORES, MAX_DIGITS, MAX_EXACT, ascii_whole, problem
from dagpilot.core.reading.folders import files_in, path_kind
from dagpilot.core.types import Recorded, Resources, Task, labels
from dagpilot.workloads import compressed

log = logging.getLogger(__name__)

TEXT_COLUMNS = ("job_name", "task_name", "status")
NUMBER_COLUMNS = ("instance_num", "start_time", "end_time", "mean_instance_duration",
                  "plan_cpu", "plan_mem")
# ASCII digits, at most MAX_DIGITS of them: `\d` also matches "٣", and int() refuses 4,301 digits
_DAG_NAME = re.compile(rf"^[A-Za-z]+([0-9]{{1,{MAX_DIGITS}}})(?:_(.*))?$")
_FIRST_DATA_LINE = 2  # line 1 is the header
TERMINATED = "Terminated"
# More instances than this in one task is no trace of a real job: ten times the most in the
# shared samples (97,890), and the sum over a file's tasks stays far inside an int64.
MAX_INSTANCES = 1_000_000
MAX_DURATION_S = 1e15  # job_draft refuses runtimes over a year; this keeps every sum finite
INVALID_MARKERS = (-1.0, 101.0)  # the trace's markers of an invalid normalised value
# [low, high] of each number column (NaN is refused where the trace does not use it).
# Negative counts, runtimes and CPU are left to job_draft's rules, which report them per task.
LIMITS: dict[str, tuple[float, float]] = {
    "instance_num": (-MAX_INSTANCES, MAX_INSTANCES),
    "start_time": (0.0, MAX_EXACT), "end_time": (0.0, MAX_EXACT),
    "mean_instance_duration": (-MAX_DURATION_S, MAX_DURATION_S),
    "plan_cpu": (-100 * MAX_CORES, 100 * MAX_CORES),
    "plan_mem": (0.0, 100.0),  # percent of a machine's memory (or an INVALID_MARKERS)
}
# Columns where "nan" (or nothing) means "not recorded": Waiting rows were never planned.
NAN_MEANS_MISSING = ("instance_num", "mean_instance_duration", "plan_cpu", "plan_mem")


@dataclass(frozen=True, slots=True)
class TaskName:
    """What a `task_name` says: the task's number (None when not DAG-encoded) and its parents'."""

    number: int | None
    parents: tuple[int, ...] = ()


def parse_task_name(name: str) -> TaskName:
    """`M3_1_2` -> TaskName(3, (1, 2)); `M1_Stg8` -> TaskName(1); `task_Nzg3` -> TaskName(None)."""
    match = _DAG_NAME.match(name)
    if match is None:
        return TaskName(None)
    tokens = (match.group(2) or "").split("_")
    parents = (ascii_whole(token) for token in tokens)
    return TaskName(int(match.group(1)), tuple(n for n in parents if n is not None))


def read(argument: str, settings: LoaderSettings) -> list[JobDraft]:
    """One draft per job of every batch_task CSV named by `argument` (a file or a folder)."""
    drafts: list[JobDraft] = []
    for path in _csv_files(Path(argument)):
        drafts.extend(read_file(path, settings))
    return drafts


def read_file(path: Path, settings: LoaderSettings) -> list[JobDraft]:
    file = str(path)
    rows = _task_rows(_numbers(_read_table(path), file), file, settings)
    stem = _stem(path)
    rows_by_job: dict[str, list[_Row]] = {}
    for row in rows.iter_rows():
        rows_by_job.setdefault(row[0], []).append(row)
    _log_default_runtimes(file, rows, settings)
    return [_job(file, f"{stem}/{job}", job_rows) for job, job_rows in rows_by_job.items()]


def _log_default_runtimes(file: str, rows: pl.DataFrame, settings: LoaderSettings) -> None:
    unfinished = rows.filter(pl.col("status") != TERMINATED)
    if unfinished.height:
        log.info("%s: %d tasks of %d jobs did not terminate, so their runtime is unknown: "
                 "they take the default %g s", file, unfinished.height,
                 unfinished["job_name"].n_unique(), settings.default_runtime_s)


def _csv_files(path: Path) -> list[Path]:
    kind = path_kind(path)
    if kind == "folder":
        files = files_in(path, lambda name: name.endswith((".csv", ".csv.gz")))
        if not files:
            raise InvalidInput(str(path), "", "", "folder holds no *.csv or *.csv.gz file")
        return files
    if kind == "missing":
        raise InvalidInput(str(path), "", "", "no such file or folder")
    return [path]


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".csv.gz", ".csv"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _read_table(path: Path) -> pl.DataFrame:
    """Every column as text, so that a bad value can be reported with its line and column."""
    file = str(path)
    data = compressed.read_bytes(path)
    check_shape(data, file)
    try:
        frame = pl.read_csv(io.BytesIO(data), infer_schema_length=0)
    except pl.exceptions.PolarsError as error:
        raise InvalidInput(file, _ragged_line(data), "",
                           f"not a readable CSV: {str(error).splitlines()[0]}") from error
    for column in (*TEXT_COLUMNS, *NUMBER_COLUMNS):
        if column not in frame.columns:
            raise InvalidInput(file, "header", column,
                               f"missing column; the header has {', '.join(frame.columns)}")
    return frame


def _ragged_line(data: bytes) -> str:
    """The first line whose field count differs from the header's, to locate a CSV error."""
    rows = csv.reader(io.StringIO(data.decode("utf-8", errors="replace"), newline=""))
    width = None
    try:
        for row in rows:
            width = len(row) if width is None else width
            if len(row) != width:
                return f"line {rows.line_num}"
    except csv.Error:
        return f"line {rows.line_num}"
    return ""


def _numbers(frame: pl.DataFrame, file: str) -> pl.DataFrame:
    """Numeric columns as floats ("nan" and empty become NaN); text columns must be non-empty."""
    for column in TEXT_COLUMNS:
        empty = frame.select((pl.col(column).is_null() | (pl.col(column).str.strip_chars() == ""))
                             .arg_true()).to_series()
        if empty.len():
            raise InvalidInput(file, f"line {empty[0] + _FIRST_DATA_LINE}", column, "empty")
    converted = frame.with_columns(
        pl.col(c).str.strip_chars().cast(pl.Float64, strict=False).fill_null(math.nan)
        for c in NUMBER_COLUMNS)
    for column in NUMBER_COLUMNS:
        text = frame[column].str.strip_chars()
        number = converted[column]
        empty = text.is_null() | (text == "")
        if column in NAN_MEANS_MISSING:
            bad = (number.is_nan() & ~empty & (text.str.to_lowercase() != "nan")
                   | number.is_infinite()).arg_true()
        else:
            bad = (number.is_nan() | number.is_infinite()).arg_true()
        if bad.len():
            value = text[bad[0]]
            raise InvalidInput(file, f"line {bad[0] + _FIRST_DATA_LINE}", column,
                               f"not a finite number: {shown(value)}" if value else "missing")
    _check_ranges(converted, file)
    return converted


def _check_ranges(frame: pl.DataFrame, file: str) -> None:
    """Every number within LIMITS (NaN is "not recorded" by now), and no end before its start."""
    for column, (low, high) in LIMITS.items():
        values = pl.col(column)
        outside = values.is_not_nan() & ((values < low) | (values > high))
        if column == "plan_mem":
            outside = outside & ~values.is_in(INVALID_MARKERS)
        rows = frame.select(outside.arg_true()).to_series()
        if rows.len():
            value = frame[column][rows[0]]
            raise InvalidInput(file, f"line {rows[0] + _FIRST_DATA_LINE}", column,
                               problem(value, low, high) or f"out of range: {value:g}")
    start, end = pl.col("start_time"), pl.col("end_time")
    backwards = frame.select(((start > 0) & (end > 0) & (end < start)).arg_true()).to_series()
    if backwards.len():
        row = backwards[0]
        raise InvalidInput(file, f"line {row + _FIRST_DATA_LINE}", "end_time",
                           f"the task ends ({frame['end_time'][row]:g}) before it starts "
                           f"({frame['start_time'][row]:g})")


_Row = tuple[Any, ...]
"""job_name, task_name, status, line, instances, runtime_s, cpu, memory, start_s, complete_s"""


def _task_rows(frame: pl.DataFrame, file: str, settings: LoaderSettings) -> pl.DataFrame:
    """The task fields in trace units converted to ours, one row per task (see module doc)."""
    count = pl.col("instance_num")
    fractional = frame.select((count.is_not_nan() & (count % 1 != 0)).arg_true()).to_series()
    if fractional.len():
        index = fractional[0]
        raise InvalidInput(file, f"line {index + _FIRST_DATA_LINE}", "instance_num",
                           f"not a whole number: {frame['instance_num'][index]:g}")
    cpu, memory = pl.col("plan_cpu"), pl.col("plan_mem")
    # -1 (and 101 for a normalised value) mark an invalid value (alibaba_trace_2018.md, 2.2)
    no_cpu = cpu.is_nan() | (cpu == -1)
    no_memory = memory.is_nan() | memory.is_in(INVALID_MARKERS)
    return frame.select(
        "job_name", "task_name", "status",
        (pl.int_range(pl.len()) + _FIRST_DATA_LINE).alias("line"),
        # Waiting rows were never planned: one instance
        pl.col("instance_num").fill_nan(1.0).cast(pl.Int64).alias("instances"),
        # only a task that terminated has a measured runtime (see module doc)
        pl.when(pl.col("status") == TERMINATED).then(pl.col("mean_instance_duration"))
        .otherwise(settings.default_runtime_s).alias("runtime_s"),
        pl.when(no_cpu).then(settings.default_cpu).otherwise(cpu / 100.0).alias("cpu"),
        pl.when(no_memory).then(float(settings.default_memory))
        .otherwise(memory / 100.0 * settings.alibaba_machine_memory).alias("memory"),
        pl.when(pl.col("start_time") > 0).then(pl.col("start_time")).alias("start_s"),
        pl.when((pl.col("end_time") > 0) & (pl.col("status") == TERMINATED))
        .then(pl.col("end_time")).alias("complete_s"),
    )


def _job(file: str, job_id: str, rows: Sequence[_Row]) -> JobDraft:
    names = [parse_task_name(row[1]) for row in rows]
    ids_by_number: dict[int, list[str]] = {}
    for name, row in zip(names, rows, strict=True):
        if name.number is not None:
            ids_by_number.setdefault(name.number, []).append(row[1])
    dropped = 0
    draft = JobDraft(file, job_id)
    for name, row in zip(names, rows, strict=True):
        parents = tuple(task for number in name.parents for task in ids_by_number.get(number, ()))
        missing = [n for n in name.parents if n not in ids_by_number]
        if missing:
            dropped += len(missing)
            log.debug("%s: line %d: %s names missing tasks %s", file, row[3], job_id, missing)
        draft.add(_task(row, parents), f"line {row[3]}")
    _describe(draft, rows, dropped)
    return draft


def _task(row: _Row, parents: tuple[str, ...]) -> Task:
    _, name, _, _, instances, runtime_s, cpu, memory, start_s, complete_s = row
    recorded = None if start_s is None and complete_s is None else Recorded(
        start_s=start_s, complete_s=complete_s)
    return Task(id=name, name=name, runtime_s=runtime_s, requests=Resources(cpu, round(memory)),
                parents=parents, instances=instances, recorded=recorded)


def _describe(draft: JobDraft, rows: Sequence[_Row], dropped: int) -> None:
    """Arrival, recorded makespan and labels of a job from its rows."""
    starts = [row[8] for row in rows if row[8] is not None]
    draft.arrival_s = min(starts, default=0.0)
    statuses = Counter(row[2] for row in rows)
    found: dict[str, str] = {}
    if set(statuses) == {TERMINATED}:
        ends = [row[9] for row in rows]
        if starts and None not in ends:
            draft.recorded_makespan_s = max(ends) - draft.arrival_s
    else:
        found["alibaba.status"] = ",".join(f"{s}={n}" for s, n in sorted(statuses.items()))
        found["alibaba.default_runtimes"] = str(len(rows) - statuses[TERMINATED])
    if dropped:
        found["alibaba.dropped_parents"] = str(dropped)
    draft.labels = labels(found)
