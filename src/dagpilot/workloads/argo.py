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

import logging
from pathlib import Path

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft
from dagpilot.core.reading.folders import files_in, path_kind
from dagpilot.core.reading.json_documents import read_json
from dagpilot.core.reading.yaml_documents import read_yaml_documents
from dagpilot.core.units import duration_s
from dagpilot.workloads.argo_digest import read_digest
from dagpilot.workloads.argo_expand import expand
from dagpilot.workloads.argo_limits import Budget
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
    if path.suffix == ".json" and path_kind(path) == "file":
        return read_digest(path, settings)
    files = _manifest_files(path)
    manifests = [m for file in files for m in read_manifests(file)]
    library = Library(manifests)
    histories = {str(file): read_history(file) for file in files}
    drafts: list[JobDraft] = []
    used: set[str] = set()
    budgets: dict[str, Budget] = {}  # what each file may still unroll to (argo_limits)
    for manifest in manifests:
        workflow = with_workflow_template(manifest, library)
        if not workflow.is_job:
            continue
        job_id = _job_id(manifest, path, used)
        file = manifest.where.file
        drafts.append(expand(workflow, job_id, library, histories[file], settings,
                             budget=budgets.setdefault(file, Budget())))
    return drafts


def read_manifests(path: Path) -> list[Manifest]:
    """The Argo manifests of a YAML file, in document order."""
    file = str(path)
    manifests = []
    for index, document in enumerate(read_yaml_documents(path), start=1):
        manifest = read_manifest(document, Where(file, f"document {index}"))
        if manifest is not None:
            manifests.append(manifest)
    return manifests


def read_history(manifest: Path) -> dict[str, float]:
    """Expected seconds by template name from `<manifest stem>.history.json`, if there is one."""
    path = manifest.with_name(manifest.stem + HISTORY_SUFFIX)
    if path_kind(path) == "missing":
        return {}
    file = str(path)
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise InvalidInput(file, "$", "", "expected an object from template name to seconds")
    history: dict[str, float] = {}
    for name, value in raw.items():
        try:
            if isinstance(value, bool):
                raise ValueError(f"not a duration: {value}")
            history[name] = duration_s(value)
        except ValueError as error:
            raise InvalidInput(file, f"$.{name}", name, str(error)) from error
    log.debug("%s: %d expected runtimes", file, len(history))
    return history


def _manifest_files(path: Path) -> list[Path]:
    kind = path_kind(path)
    if kind == "folder":
        files = files_in(path, lambda name: name.endswith(YAML_SUFFIXES), recursive=True)
        if not files:
            raise InvalidInput(str(path), "", "", "folder holds no .yaml or .yml file")
        return files
    if kind == "missing":
        raise InvalidInput(str(path), "", "", "no such file or folder")
    return [path]


def _job_id(manifest: Manifest, argument: Path, used: set[str]) -> str:
    file = Path(manifest.where.file)
    base = file.relative_to(argument).with_suffix("").as_posix() \
        if path_kind(argument) == "folder" else file.stem
    job_id = f"{base}/{manifest.name}"
    if job_id in used:
        job_id = f"{job_id}-doc{manifest.where.document.removeprefix('document ')}"
    used.add(job_id)
    return job_id
