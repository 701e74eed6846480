"""Nextflow traces of the Common Workflow Scheduler experiments -> one job per recorded run.

The argument is a CWS folder `DIR` (every `DIR/traces/NAME.csv.gz` or `.csv`, in name order, each
with its process DAG `DIR/process_dags/NAME.json`) or one trace file `DIR/traces/NAME.csv[.gz]`.
A trace holds every run of one pipeline: one run is one (strategy, rep) pair, whose job id is
`NAME/STRATEGY/REP` (`rnaseq/original/1`), with labels `workflow`, `strategy`, `rep` and the
counts of the edge rebuild (`workloads.cws_edges`; `unrebuilt_edges` counts the process-level
dependencies that could not be rebuilt at task level).

Row -> task (a missing value is `-`):
- id = `task_id`, name = `name`; runtime_s = `realtime` (ms), else `duration` (ms), else NaN so
  the DAG rules reject it;
- requests = `cpus` and `memory` (bytes), each the settings default when missing;
  peak_memory = `peak_rss`; read/written bytes = `read_bytes`/`write_bytes`, else `rchar`/`wchar`;
- cpu_intensity from `%cpu`, io_intensity and task_class as `workloads.intensity` says;
- recorded = Recorded(node=`hostname`, submit_s, start_s, complete_s), epoch ms -> seconds, as
  recorded; recorded_makespan_s = last complete - first submit (as in `runs.csv`).
- Every number is finite and within LIMITS (bytes and %cpu not negative, times in order:
  submit <= start <= complete); the header names each column once and no row is shorter than
  it (core.csv_shape).
Rows of failed attempts stay tasks like any other (the shared traces have none).

Task-level edges are not recorded; `workloads.cws_edges` rebuilds them (its docstring has the
full rule): a task depends on the tasks of each parent process (the process DAG, walked through
processes that did not run) whose tag equals its own or extends or prefixes it at a separator
(`WT_REP1` <- `WT_REP1_T1`); on every task of that process when the relation is not keyed by tag
(a one-task parent, an untagged or collecting child); and only where it was submitted at or after
that parent completed.
"""

from __future__ import annotations

import io
import itertools
import logging
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from dagpilot.core.config import LoaderSettings
from dagpilot.core.csv_shape import check_shape
from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft, children_of
from dagpilot.core.numbers import MAX_BYTES, MAX_CORES, MAX_EXACT, problem
from dagpilot.core.reading.folders import files_in, path_kind
from dagpilot.core.reading.json_documents import read_json
from dagpilot.core.types import Recorded, Resources, Task, labels
from dagpilot.workloads import compressed, intensity
from dagpilot.workloads.cws_edges import RebuildStats, TooManyEdges, rebuild
from dagpilot.workloads.gc_pause import collector_paused

log = logging.getLogger(__name__)

TEXT_COLUMNS = ("strategy", "task_id", "process", "tag", "name")
REQUIRED_NUMBERS = ("rep", "submit", "complete")
OPTIONAL_TEXT = ("hostname", "status")
OPTIONAL_NUMBERS = ("start", "realtime", "duration", "cpus", "memory", "%cpu", "peak_rss",
                    "read_bytes", "write_bytes", "rchar", "wchar")
