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
Rows of failed attempts stay tasks like any other (the shared traces have none).

Task-level edges are not recorded; `workloads.cws_edges` rebuilds them (its docstring has the
full rule): a task depends on the tasks of each parent process (the process DAG, walked through
processes that did not run) whose tag equals its own or extends or prefixes it at a separator
(`WT_REP1` <- `WT_REP1_T1`); on every task of that process when the relation is not keyed by tag
(a one-task parent, an untagged or collecting child); and only where it was submitted at or after
that parent completed.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import logging
import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft
from dagpilot.core.types import Recorded, Resources, Task, labels
from dagpilot.workloads import intensity
from dagpilot.workloads.cws_edges import RebuildStats, TracedTask, rebuild

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


@dataclass(frozen=True)
class ProcessDag:
    """The process-level DAG of a pipeline: its processes and each one's parent processes."""

    file: str
    processes: frozenset[str]
    parents: dict[str, tuple[str, ...]]


def read(argument: str, settings: LoaderSettings) -> list[JobDraft]:
    """One draft per recorded run of every pipeline `argument` names (a CWS folder or a trace)."""
    drafts: list[JobDraft] = []
    for trace, dag in pipelines(Path(argument)):
        drafts.extend(read_pipeline(trace, dag, settings))
    return drafts


def pipelines(path: Path) -> list[tuple[Path, Path]]:
    """(trace, process DAG) of each pipeline a CWS folder or a single trace file names."""
    if path.is_file():
        return [(path, dag_of(path))]
    traces = path / "traces"
    if not traces.is_dir():
        raise InvalidInput(str(path), "", "", "no such trace file, nor a CWS folder with traces/ "
                           "and process_dags/")
    files = sorted(p for p in traces.iterdir() if p.is_file() and p.name.endswith(TRACE_SUFFIXES))
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
    if not dag.is_file():
        raise InvalidInput(str(dag), "", "", f"missing: the process DAG of {trace}")
    return dag


def read_pipeline(trace: Path, dag_file: Path, settings: LoaderSettings) -> list[JobDraft]:
    """One draft per (strategy, rep) run in one pipeline's trace, runs in that order."""
    dag = read_process_dag(dag_file)
    frame = read_trace(trace)
    _check_processes(frame, dag, str(trace))
    name = pipeline_name(trace)
    # One pass to Python rows; sorting keeps the file order of the tasks inside each run.
    ordered = frame.sort("strategy", "rep", LINE).select(ROW_COLUMNS)
    rows = [_Row(*values) for values in ordered.iter_rows()]
    drafts = []
    unrebuilt = 0
    for (strategy, rep), run in itertools.groupby(rows, key=lambda r: (r.strategy, int(r.rep))):
        draft, stats = _run(str(trace), list(run), dag, settings, name=name, strategy=strategy,
                            rep=rep)
        drafts.append(draft)
        unrebuilt += stats.unrebuilt
    log.log(logging.WARNING if unrebuilt else logging.INFO,
            "%s: %d runs, %d tasks; %d process-level dependencies not rebuilt at task level",
            name, len(drafts), frame.height, unrebuilt)
    return drafts


# --- reading the files ---------------------------------------------------------------------

def read_table(path: Path) -> pl.DataFrame:
    """A CSV (plain or gzipped), every column as text, plus the LINE column (header = line 1)."""
    file = str(path)
    try:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as error:
        raise InvalidInput(file, "", "", f"cannot read (truncated or corrupt gzip?): {error}") \
            from error
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


def to_numbers(frame: pl.DataFrame, columns: Sequence[str], file: str) -> pl.DataFrame:
    """The columns as Float64, `-` and empty as null; a value that is not a number is an error."""
    for column in columns:
        text = pl.col(column).str.strip_chars()
        present = text.is_not_null() & (text != "") & (text != MISSING)
        number = pl.when(present).then(text).cast(pl.Float64, strict=False)
        bad = frame.filter(present & number.is_null())
        if bad.height:
            raise InvalidInput(file, f"line {bad[LINE][0]}", column,
                               f"not a number: {bad[column][0]!r}")
        frame = frame.with_columns(number.alias(column))
    return frame


def read_trace(path: Path) -> pl.DataFrame:
    """A merged CWS trace: text columns checked, number columns converted, LINE added."""
    file = str(path)
    frame = read_table(path)
    require_columns(frame, TEXT_COLUMNS + REQUIRED_NUMBERS, file)
    if not any(column in frame.columns for column in RUNTIME_COLUMNS):
        raise InvalidInput(file, "header (line 1)", "realtime",
                           "missing column: neither realtime nor duration")
    for column in TEXT_COLUMNS:
        empty = frame.filter(pl.col(column).is_null())
        if empty.height:
            raise InvalidInput(file, f"line {empty[LINE][0]}", column, "empty")
    frame = frame.with_columns([pl.lit(None, pl.Utf8).alias(c)
                                for c in OPTIONAL_TEXT + OPTIONAL_NUMBERS
                                if c not in frame.columns])
    frame = to_numbers(frame, REQUIRED_NUMBERS + OPTIONAL_NUMBERS, file)
    fractional = frame.filter(pl.col("rep").is_not_null() & (pl.col("rep") % 1 != 0))
    missing = frame.filter(pl.col("rep").is_null())
    for bad in (fractional, missing):
        if bad.height:
            raise InvalidInput(file, f"line {bad[LINE][0]}", "rep",
                               "expected a whole repetition number")
    return frame


