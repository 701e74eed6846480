"""What a file holds, from its name, its header or its top-level JSON/YAML keys.

Documentation (README, LICENSE, notes, manifests, JSON schemas) is recognised and skipped;
a data file nothing recognises is `UNKNOWN`, which the validator reports. Unreadable content
(a truncated gzip, bad JSON) raises InvalidInput. Files are read through `core.reading`
(bounded; the validator pins each file's bytes, so detection reads what the checks read).
"""

from __future__ import annotations

import gzip
import io
import zlib
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.files import read_head
from dagpilot.core.reading.gunzip import is_gzip
from dagpilot.core.reading.json_documents import read_json
from dagpilot.core.reading.yaml_documents import read_yaml_documents
from dagpilot.workloads.validation.continuity import time_column
from dagpilot.workloads.validation.inventory import is_node_header, is_pod_header


class Kind(Enum):
    DOCUMENTATION = "documentation"
    UNKNOWN = "unknown"
    WFFORMAT = "wfformat"
    CWS_TRACE = "cws"
    CWS_PROCESS_DAG = "cws process DAG"
    CWS_RUNS = "cws run summary"
    CLUSTER = "cluster"
    ALIBABA = "alibaba"
    TPCH = "tpch"
    ARGO = "argo"
    NODES = "node inventory"
    PODS = "pod list"
    METRICS_CSV = "metrics csv"
    PROMETHEUS = "prometheus"


@dataclass(frozen=True)
class Detected:
    kind: Kind
    reason: str = ""  # why a file is skipped or unknown
    document: Any = None  # the parsed JSON, so that checks need not read it again
    columns: tuple[str, ...] = ()  # a CSV header


_DOC_PREFIXES = ("readme", "license", "licence", "copying", "notice", "upstream_", "manifest",
                 "missing_from_snapshot", "changelog", "citation")
_DOC_SUFFIXES = (".md", ".txt", ".rst", ".html", ".pdf", ".bib", ".cff")
_ARGO_KINDS = {"Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"}
_CWS_TRACE_COLUMNS = {"process", "hostname", "submit", "start", "complete", "cpus"}
_HEADER_BYTES = 65_536
_HEAD_BYTES = 1 << 20  # raw bytes read for a CSV header: enough for a gzipped 64 KiB line


def detect(path: Path) -> Detected:
    """The kind of a file; raises InvalidInput when its content cannot be read at all."""
    by_name = detect_by_name(path.name)
    if by_name is not None:
        return by_name
    name = path.name.lower()
    if name.endswith((".json", ".json.gz")):
        return _detect_json(path)
    if name.endswith((".csv", ".csv.gz")):
        return _detect_csv(path)
    return _detect_yaml(path)


def detect_by_name(file_name: str) -> Detected | None:
    """The kind when the name alone tells it (hidden, documentation, no reader), else None:
    such files are never opened."""
    name = file_name.lower()
    if name.startswith("."):
        return Detected(Kind.DOCUMENTATION, "hidden file")
    if name.startswith(_DOC_PREFIXES) or name.endswith(_DOC_SUFFIXES):
        return Detected(Kind.DOCUMENTATION, "documentation")
    if name.endswith((".json", ".json.gz", ".csv", ".csv.gz", ".yaml", ".yml")):
        return None
    return Detected(Kind.UNKNOWN, "no reader for this kind of file (expected JSON, CSV or YAML)")


def _detect_json(path: Path) -> Detected:
    document = read_json(path)
    if not isinstance(document, dict):
        return Detected(Kind.UNKNOWN, "a JSON file whose top level is not an object")
    workflow = document.get("workflow")
    if "$schema" in document:
        return Detected(Kind.DOCUMENTATION, "JSON schema")
    if isinstance(workflow, dict) and ("specification" in workflow or "tasks" in workflow):
        return Detected(Kind.WFFORMAT, document=document)
    if isinstance(document.get("data"), dict) and "resultType" in document["data"]:
        return Detected(Kind.PROMETHEUS, document=document)
    if _is_tpch(document):
        return Detected(Kind.TPCH, document=document)
    workflows = document.get("workflows")
    if isinstance(workflows, list) and all(isinstance(w, dict) and "templates" in w
                                           for w in workflows):
        return Detected(Kind.ARGO, document=document)
    if "process_edges" in document:
        return Detected(Kind.CWS_PROCESS_DAG,
                        "process DAG of a CWS pipeline: checked with its trace in ../traces/")
    if "worker_nodes" in document:
        return Detected(Kind.CLUSTER, document=document)
    keys = ", ".join(sorted(map(str, document))[:6])
    return Detected(Kind.UNKNOWN, f"a JSON object with keys {keys} matches no known format")


def _is_tpch(document: dict[str, Any]) -> bool:
    """Decima's TPC-H file: {size: {query: {num_stages, edges, stages}}}."""
    return any(isinstance(queries, dict) and queries
               and all(isinstance(q, dict) and "stages" in q for q in queries.values())
               for key, queries in document.items() if not key.startswith("_"))


def _detect_csv(path: Path) -> Detected:
    columns = _csv_header(path)
    names = set(columns)
    if {"job_name", "task_name"} <= names:
        return Detected(Kind.ALIBABA, columns=columns)
    if names >= _CWS_TRACE_COLUMNS:
        return Detected(Kind.CWS_TRACE, columns=columns)
    if {"workflow", "strategy", "rep", "makespan_s"} <= names:
        return Detected(Kind.CWS_RUNS, "run summary of the CWS traces (derived from them)")
    if is_node_header(list(columns)):
        return Detected(Kind.NODES, columns=columns)
    if is_pod_header(list(columns)):
        return Detected(Kind.PODS, columns=columns)
    if time_column(list(columns)) is not None:
        return Detected(Kind.METRICS_CSV, columns=columns)
    shown = ", ".join(columns[:6]) + (" ..." if len(columns) > 6 else "")
    return Detected(Kind.UNKNOWN, f"a CSV with columns {shown} matches no known format")


def _detect_yaml(path: Path) -> Detected:
    documents = read_yaml_documents(path)
    if any(isinstance(d, dict) and isinstance(d.get("kind"), str) and d["kind"] in _ARGO_KINDS
           for d in documents):
        return Detected(Kind.ARGO)
    return Detected(Kind.UNKNOWN, "a YAML file with no Argo Workflow kind")


def _csv_header(path: Path) -> tuple[str, ...]:
    raw = read_head(path, _HEAD_BYTES)  # the OS's refusals are Unreadable, raised as they are
    try:
        if is_gzip(raw):
            with gzip.GzipFile(fileobj=io.BytesIO(raw), mode="rb") as stream:
                head = stream.readline(_HEADER_BYTES)
        else:
            head = raw[:_HEADER_BYTES].split(b"\n", 1)[0]
        text = head.decode("utf-8-sig")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:
        raise InvalidInput(str(path), "line 1", "", f"cannot read the header: {error}") from error
    return tuple(column.strip().strip('"') for column in text.strip().split(","))