RUNTIME_COLUMNS = ("realtime", "duration")
MISSING = "-"
MS = 1000.0
_FIRST_DATA_LINE = 2  # line 1 is the header
LINE = "_line"  # the column read_table adds: each row's line in the file
TRACE_SUFFIXES = (".csv.gz", ".csv")
MAX_MS = 1e15  # a duration in ms beyond 31,000 years is no measurement
# What one trace file may hold: rows (tasks; 145,200 rows load in 460 MB) and the task
# dependencies rebuilt over all its runs (broadcasts grow with the product of two processes).
# The shared traces hold at most 72,600 rows (eager) and 523,182 dependencies (nanoseq).
MAX_ROWS = 150_000
MAX_EDGES = 5_000_000
EVENTS = ("submit", "start", "complete")  # in this order in time, when recorded
# [low, high] of each number column (NaN and infinities are refused outright). Negative
# runtimes and requests are left to the DAG rules (job_draft), which report them per task.
LIMITS: dict[str, tuple[float, float]] = {
    "rep": (0, MAX_EXACT),
    **dict.fromkeys(EVENTS, (0, MAX_EXACT)),  # epoch ms
    "realtime": (-MAX_MS, MAX_MS), "duration": (-MAX_MS, MAX_MS),
    "cpus": (-MAX_CORES, MAX_CORES), "memory": (-MAX_BYTES, MAX_BYTES),
    "%cpu": (0, MAX_CORES * 100),
    **dict.fromkeys(("peak_rss", "read_bytes", "write_bytes", "rchar", "wchar"), (0, MAX_BYTES)),
}


@dataclass(frozen=True)
class ProcessDag:
    """The process-level DAG of a pipeline: its processes and each one's parent processes."""

    file: str
    processes: frozenset[str]
    parents: dict[str, tuple[str, ...]]


def read(argument: str, settings: LoaderSettings) -> list[JobDraft]:
    """One draft per recorded run of every pipeline `argument` names (a CWS folder or a trace)."""
    drafts: list[JobDraft] = []
    with collector_paused():
        for trace, dag in pipelines(Path(argument)):
            drafts.extend(read_pipeline(trace, dag, settings))
    return drafts


def pipelines(path: Path) -> list[tuple[Path, Path]]:
    """(trace, process DAG) of each pipeline a CWS folder or a single trace file names."""
    if path_kind(path) == "file":
        return [(path, dag_of(path))]
    traces = path / "traces"
    if path_kind(traces) != "folder":
        raise InvalidInput(str(path), "", "", "no such trace file, nor a CWS folder with traces/ "
                           "and process_dags/")
    files = files_in(traces, lambda name: name.endswith(TRACE_SUFFIXES))
    if not files:
        raise InvalidInput(str(traces), "", "", "folder holds no *.csv or *.csv.gz trace")
    return [(file, dag_of(file)) for file in files]


def pipeline_name(trace: Path) -> str:
    for suffix in TRACE_SUFFIXES:
        if trace.name.endswith(suffix):
            return trace.name[: -len(suffix)]
    return trace.stem


def dag_of(trace: Path) -> Path:
    """`DIR/process_dags/NAME.json` for the trace `DIR/traces/NAME.csv.gz`."""
    dag = trace.parent.parent / "process_dags" / f"{pipeline_name(trace)}.json"
    if path_kind(dag) == "missing":
        raise InvalidInput(str(dag), "", "", f"missing: the process DAG of {trace}")
    return dag


def read_pipeline(trace: Path, dag_file: Path, settings: LoaderSettings) -> list[JobDraft]:
    """One draft per (strategy, rep) run in one pipeline's trace, runs in that order."""
    dag = read_process_dag(dag_file)
    frame = read_trace(trace)
    _check_processes(frame, dag, str(trace))
    name = pipeline_name(trace)
    # One pass to Python rows; sorting keeps the file order of the tasks inside each run.
    rows = _rows(frame.sort("strategy", "rep", LINE))
    drafts = []
    unrebuilt = 0
    edges_left = MAX_EDGES
    for (strategy, rep), run in itertools.groupby(rows, key=_RUN_KEY):
        draft, stats = _run(str(trace), list(run), dag, settings, name=name, strategy=strategy,
                            rep=int(rep), edges_left=edges_left)
        drafts.append(draft)
        unrebuilt += stats.unrebuilt
        edges_left -= stats.kept_edges
    log.log(logging.WARNING if unrebuilt else logging.INFO,
            "%s: %d runs, %d tasks; %d process-level dependencies not rebuilt at task level",
            name, len(drafts), frame.height, unrebuilt)
    return drafts


# --- reading the files ---------------------------------------------------------------------

