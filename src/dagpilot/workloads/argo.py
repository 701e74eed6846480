"""Argo Workflows manifests -> jobs (argument: a YAML file, a folder, or the examples digest).

- A `.yaml` / `.yml` file may hold several documents; a folder is read with every `.yaml` /
  `.yml` file under it, in path order. Workflows and CronWorkflows are jobs; WorkflowTemplates and
  ClusterWorkflowTemplates are jobs too when they name an entrypoint, and are where `templateRef`
  and `spec.workflowTemplateRef` look (among the files read together). Job ids are
  `<file stem>/<metadata.name or generateName>` (the path below the folder when reading one).
- A `.json` file is the digest of the Argo examples: see argo_digest.
- History: expected runtimes may sit beside a manifest `NAME.yaml` in `NAME.history.json`, a
  JSON object from template name to seconds or a duration string:
  `{"train": 5400, "preprocess": "90s"}`. A template's `dagpilot.io/expected-duration`
  annotation wins over the history; `settings.default_runtime_s` is the last resort.
- How a workflow becomes a DAG is in argo_expand, and what its pods ask for in argo_pod.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import yaml

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft
from dagpilot.core.units import duration_s
from dagpilot.workloads.argo_digest import read_digest
from dagpilot.workloads.argo_expand import expand
from dagpilot.workloads.argo_manifest import (
    Library,
    Manifest,
    Where,
    read_manifest,
    with_workflow_template,
)

log = logging.getLogger(__name__)

YAML_SUFFIXES = (".yaml", ".yml")
HISTORY_SUFFIX = ".history.json"


def read(argument: str, settings: LoaderSettings) -> list[JobDraft]:
    path = Path(argument)
    if path.is_file() and path.suffix == ".json":
        return read_digest(path, settings)
    files = _manifest_files(path)
    manifests = [m for file in files for m in read_manifests(file)]
    library = Library(manifests)
    histories = {str(file): read_history(file) for file in files}
    drafts: list[JobDraft] = []
    used: set[str] = set()
    for manifest in manifests:
        workflow = with_workflow_template(manifest, library)
        if not workflow.is_job:
            continue
        job_id = _job_id(manifest, path, used)
        drafts.append(expand(workflow, job_id, library, histories[manifest.where.file], settings))
    return drafts


def read_manifests(path: Path) -> list[Manifest]:
    """The Argo manifests of a YAML file, in document order."""
    file = str(path)
    try:
        content = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInput(file, "", "", f"cannot read: {error}") from error
    manifests = []
    for index, document in _documents(file, content):
        manifest = read_manifest(document, Where(file, f"document {index}"))
        if manifest is not None:
            manifests.append(manifest)
    return manifests


def _documents(file: str, content: str) -> Iterator[tuple[int, object]]:
    """(1-based index, document) of a YAML stream; a syntax error names its line."""
    try:
        yield from enumerate(yaml.safe_load_all(content), start=1)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        record = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        context = getattr(error, "context", None)
        context_mark = getattr(error, "context_mark", None)
        if context and context_mark is not None:
            problem = f"{problem} ({context} at line {context_mark.line + 1})"
        raise InvalidInput(file, record, "", f"not valid YAML: {problem}") from error


def read_history(manifest: Path) -> dict[str, float]:
    """Expected seconds by template name from `<manifest stem>.history.json`, if there is one."""
    path = manifest.with_name(manifest.stem + HISTORY_SUFFIX)
    if not path.is_file():
        return {}
    file = str(path)
    try:
        raw = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInput(file, "", "", f"cannot read: {error}") from error
    except json.JSONDecodeError as error:
        raise InvalidInput(file, f"line {error.lineno} column {error.colno}", "",
                           f"not valid JSON: {error.msg}") from error
    if not isinstance(raw, dict):
        raise InvalidInput(file, "$", "", "expected an object from template name to seconds")
    history: dict[str, float] = {}
    for name, value in raw.items():
        try:
            if isinstance(value, bool):
                raise ValueError(f"not a duration: {value!r}")
            history[name] = duration_s(value)
        except ValueError as error:
            raise InvalidInput(file, f"$.{name}", name, str(error)) from error
    log.debug("%s: %d expected runtimes", file, len(history))
    return history


def _manifest_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in YAML_SUFFIXES)
        if not files:
            raise InvalidInput(str(path), "", "", "folder holds no .yaml or .yml file")
        return files
    if not path.is_file():
        raise InvalidInput(str(path), "", "", "no such file or folder")
    return [path]


def _job_id(manifest: Manifest, argument: Path, used: set[str]) -> str:
    file = Path(manifest.where.file)
    base = file.relative_to(argument).with_suffix("").as_posix() if argument.is_dir() \
        else file.stem
    job_id = f"{base}/{manifest.name}"
    if job_id in used:
        job_id = f"{job_id}-doc{manifest.where.document.removeprefix('document ')}"
    used.add(job_id)
    return job_id
