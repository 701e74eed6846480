"""Expected template durations from the run history of finished Workflows.

The history is a JSON file of the seconds recent runs of each template took, most recent last:

    {"version": 1, "templates": {"preprocess": [88, 93.5], "etl/preprocess": [90]},
     "workflows": ["<uid>", ...]}

A key `FAMILY/TEMPLATE` is one kind of workflow's template (FAMILY: the Workflow's
workflowTemplateRef name, else its generateName without the trailing '-', else its name) and
wins over the bare `TEMPLATE`. The expected duration is the median of the last RECENT runs.
`record` adds a finished Workflow's Succeeded pods (finishedAt - startedAt, by templateName)
under both keys, once per Workflow (`workflows`: the uids recorded, the last MAX_WORKFLOWS);
`record_file` does it for `kubectl get workflows -o json` (`dagpilot serve record`), and
`write_history` replaces the file atomically; the webhook reads it again when it changes.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.files import read_file
from dagpilot.core.reading.folders import path_kind
from dagpilot.core.reading.json_documents import parse_json, read_json
from dagpilot.live.raw import api_time_s

VERSION = 1
RECENT = 20  # runs a median is taken over, and kept per key
MAX_HISTORY_BYTES = 16 << 20
MAX_DURATION_S = 366 * 86_400.0
MAX_WORKFLOWS = 10_000  # uids kept, so a Workflow listed again is not counted twice
MAX_WORKFLOWS_BYTES = 256 << 20


@dataclass(frozen=True, slots=True)
class RunHistory:
    templates: Mapping[str, tuple[float, ...]]
    workflows: tuple[str, ...] = ()  # the uids recorded, oldest first

    def expected_s(self, family: str, template: str) -> float | None:
        runs = self.templates.get(f"{family}/{template}") or self.templates.get(template)
        return statistics.median(runs[-RECENT:]) if runs else None


EMPTY = RunHistory({})


def family_of(workflow: Mapping[str, Any]) -> str:
    metadata = workflow.get("metadata")
    spec = workflow.get("spec")
    reference = spec.get("workflowTemplateRef") if isinstance(spec, Mapping) else None
    if isinstance(reference, Mapping) and isinstance(reference.get("name"), str):
        return str(reference["name"])
    if not isinstance(metadata, Mapping):
        return ""
    generated = metadata.get("generateName")
    if isinstance(generated, str) and generated.rstrip("-"):
        return generated.rstrip("-")
    name = metadata.get("name")
    return name if isinstance(name, str) else ""


def parse_history(data: bytes, file: str) -> RunHistory:
    document = parse_json(data, file)
    if not isinstance(document, dict) or document.get("version") != VERSION:
        raise InvalidInput(file, "$", "version", f"expected an object with \"version\": {VERSION}")
    raw = document.get("templates")
    if not isinstance(raw, dict):
        raise InvalidInput(file, "$", "templates", "expected an object from template to seconds")
    templates: dict[str, tuple[float, ...]] = {}
    for key, value in raw.items():
        runs = value if isinstance(value, list) else [value]
        templates[key] = tuple(_seconds(run, file, key) for run in runs)
    uids = document.get("workflows", [])
    if not isinstance(uids, list) or not all(isinstance(uid, str) for uid in uids):
        raise InvalidInput(file, "$", "workflows", "expected a list of Workflow uids")
    return RunHistory(templates, tuple(uids))


def _seconds(value: object, file: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value) or not 0 <= value <= MAX_DURATION_S:
        raise InvalidInput(file, f"templates.{key}", key,
                           f"expected seconds between 0 and {MAX_DURATION_S:g}, got {shown(value)}")
    return float(value)


def record(history: RunHistory, workflow: Mapping[str, Any]) -> RunHistory:
    """`history` with the finished pods of `workflow` added (the last RECENT kept per key);
    unchanged for a Workflow recorded before."""
    metadata = workflow.get("metadata")
    uid = metadata.get("uid") if isinstance(metadata, Mapping) else None
    if isinstance(uid, str) and uid in history.workflows:
        return history
    family = family_of(workflow)
    templates = {key: list(runs) for key, runs in history.templates.items()}
    for template, seconds in finished_pods(workflow):
        for key in (f"{family}/{template}" if family else None, template):
            if key is not None:
                templates.setdefault(key, []).append(seconds)
    uids = (*history.workflows, uid) if isinstance(uid, str) and uid else history.workflows
    return RunHistory({key: tuple(runs[-RECENT:]) for key, runs in templates.items()},
                      uids[-MAX_WORKFLOWS:])


def record_file(history_path: Path, workflows_path: Path) -> tuple[RunHistory, int]:
    """The history at `history_path` (empty when there is none) with the Succeeded Workflows
    of `workflows_path` (one Workflow, or a List as `kubectl get workflows -o json` prints)
    recorded, written back; and how many Workflows were new."""
    document = read_json(workflows_path, MAX_WORKFLOWS_BYTES)
    file = str(workflows_path)
    if not isinstance(document, dict):
        raise InvalidInput(file, "$", "", "expected a Workflow or a List of them")
    items = document.get("items") if document.get("kind") != "Workflow" else [document]
    if not isinstance(items, list):
        raise InvalidInput(file, "$", "items", "expected a Workflow or a List of them")
    history = (parse_history(read_file(history_path, MAX_HISTORY_BYTES), str(history_path))
               if path_kind(history_path) != "missing" else EMPTY)
    new = 0
    for item in items:
        status = item.get("status") if isinstance(item, Mapping) else None
        if isinstance(status, Mapping) and status.get("phase") == "Succeeded":
            recorded = record(history, item)
            new += recorded is not history
            history = recorded
    write_history(history_path, history)
    return history, new


def finished_pods(workflow: Mapping[str, Any]) -> list[tuple[str, float]]:
    """(templateName, seconds) of each Succeeded pod node of a Workflow's status."""
    status = workflow.get("status")
    nodes = status.get("nodes") if isinstance(status, Mapping) else None
    if not isinstance(nodes, Mapping):
        return []
    found = []
    for node in nodes.values():
        if not isinstance(node, Mapping) or node.get("type") != "Pod" \
                or node.get("phase") != "Succeeded":
            continue
        template = node.get("templateName")
        started, finished = api_time_s(node.get("startedAt")), api_time_s(node.get("finishedAt"))
        if isinstance(template, str) and template and started > 0 and finished >= started:
            found.append((template, finished - started))
    return sorted(found)


def write_history(path: Path, history: RunHistory) -> None:
    document = {"version": VERSION,
                "templates": {key: list(runs) for key, runs in sorted(history.templates.items())},
                "workflows": list(history.workflows)}
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(document, out, indent=1)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