def read_table(path: Path) -> pl.DataFrame:
    """A CSV (plain or gzipped), every column as text, plus the LINE column (header = line 1)."""
    file = str(path)
    data = compressed.read_bytes(path)
    check_shape(data, file)  # no column named twice, no short row
    try:
        frame = pl.read_csv(io.BytesIO(data), infer_schema_length=0)
    except (pl.exceptions.PolarsError, UnicodeDecodeError) as error:
        raise InvalidInput(file, "", "", f"not a readable CSV: {error}") from error
    if LINE in frame.columns:
        raise InvalidInput(file, "header (line 1)", LINE, "reserved column name")
    return frame.with_row_index(LINE, offset=_FIRST_DATA_LINE)


def require_columns(frame: pl.DataFrame, columns: Sequence[str], file: str) -> None:
    found = ", ".join(c for c in frame.columns if c != LINE)
    for column in columns:
        if column not in frame.columns:
            raise InvalidInput(file, "header (line 1)", column, f"missing column; found: {found}")


def _first_rows(frame: pl.DataFrame, conditions: dict[str, pl.Expr]) -> dict[str, int | None]:
    """The index of the first row where each condition holds (None where none does), in one
    pass over the frame; the keys in the order given."""
    found = frame.select(condition.arg_true().first().alias(name)
                         for name, condition in conditions.items())
    return {name: found[name][0] for name in conditions}


def to_numbers(frame: pl.DataFrame, columns: Sequence[str], file: str) -> pl.DataFrame:
    """The columns as Float64, `-` and empty as null; a value that is not a finite number
    ("nan", "inf", "1e400" included) is an error."""
    numbers: dict[str, pl.Expr] = {}
    bad: dict[str, pl.Expr] = {}
    for column in columns:
        text = pl.col(column).str.strip_chars()
        present = text.is_not_null() & (text != "") & (text != MISSING)
        numbers[column] = text.cast(pl.Float64, strict=False)  # "", "-" and null give null
        bad[column] = present & (numbers[column].is_null() | ~numbers[column].is_finite())
    for column, row in _first_rows(frame, bad).items():
        if row is not None:
            raise InvalidInput(file, f"line {frame[LINE][row]}", column,
                               f"not a finite number: {shown(frame[column][row])}")
    return frame.with_columns(number.alias(column) for column, number in numbers.items())


def check_ranges(frame: pl.DataFrame, limits: dict[str, tuple[float, float]], file: str) -> None:
    """Every number of the columns `limits` names within its [low, high], else InvalidInput
    at the first row that is not."""
    outside = {column: pl.col(column).is_not_null()
               & ((pl.col(column) < low) | (pl.col(column) > high))
               for column, (low, high) in limits.items() if column in frame.columns}
    for column, row in _first_rows(frame, outside).items():
        if row is not None:
            reason = problem(frame[column][row], *limits[column]) or "out of range"
            raise InvalidInput(file, f"line {frame[LINE][row]}", column, reason)


def _check_event_order(frame: pl.DataFrame, file: str) -> None:
    """submit <= start <= complete wherever two of them are recorded."""
    pairs = [(early, late) for index, early in enumerate(EVENTS) for late in EVENTS[index + 1:]]
    backwards = {f"{late}<{early}": pl.col(late) < pl.col(early) for early, late in pairs}
    for name, row in _first_rows(frame, backwards).items():
        if row is not None:
            late, early = name.split("<")
            raise InvalidInput(file, f"line {frame[LINE][row]}", late,
                               f"{late} {frame[late][row]:.0f} is before {early} "
                               f"{frame[early][row]:.0f}")


