"""WfCommons WfFormat instances (schema 1.5, and the flat layout of 1.4 and 1.3) -> one job each.

The argument is a `.json` or `.json.gz` file, or a folder searched recursively (paths in sorted
order) in which JSON documents without `schemaVersion` (the schema itself, other data) are skipped.
The job id is the file name without `.json`/`.json.gz`; labels: `workflow` (the instance name),
`file` (the path below the folder, or the file name), `runtime_system`.

Schema 1.5: `workflow.specification.tasks[]` (id, name, parents, children, inputFiles,
outputFiles) and `.files[]` (id, sizeInBytes); `workflow.execution` (makespanInSeconds, tasks[]
with id, runtimeInSeconds, coreCount, avgCPU, memoryInBytes, readBytes, writtenBytes, machines).
Schema 1.4 (and 1.3): a flat `workflow.tasks[]` with name, id, parents and children (by name or
id, possibly declared on one end only), files[] (name, link input|output, sizeInBytes; 1.3:
size), runtimeInSeconds (1.3: runtime), cores, avgCPU, readBytes, writtenBytes, memoryInBytes
(1.3: memory in KB), machine; `workflow.makespanInSeconds` (1.3: makespan).

Field -> task:
- runtime_s = runtimeInSeconds; a task the execution does not list gets NaN, so the DAG rules
  reject it; an instance with no execution at all gets `settings.default_runtime_s` everywhere
  (label `runtimes=default`).
- requests.cpu = coreCount (else `settings.default_cpu`); requests.memory = memoryInBytes, the
  recorded resident set (else `settings.default_memory`), also kept as peak_memory.
- read/written bytes = readBytes/writtenBytes, else the sizes of the input/output files.
- cpu_intensity, io_intensity and task_class follow `workloads.intensity`.
- recorded.node = the first machine the execution names; recorded_makespan_s = makespanInSeconds.
  Pegasus' per-task `priority` (a Condor ordering hint) is not carried over.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from dagpilot.core.config import LoaderSettings
from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft
from dagpilot.core.numbers import MAX_BYTES, MAX_CORES, problem
from dagpilot.core.reading.folders import files_in, path_kind
from dagpilot.core.types import Recorded, Resources, Task, labels
from dagpilot.workloads import compressed, intensity
from dagpilot.workloads.gc_pause import collector_paused

log = logging.getLogger(__name__)

SUFFIXES = (".json.gz", ".json")
FLAT_LAYOUT_VERSIONS = ("1.3", "1.4")
OLD_VERSIONS = ("1.0", "1.1", "1.2")  # `workflow.jobs`: migrate them with WfFormat's tool first
KB = 1000  # WfFormat 1.3 memory unit, as the upstream migration tool reads it
# Beyond this a time (s) or other figure is no measurement (job_draft refuses runtimes over a
# year long before); the bound keeps every later sum finite.
MAX_RUNTIME_FIGURE = 1e15


class Measured(NamedTuple):  # a tuple, not a dataclass: made once per task, cheaper
    """What an execution recorded about one task, in the units of `core.types`."""

    runtime_s: float = math.nan
    cores: float | None = None
    avg_cpu_percent: float | None = None
    memory: int | None = None
    read_bytes: float | None = None
    written_bytes: float | None = None
    machine: str | None = None


class Declared(NamedTuple):
    """What a specification says about one task: identity, dependencies and file volumes."""

    id: str
    name: str
    record: str
    parents: tuple[str, ...]
    children: tuple[str, ...]
    input_bytes: float
    output_bytes: float


def read(argument: str, settings: LoaderSettings) -> list[JobDraft]:
    """One draft per WfFormat instance in `argument` (a file or a folder)."""
    path = Path(argument)
    with collector_paused():
        kind = path_kind(path)
        if kind == "file":
            return [read_file(path, settings, path.name)]
        if kind == "missing":
            raise InvalidInput(argument, "", "", "no such file or folder")
        drafts = _read_folder(path, settings)
    if not drafts:
        raise InvalidInput(argument, "", "", "folder holds no WfFormat instance "
                           "(*.json, *.json.gz)")
    return drafts


def _read_folder(path: Path, settings: LoaderSettings) -> list[JobDraft]:
    drafts: list[JobDraft] = []
    for file in _instance_files(path):
        document = compressed.read_json(file)
        if isinstance(document, dict) and "schemaVersion" not in document:
            log.debug("%s: no schemaVersion, not a WfFormat instance; skipped", file)
            continue
        relative = file.relative_to(path).as_posix()
        draft = _draft(file, document, settings, relative)
        if any(d.job_id == draft.job_id for d in drafts):  # same name in another subfolder
            draft.job_id = _job_id(Path(relative))
        drafts.append(draft)
    return drafts


def read_file(path: Path, settings: LoaderSettings, shown_as: str | None = None) -> JobDraft:
    """The draft of one instance file; `shown_as` is its `file` label (default: its name)."""
    return _draft(path, compressed.read_json(path), settings, shown_as or path.name)


def _instance_files(folder: Path) -> Iterator[Path]:
    yield from files_in(folder, lambda name: name.endswith(SUFFIXES), recursive=True)


def _job_id(path: Path) -> str:
    """The path without `.json`/`.json.gz`, as POSIX text (usually just the file name)."""
    text = path.as_posix()
    for suffix in SUFFIXES:
        if text.endswith(suffix):
            return text[: -len(suffix)]
    return text


def _draft(path: Path, document: Any, settings: LoaderSettings, shown_as: str) -> JobDraft:
    file = str(path)
    version = str(_require(document, "schemaVersion", file, "top level"))
    if version in OLD_VERSIONS:
        raise InvalidInput(file, "top level", "schemaVersion", f"schema {version} is not read; "
                           "migrate it with WfFormat's wfcommons-migrate-instance.py")
    workflow = _require(document, "workflow", file, "top level")
    if version in FLAT_LAYOUT_VERSIONS:
        pairs, makespan = _flat_layout(file, workflow)
    else:
        pairs, makespan = _split_layout(file, workflow)
    system = document.get("runtimeSystem") or document.get("wms") or {}
    tags = {"workflow": str(document.get("name", "")), "file": shown_as,
            "runtime_system": str(system.get("name", "")) if isinstance(system, dict) else ""}
    if all(math.isnan(measured.runtime_s) for _, measured in pairs):
        log.warning("%s: no execution recorded; every task takes the default runtime", file)
        tags["runtimes"] = "default"
        pairs = [(d, Measured(runtime_s=settings.default_runtime_s)) for d, _ in pairs]
    draft = JobDraft(file, _job_id(Path(path.name)), labels=labels(tags),
                     recorded_makespan_s=makespan)
    for declared, measured in pairs:
        draft.add(_task(declared, measured, settings), declared.record)
    return draft


def _task(declared: Declared, measured: Measured, settings: LoaderSettings) -> Task:
    cores = measured.cores if measured.cores is not None else settings.default_cpu
    memory = measured.memory if measured.memory is not None else settings.default_memory
    read_bytes = int(measured.read_bytes if measured.read_bytes is not None
                     else declared.input_bytes)
    written_bytes = int(measured.written_bytes if measured.written_bytes is not None
                        else declared.output_bytes)
    cpu = intensity.cpu_share(measured.avg_cpu_percent, cores)
    io = intensity.io_share(read_bytes + written_bytes, measured.runtime_s, cpu)
    return Task(
        id=declared.id, name=declared.name, runtime_s=measured.runtime_s,
        requests=Resources(cpu=cores, memory=memory),
        parents=declared.parents, children=declared.children,
        peak_memory=measured.memory, read_bytes=read_bytes, written_bytes=written_bytes,
        cpu_intensity=cpu, io_intensity=io, task_class=intensity.task_class(cpu, io),
        recorded=Recorded(node=measured.machine) if measured.machine else None)


# --- schema 1.5: specification + execution -------------------------------------------------

def _split_layout(file: str, workflow: Any) -> tuple[list[tuple[Declared, Measured]], float | None]:
    specification = _require(workflow, "specification", file, "workflow")
    sizes = _file_sizes(file, specification)
    declared = [_declared_15(file, raw, index, sizes)
                for index, raw in enumerate(_objects(specification, "tasks", file,
                                                     "workflow.specification"))]
    execution = workflow.get("execution")
    if execution is None:
        return [(d, Measured()) for d in declared], None
    measured = _executed_15(file, execution, {d.id for d in declared})
    makespan = _number(execution, "makespanInSeconds", file, "workflow.execution")
    return [(d, measured.get(d.id, Measured())) for d in declared], makespan


def _file_sizes(file: str, specification: Any) -> dict[str, float]:
    sizes: dict[str, float] = {}
    for index, raw in enumerate(_objects(specification, "files", file, "workflow.specification",
                                         required=False)):
        file_id = _text(raw, "id", file, f"files[{index}]")
        size = raw.get("sizeInBytes")
        if size.__class__ is not float or not 0.0 <= size <= MAX_BYTES:  # the common case first
            size = _bytes(raw, "sizeInBytes", file, f'files[{index}] (id "{file_id}")')
        sizes[file_id] = size if size is not None else 0.0
    return sizes


def _declared_15(file: str, raw: Any, index: int, sizes: dict[str, float]) -> Declared:
    task_id = _text(raw, "id", file, f"tasks[{index}]")
    record = f'tasks[{index}] (id "{task_id}")'
    return Declared(task_id, _optional_text(raw, "name", file, record) or task_id, record,
                    tuple(_strings(raw, "parents", file, record)),
                    tuple(_strings(raw, "children", file, record)),
                    _volume(raw, "inputFiles", sizes, file, record),
                    _volume(raw, "outputFiles", sizes, file, record))


def _volume(raw: dict[str, Any], key: str, sizes: dict[str, float], file: str,
            record: str) -> float:
    total = 0.0
    for file_id in _strings(raw, key, file, record):
        size = sizes.get(file_id)
        if size is None:
            raise InvalidInput(file, record, key, f"file {shown(file_id)} is not in "
                               "workflow.specification.files")
        total += size
    if total > MAX_BYTES:
        raise InvalidInput(file, record, key, f"the files add up to {total:g} bytes, beyond the "
                           f"limit {MAX_BYTES:g}")
    return total


def _executed_15(file: str, execution: Any, known: set[str]) -> dict[str, Measured]:
    measured: dict[str, Measured] = {}
    for index, raw in enumerate(_objects(execution, "tasks", file, "workflow.execution")):
        task_id = _text(raw, "id", file, f"execution.tasks[{index}]")
        record = f'execution.tasks[{index}] (id "{task_id}")'
        if task_id not in known:
            raise InvalidInput(file, record, "id", "no task of workflow.specification has this id")
        if task_id in measured:
            raise InvalidInput(file, record, "id", "the execution lists this task twice")
        runtime = _number(raw, "runtimeInSeconds", file, record)
        machines = _strings(raw, "machines", file, record)
        measured[task_id] = Measured(
            runtime_s=math.nan if runtime is None else runtime,
            cores=_number(raw, "coreCount", file, record, MAX_CORES),
            avg_cpu_percent=_cpu_percent(raw, "avgCPU", file, record),
            memory=_whole(_number(raw, "memoryInBytes", file, record, MAX_BYTES)),
            read_bytes=_bytes(raw, "readBytes", file, record),
            written_bytes=_bytes(raw, "writtenBytes", file, record),
            machine=machines[0] if machines else None)
    return measured


# --- schema 1.4 and 1.3: one flat task list -------------------------------------------------

def _flat_layout(file: str, workflow: Any) -> tuple[list[tuple[Declared, Measured]], float | None]:
    raws = _objects(workflow, "tasks", file, "workflow")
    ids = [_flat_id(file, raw, index) for index, raw in enumerate(raws)]
    # Up to 1.4 tasks name each other by name (sometimes by id), on one end or on both.
    reference: dict[str, str] = {}
    for raw, task_id in zip(raws, ids, strict=True):
        name = raw.get("name")
        reference.setdefault(name if isinstance(name, str) else task_id, task_id)
        reference.setdefault(task_id, task_id)
    parents: dict[str, list[str]] = {task_id: [] for task_id in ids}
    for index, (raw, task_id) in enumerate(zip(raws, ids, strict=True)):
        record = f'tasks[{index}] (id "{task_id}")'
        for name in _strings(raw, "parents", file, record):
            parents[task_id].append(reference.get(name, name))  # unknown names stay, for the rules
        for name in _strings(raw, "children", file, record):
            child = reference.get(name)
            if child is None:
                raise InvalidInput(file, record, "children", f"no task is named {shown(name)}")
            parents[child].append(task_id)
    pairs = [_flat_task(file, raw, index, task_id, tuple(dict.fromkeys(parents[task_id])))
             for index, (raw, task_id) in enumerate(zip(raws, ids, strict=True))]
    makespan = _number(workflow, "makespanInSeconds", file, "workflow")
    if makespan is None:
        makespan = _number(workflow, "makespan", file, "workflow")
    return pairs, makespan


def _flat_id(file: str, raw: Any, index: int) -> str:
    task_id = _optional_text(raw, "id", file, f"tasks[{index}]")
    return task_id or _text(raw, "name", file, f"tasks[{index}]")


def _flat_task(file: str, raw: Any, index: int, task_id: str,
               parents: tuple[str, ...]) -> tuple[Declared, Measured]:
    record = f'tasks[{index}] (id "{task_id}")'
    volumes = {"input": 0.0, "output": 0.0}
    for position, entry in enumerate(_objects(raw, "files", file, record, required=False)):
        where = f"{record} files[{position}]"
        size = _bytes(entry, "sizeInBytes", file, where)
        if size is None:
            size = _bytes(entry, "size", file, where)
        link = entry.get("link")
        direction = "input" if isinstance(link, str) and link.lower() == "input" else "output"
        volumes[direction] += size or 0.0
    for direction, total in volumes.items():
        if total > MAX_BYTES:
            raise InvalidInput(file, record, "files", f"the {direction} files add up to "
                               f"{total:g} bytes, beyond the limit {MAX_BYTES:g}")
    declared = Declared(task_id, _optional_text(raw, "name", file, record) or task_id, record,
                        parents, (), volumes["input"], volumes["output"])
    runtime = _number(raw, "runtimeInSeconds", file, record)
    if runtime is None:
        runtime = _number(raw, "runtime", file, record)
    memory = _number(raw, "memoryInBytes", file, record, MAX_BYTES)
    if memory is None and (kilobytes := _number(raw, "memory", file, record,
                                                MAX_BYTES / KB)) is not None:
        memory = kilobytes * KB
    machine = raw.get("machine")
    measured = Measured(
        runtime_s=math.nan if runtime is None else runtime,
        cores=_number(raw, "cores", file, record, MAX_CORES),
        avg_cpu_percent=_cpu_percent(raw, "avgCPU", file, record),
        memory=_whole(memory),
        read_bytes=_bytes(raw, "readBytes", file, record),
        written_bytes=_bytes(raw, "writtenBytes", file, record),
        machine=machine if isinstance(machine, str) and machine else None)
    return declared, measured


# --- typed access, every failure located by file, record and field ---------------------------

def _require(mapping: Any, key: str, file: str, record: str) -> Any:
    if not isinstance(mapping, dict):
        raise InvalidInput(file, record, key, f"expected an object, got {type(mapping).__name__}")
    if key not in mapping:
        raise InvalidInput(file, record, key, "missing")
    return mapping[key]


def _objects(mapping: Any, key: str, file: str, record: str,
             required: bool = True) -> list[dict[str, Any]]:
    value = _require(mapping, key, file, record) if required else (
        mapping.get(key, []) if isinstance(mapping, dict) else [])
    if not isinstance(value, list):
        raise InvalidInput(file, record, key, f"expected a list, got {type(value).__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise InvalidInput(file, f"{record} {key}[{index}]", "",
                               f"expected an object, got {type(item).__name__}")
    return value


def _text(mapping: dict[str, Any], key: str, file: str, record: str) -> str:
    value = mapping.get(key)
    if value.__class__ is str and value:  # the common case first
        return value
    value = _require(mapping, key, file, record)
    if not isinstance(value, str) or not value:
        raise InvalidInput(file, record, key, f"expected a non-empty string, got {shown(value)}")
    return value


def _optional_text(mapping: dict[str, Any], key: str, file: str, record: str) -> str | None:
    return _text(mapping, key, file, record) if mapping.get(key) is not None else None


def _strings(mapping: dict[str, Any], key: str, file: str, record: str) -> list[str]:
    value = mapping.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not set(map(type, value)) <= {str}:  # fast on long lists
        raise InvalidInput(file, record, key, f"expected a list of strings, got {shown(value)}")
    return value


def _number(mapping: dict[str, Any], key: str, file: str, record: str,
            limit: float = MAX_RUNTIME_FIGURE) -> float | None:
    """A finite number of magnitude at most `limit`, or None when absent. Signs and physical
    sense are the DAG rules' (job_draft) to report; NaN, infinities and 1e400 (which JSON
    reads as infinity) are refused here."""
    value = mapping.get(key)
    if value is None or (value.__class__ is float and -limit <= value <= limit):  # common cases
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(file, record, key, f"expected a number, got {shown(value)}")
    reason = problem(value, -limit, limit)
    if reason is not None:
        raise InvalidInput(file, record, key, reason)
    return float(value)


def _bytes(mapping: dict[str, Any], key: str, file: str, record: str) -> float | None:
    """A byte count: a finite number from 0 to MAX_BYTES, or None when absent."""
    value = _number(mapping, key, file, record, MAX_BYTES)
    if value is not None and value < 0:
        raise InvalidInput(file, record, key, f"a byte count cannot be negative, got {value:g}")
    return value


def _cpu_percent(mapping: dict[str, Any], key: str, file: str, record: str) -> float | None:
    """avgCPU: a finite share of one core in percent, not negative (above 100 x the cores is
    common: tasks use more cores than they asked for; workloads.intensity clamps it)."""
    value = _number(mapping, key, file, record, MAX_CORES * 100)
    if value is not None and value < 0:
        raise InvalidInput(file, record, key, f"a CPU utilisation cannot be negative, got "
                           f"{value:g}")
    return value


def _whole(value: float | None) -> int | None:
    return None if value is None else round(value)
