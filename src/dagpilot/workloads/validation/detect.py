"""What a file holds, from its name, its header or its top-level JSON/YAML keys.

Documentation (README, LICENSE, notes, manifests, JSON schemas) is recognised and skipped;
a data file nothing recognises is `UNKNOWN`, which the validator reports. Unreadable content
(a truncated gzip, bad JSON) raises InvalidInput.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import yaml

from dagpilot.core.errors import InvalidInput
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


def detect(path: Path) -> Detected:
    """The kind of a file; raises InvalidInput when its content cannot be read at all."""
    name = path.name.lower()
    if name.startswith("."):
        return Detected(Kind.DOCUMENTATION, "hidden file")
    if name.startswith(_DOC_PREFIXES) or name.endswith(_DOC_SUFFIXES):
        return Detected(Kind.DOCUMENTATION, "documentation")
    if name.endswith((".json", ".json.gz")):
        return _detect_json(path)
    if name.endswith((".csv", ".csv.gz")):
        return _detect_csv(path)
    if name.endswith((".yaml", ".yml")):
        return _detect_yaml(path)
    return Detected(Kind.UNKNOWN, "no reader for this kind of file (expected JSON, CSV or YAML)")


def _detect_json(path: Path) -> Detected:
    document = _load_json(path)
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
    try:
        documents = list(yaml.safe_load_all(path.read_text()))
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInput(str(path), "", "", f"cannot read: {error}") from error
    except yaml.YAMLError as error:
        raise InvalidInput(str(path), _yaml_line(error), "", f"not valid YAML: {error}") from error
    if any(isinstance(d, dict) and d.get("kind") in _ARGO_KINDS for d in documents):
        return Detected(Kind.ARGO)
    return Detected(Kind.UNKNOWN, "a YAML file with no Argo Workflow kind")


def _load_json(path: Path) -> Any:
    try:
        raw = path.read_bytes()
        if path.name.lower().endswith(".gz"):
            raw = gzip.decompress(raw)
        return json.loads(raw.decode("utf-8"))
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:
        raise InvalidInput(str(path), "", "", f"cannot read: {error}") from error
    except json.JSONDecodeError as error:
        raise InvalidInput(str(path), f"line {error.lineno} column {error.colno}", "",
                           f"not valid JSON: {error.msg}") from error


def _csv_header(path: Path) -> tuple[str, ...]:
    try:
        if path.name.lower().endswith(".gz"):
            with gzip.open(path, "rb") as stream:
                head = stream.readline(_HEADER_BYTES)
        else:
            with path.open("rb") as stream:
                head = stream.readline(_HEADER_BYTES)
        text = head.decode("utf-8-sig")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:
        raise InvalidInput(str(path), "line 1", "", f"cannot read the header: {error}") from error
    return tuple(column.strip().strip('"') for column in text.strip().split(","))


def _yaml_line(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    return f"line {mark.line + 1}" if mark is not None else ""