def read_trace(path: Path) -> pl.DataFrame:
    """A merged CWS trace: text columns checked, number columns converted, LINE added."""
    file = str(path)
    frame = read_table(path)
    if frame.height > MAX_ROWS:
        raise InvalidInput(file, f"line {MAX_ROWS + _FIRST_DATA_LINE}", "",
                           f"more than {MAX_ROWS:,} tasks in one trace")
    require_columns(frame, TEXT_COLUMNS + REQUIRED_NUMBERS, file)
    if not any(column in frame.columns for column in RUNTIME_COLUMNS):
        raise InvalidInput(file, "header (line 1)", "realtime",
                           "missing column: neither realtime nor duration")
    empty = _first_rows(frame, {column: pl.col(column).is_null() for column in TEXT_COLUMNS})
    for column, row in empty.items():
        if row is not None:
            raise InvalidInput(file, f"line {frame[LINE][row]}", column, "empty")
    frame = frame.with_columns([pl.lit(None, pl.Utf8).alias(c)
                                for c in OPTIONAL_TEXT + OPTIONAL_NUMBERS
                                if c not in frame.columns])
    frame = to_numbers(frame, REQUIRED_NUMBERS + OPTIONAL_NUMBERS, file)
    check_ranges(frame, LIMITS, file)
    _check_event_order(frame, file)
    rep = pl.col("rep")
    bad_rep = _first_rows(frame, {"fractional": rep.is_not_null() & (rep % 1 != 0),
                                 "missing": rep.is_null()})
    for row in bad_rep.values():
        if row is not None:
            raise InvalidInput(file, f"line {frame[LINE][row]}", "rep",
                               "expected a whole repetition number")
    return frame


def read_process_dag(path: Path) -> ProcessDag:
    """`processes` and `process_edges` ([parent, child] pairs) of a process-DAG JSON file."""
    file = str(path)
    document = read_json(path)
    processes = _string_list(document, "processes", file)
    edges = document.get("process_edges")
    if not isinstance(edges, list):
        raise InvalidInput(file, "top level", "process_edges", "missing or not a list")
    parents: dict[str, list[str]] = {}
    for index, edge in enumerate(edges):
        if not (isinstance(edge, list) and len(edge) == 2
                and all(isinstance(end, str) for end in edge)):
            raise InvalidInput(file, f"process_edges[{index}]", "process_edges",
                               f"expected [parent, child] process names, got {shown(edge)}")
        parents.setdefault(edge[1], []).append(edge[0])
    known = frozenset(processes) | {end for edge in edges for end in edge}
    return ProcessDag(file, known, {child: tuple(ups) for child, ups in parents.items()})


def _string_list(document: Any, key: str, file: str) -> list[str]:
    value = document.get(key) if isinstance(document, dict) else None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidInput(file, "top level", key, "missing or not a list of strings")
    return value


def _check_processes(frame: pl.DataFrame, dag: ProcessDag, file: str) -> None:
    unknown = frame.filter(~pl.col("process").is_in(list(dag.processes)))
    if unknown.height:
        raise InvalidInput(file, f"line {unknown[LINE][0]}", "process",
                           f"process {shown(unknown['process'][0])} is not in {dag.file}")


# --- one run -> one draft ------------------------------------------------------------------

class _Row(NamedTuple):
    """What a task takes of one trace row (None when missing); also what the edge rebuild needs
    (`cws_edges.Traced`)."""

    line: int
    strategy: str
    rep: float
    id: str
    process: str
    tag: str
    name: str
    node: str | None
    status: str | None
    submit: float | None  # epoch ms, for the recorded makespan
    complete: float | None
    submit_s: float | None
    start_s: float | None
    complete_s: float | None
    runtime_s: float  # realtime, else duration, else NaN
    cpus: float | None
    memory: float | None
    cpu_percent: float | None
    peak_rss: float | None
    read_bytes: float | None  # read_bytes, else rchar
    written_bytes: float | None  # write_bytes, else wchar


