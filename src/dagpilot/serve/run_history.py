"""Expected template durations from the run history of finished Workflows.

The history is a JSON file of the seconds recent runs of each template took, most recent last:

    {"version": 1, "templates": {"preprocess": [88, 93.5], "etl/preprocess": [90]}}

A key `FAMILY/TEMPLATE` is one kind of workflow's template (FAMILY: the Workflow's
workflowTemplateRef name, else its generateName without the trailing '-', else its name) and
wins over the bare `TEMPLATE`. The expected duration is the median of the last RECENT runs.
`record` adds a finished Workflow's Succeeded pods (finishedAt - startedAt, by templateName)
under both keys; `write_history` replaces the file atomically, and the webhook reads it again
when it changes.
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
from dagpilot.core.reading.json_documents import parse_json
from dagpilot.live.raw import api_time_s

VERSION = 1
RECENT = 20  # runs a median is taken over, and kept per key
MAX_HISTORY_BYTES = 16 << 20
MAX_DURATION_S = 366 * 86_400.0


@dataclass(frozen=True, slots=True)
class RunHistory:
    templates: Mapping[str, tuple[float, ...]]

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
    return RunHistory(templates)


def _seconds(value: object, file: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value) or not 0 <= value <= MAX_DURATION_S:
        raise InvalidInput(file, f"templates.{key}", key,
                           f"expected seconds between 0 and {MAX_DURATION_S:g}, got {shown(value)}")
    return float(value)


def record(history: RunHistory, workflow: Mapping[str, Any]) -> RunHistory:
    """`history` with the finished pods of `workflow` added (the last RECENT kept per key)."""
    family = family_of(workflow)
    templates = {key: list(runs) for key, runs in history.templates.items()}
    for template, seconds in finished_pods(workflow):
        for key in (f"{family}/{template}" if family else None, template):
            if key is not None:
                templates.setdefault(key, []).append(seconds)
    return RunHistory({key: tuple(runs[-RECENT:]) for key, runs in templates.items()})


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
                "templates": {key: list(runs) for key, runs in sorted(history.templates.items())}}
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(document, out, indent=1)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
