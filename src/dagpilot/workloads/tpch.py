"""Decima's Spark TPC-H profiles (JSON, optionally gzipped) -> one job per (input size, query).

The file maps `size -> query -> {num_stages, edges, stage_id_to_node_idx, stages}`. As in Decima's
loader, node `i` is `stages[i]` and the row/column `i` of its adjacency matrix, so `edges` are
`[parent node, child node]` pairs; `stage_id_to_node_idx` maps Spark's stage ids to nodes and
only names the tasks here (`stage-<spark id>`). Job ids are `tpch/<size>/<query>`.

Each stage is one task with `num_tasks` instances. Its waves map an executor count to the
durations (ms) of one measured run of the stage with that many executors; `first_wave` includes
the `fresh_durations` (JVM warm-up on a new executor), which we keep because every pod is a
fresh JVM. We use the run at the smallest executor count that recorded every instance (2 in the
real file): with few executors most tasks are warm, repeated tasks, the closest the data gets
to a runtime without contention (task durations grow about 3.9x from 2 to 100 executors).
`instance_runtimes_s` are that run's durations in recorded order, and `runtime_s` is their
mean, so nothing is random. Requests are the settings defaults (one Spark task per core).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dagpilot.core.config import LoaderSettings
from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft
from dagpilot.core.numbers import ascii_whole, finite
from dagpilot.core.types import Resources, Task, labels
from dagpilot.workloads import compressed

MS = 1e-3
WAVES = ("first_wave", "rest_wave")
MAX_DURATION_MS = 1e15  # far beyond any measurement; job_draft refuses runtimes over a year


def read(argument: str, settings: LoaderSettings) -> list[JobDraft]:
    """One draft per (size, query) of the Decima TPC-H file `argument`, sizes and queries in file
    order (keys starting with `_`, such as `_meta`, are not sizes)."""
    path = Path(argument)
    file = str(path)
    document = compressed.read_json(path)
    if not isinstance(document, dict):
        raise InvalidInput(file, "$", "", "expected an object mapping input sizes to queries")
    drafts = []
    for size, queries in document.items():
        if size.startswith("_"):
            continue
        if not isinstance(queries, dict):
            raise InvalidInput(file, f"$.{size}", "", "expected an object mapping queries to jobs")
        for query, job in queries.items():
            drafts.append(_job(file, size, query, job, settings))
    return drafts


def _job(file: str, size: str, query: str, job: Any, settings: LoaderSettings) -> JobDraft:
    where = f"$.{size}.{query}"
    if not isinstance(job, dict):
        raise InvalidInput(file, where, "", "expected an object")
    stages = _field(file, where, job, "stages", list)
    names = _stage_names(file, where, job, len(stages))
    parents = _parents(file, where, job, len(stages), names)
    draft = JobDraft(file, f"tpch/{size}/{query}",
                     labels=labels({"tpch.size": size, "tpch.query": query}))
    requests = Resources(settings.default_cpu, settings.default_memory)
    for index, stage in enumerate(stages):
        record = f"{where}.stages[{index}]"
        if not isinstance(stage, dict):
            raise InvalidInput(file, record, "", "expected an object")
        instances = _field(file, record, stage, "num_tasks", int)
        durations = _durations(file, record, stage, instances)
        draft.add(Task(id=names[index], name=names[index],
                       runtime_s=sum(durations) / len(durations) if durations else math.nan,
                       requests=requests, parents=parents[index], instances=instances,
                       instance_runtimes_s=durations), record)
    return draft


def _field(file: str, where: str, record: Mapping[str, Any], name: str, kind: type) -> Any:
    value = record.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InvalidInput(file, where, name, f"expected {kind.__name__}, got {shown(value)}")
    return value


def _stage_names(file: str, where: str, job: Mapping[str, Any], count: int) -> list[str]:
    """`stage-<spark stage id>` for each node, from the inverse of `stage_id_to_node_idx`."""
    mapping = _field(file, where, job, "stage_id_to_node_idx", dict)
    names: dict[int, str] = {}
    for stage_id, node in mapping.items():
        if (not isinstance(node, int) or isinstance(node, bool) or not 0 <= node < count
                or node in names):
            raise InvalidInput(file, where, "stage_id_to_node_idx",
                               f"stage {shown(stage_id)} maps to {shown(node)}: expected a "
                               f"distinct node index below {count}")
        names[node] = f"stage-{stage_id}"
    if len(names) != count:
        raise InvalidInput(file, where, "stage_id_to_node_idx",
                           f"maps {len(names)} stages, but there are {count}")
    num_stages = job.get("num_stages", count)
    if num_stages != count:
        raise InvalidInput(file, where, "num_stages",
                           f"{shown(num_stages)}, but {count} stages listed")
    return [names[node] for node in range(count)]


def _parents(file: str, where: str, job: Mapping[str, Any], count: int,
             names: list[str]) -> list[tuple[str, ...]]:
    edges = _field(file, where, job, "edges", list)
    parents: list[list[str]] = [[] for _ in range(count)]
    for index, edge in enumerate(edges):
        if (not isinstance(edge, list) or len(edge) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < count
                           for n in edge)):
            raise InvalidInput(file, f"{where}.edges[{index}]", "edges",
                               f"expected [parent, child] node indices below {count}, "
                               f"got {shown(edge)}")
        parent, child = edge
        parents[child].append(names[parent])
    return [tuple(p) for p in parents]


def _durations(file: str, record: str, stage: Mapping[str, Any],
               instances: int) -> tuple[float, ...]:
    """Seconds per instance from the smallest executor count whose run recorded them all."""
    waves = {wave: _field(file, record, stage, wave, dict) for wave in WAVES}
    counts: dict[str, int] = {}
    for wave, runs in waves.items():
        for count, durations in runs.items():
            executors = ascii_whole(count)
            if executors is None or not isinstance(durations, list):
                raise InvalidInput(file, f"{record}.{wave}", wave, f"expected executor count -> "
                                   f"list of durations, got {shown(count)}: {shown(durations)}")
            counts[count] = executors
    for count in sorted(counts, key=counts.__getitem__):
        run = [_seconds(file, f"{record}.{wave}.{count}[{index}]", wave, duration)
               for wave in WAVES for index, duration in enumerate(waves[wave].get(count, []))]
        if len(run) == instances:
            return tuple(run)
    raise InvalidInput(file, record, "first_wave",
                       f"no executor count records all {instances} task durations")


def _seconds(file: str, record: str, wave: str, milliseconds: Any) -> float:
    """A finite duration (negative ones are left to the DAG rules to report)."""
    return finite(milliseconds, file, record, wave, low=-MAX_DURATION_MS,
                  high=MAX_DURATION_MS) * MS