def read_process_dag(path: Path) -> ProcessDag:
    """`processes` and `process_edges` ([parent, child] pairs) of a process-DAG JSON file."""
    file = str(path)
    try:
        document = json.loads(path.read_bytes())
    except OSError as error:
        raise InvalidInput(file, "", "", f"cannot read: {error}") from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidInput(file, "", "", f"not valid JSON: {error}") from error
    processes = _string_list(document, "processes", file)
    edges = document.get("process_edges")
    if not isinstance(edges, list):
        raise InvalidInput(file, "top level", "process_edges", "missing or not a list")
    parents: dict[str, list[str]] = {}
    for index, edge in enumerate(edges):
        if not (isinstance(edge, list) and len(edge) == 2
                and all(isinstance(end, str) for end in edge)):
            raise InvalidInput(file, f"process_edges[{index}]", "process_edges",
                               f"expected [parent, child] process names, got {edge!r:.80}")
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
                           f"process {unknown['process'][0]!r} is not in {dag.file}")


# --- one run -> one draft ------------------------------------------------------------------

class _Row(NamedTuple):
    """The fields of one trace row that a task takes (numbers as read, None when missing)."""

    line: int
    strategy: str
    rep: float
    task_id: str
    process: str
    tag: str
    name: str
    hostname: str | None
    status: str | None
    submit: float | None
    start: float | None
    complete: float | None
    realtime: float | None
    duration: float | None
    cpus: float | None
    memory: float | None
    cpu_percent: float | None
    peak_rss: float | None
    read_bytes: float | None
    write_bytes: float | None
    rchar: float | None
    wchar: float | None


ROW_COLUMNS = (LINE, "strategy", "rep", "task_id", "process", "tag", "name", "hostname",
               "status", "submit", "start", "complete", "realtime", "duration", "cpus", "memory",
               "%cpu", "peak_rss", "read_bytes", "write_bytes", "rchar", "wchar")


def _run(file: str, rows: list[_Row], dag: ProcessDag, settings: LoaderSettings, *, name: str,
         strategy: str, rep: int) -> tuple[JobDraft, RebuildStats]:
    traced = [TracedTask(row.task_id, row.process, row.tag, _seconds(row.submit),
                         _seconds(row.complete)) for row in rows]
    parents, stats = rebuild(traced, dag.parents)
    tags = {"workflow": name, "strategy": strategy, "rep": str(rep), **stats.as_labels()}
    failed = sum(1 for row in rows if row.status not in (None, "COMPLETED"))
    if failed:
        tags["failed"] = str(failed)
    draft = JobDraft(file, f"{name}/{strategy}/{rep}", labels=labels(tags),
                     recorded_makespan_s=_makespan(rows))
    for row in rows:
        draft.add(_task(row, tuple(parents[row.task_id]), settings),
                  f"line {row.line} (task_id {row.task_id})")
    return draft, stats


def _task(row: _Row, parents: tuple[str, ...], settings: LoaderSettings) -> Task:
    cores = row.cpus if row.cpus is not None else settings.default_cpu
    memory = round(row.memory) if row.memory is not None else settings.default_memory
    runtime_ms = row.realtime if row.realtime is not None else row.duration
    runtime_s = runtime_ms / MS if runtime_ms is not None else math.nan
    read_bytes = _first_known(row.read_bytes, row.rchar)
    written_bytes = _first_known(row.write_bytes, row.wchar)
    cpu = intensity.cpu_share(row.cpu_percent, cores)
    io = intensity.io_share(read_bytes + written_bytes, runtime_s, cpu)
    return Task(
        id=row.task_id, name=row.name, runtime_s=runtime_s,
        requests=Resources(cpu=cores, memory=memory), parents=parents,
        peak_memory=round(row.peak_rss) if row.peak_rss is not None else None,
        read_bytes=read_bytes, written_bytes=written_bytes,
        cpu_intensity=cpu, io_intensity=io, task_class=intensity.task_class(cpu, io),
        recorded=Recorded(node=row.hostname if row.hostname not in (None, "", MISSING) else None,
                          submit_s=_seconds(row.submit), start_s=_seconds(row.start),
                          complete_s=_seconds(row.complete)))


def _first_known(*values: float | None) -> int:
    for value in values:
        if value is not None:
            return round(value)
    return 0


def _seconds(epoch_ms: float | None) -> float | None:
    return None if epoch_ms is None else epoch_ms / MS


def _makespan(rows: Sequence[_Row]) -> float | None:
    submits = [row.submit for row in rows if row.submit is not None]
    completes = [row.complete for row in rows if row.complete is not None]
    if not submits or not completes:
        return None
    return (max(completes) - min(submits)) / MS