_ROW_COLUMNS = (
    pl.col(LINE).alias("line"), "strategy", "rep", pl.col("task_id").alias("id"), "process",
    "tag", "name",
    pl.when(pl.col("hostname").is_in(["", MISSING])).then(None).otherwise(pl.col("hostname"))
    .alias("node"),
    "status", "submit", "start", "complete", pl.coalesce("realtime", "duration").alias("runtime"),
    "cpus", "memory", pl.col("%cpu").alias("cpu_percent"), "peak_rss",
    pl.coalesce("read_bytes", "rchar").alias("read_bytes"),
    pl.coalesce("write_bytes", "wchar").alias("written_bytes"))


def _rows(frame: pl.DataFrame) -> list[_Row]:
    """The rows of a trace, column by column to Python (cheaper than row by row).

    Milliseconds become seconds here, not in polars, which multiplies by the reciprocal: that
    can differ from a division in the last bit.
    """
    columns: dict[str, list[Any]] = {
        column.name: column.to_list() for column in frame.select(_ROW_COLUMNS).iter_columns()}
    for event in ("submit", "start", "complete"):
        columns[f"{event}_s"] = [None if ms is None else ms / MS for ms in columns[event]]
    columns["runtime_s"] = [math.nan if ms is None else ms / MS for ms in columns["runtime"]]
    return list(map(_Row._make, zip(*(columns[field] for field in _Row._fields), strict=True)))


_RUN_KEY = operator.attrgetter("strategy", "rep")  # rep is whole (read_trace checks it)


def _run(file: str, rows: list[_Row], dag: ProcessDag, settings: LoaderSettings, *, name: str,
         strategy: str, rep: int, edges_left: int) -> tuple[JobDraft, RebuildStats]:
    try:
        parents, stats = rebuild(rows, dag.parents, edges_left)
    except TooManyEdges as error:
        raise InvalidInput(file, f"run {strategy}/{rep}", "", f"the file rebuilds to {error}, "
                           f"beyond the limit of {MAX_EDGES:,} for one trace") from error
    tags = {"workflow": name, "strategy": strategy, "rep": str(rep), **stats.as_labels()}
    failed = sum(1 for row in rows if row.status not in (None, "COMPLETED"))
    if failed:
        tags["failed"] = str(failed)
    # one tuple per id: rows that repeat an id (refused later by the DAG rules) share it
    edges = {task_id: tuple(ups) for task_id, ups in parents.items()}
    children = children_of(edges)  # recorded now, build need not copy every task to add them
    tasks = [_task(row, edges[row.id], children[row.id], settings) for row in rows]
    records = [f"line {row.line} (task_id {row.id})" for row in rows]
    draft = JobDraft(file, f"{name}/{strategy}/{rep}", tasks, records, labels=labels(tags),
                     recorded_makespan_s=_makespan(rows))
    return draft, stats


def _task(row: _Row, parents: tuple[str, ...], children: tuple[str, ...],
          settings: LoaderSettings) -> Task:
    cores = row.cpus if row.cpus is not None else settings.default_cpu
    memory = round(row.memory) if row.memory is not None else settings.default_memory
    read_bytes = round(row.read_bytes) if row.read_bytes is not None else 0
    written_bytes = round(row.written_bytes) if row.written_bytes is not None else 0
    cpu = intensity.cpu_share(row.cpu_percent, cores)
    io = intensity.io_share(read_bytes + written_bytes, row.runtime_s, cpu)
    return Task(
        id=row.id, name=row.name, runtime_s=row.runtime_s,
        requests=Resources(cpu=cores, memory=memory), parents=parents, children=children,
        peak_memory=round(row.peak_rss) if row.peak_rss is not None else None,
        read_bytes=read_bytes, written_bytes=written_bytes,
        cpu_intensity=cpu, io_intensity=io, task_class=intensity.task_class(cpu, io),
        recorded=Recorded(node=row.node, submit_s=row.submit_s, start_s=row.start_s,
                          complete_s=row.complete_s))


def _makespan(rows: Sequence[_Row]) -> float | None:
    submits = [row.submit for row in rows if row.submit is not None]
    completes = [row.complete for row in rows if row.complete is not None]
    if not submits or not completes:
        return None
    return (max(completes) - min(submits)) / MS
