"""The Argo examples digest (`argo_example_dags.json`) -> one job per DAG template.

The digest keeps the structure of Argo manifests that use `dag:` templates, without their
scripts: `{"workflows": [{file, kind, name, entrypoint, templates: [{name, type, tasks | image}]}]}`
where a task has `name`, `template` or `templateRef`, `dependencies` or `depends`, `when`, and
`withItems` as a count or `withParam`. Every DAG template, entrypoint or not, becomes a job
`<manifest path without suffix>/<template>` whose tasks are that template's tasks (fanned out as
argo_expand says). The templates they call are not inlined, since the digest does not record
what steps templates contain: each called template is one pod.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from dagpilot.core.config import LoaderSettings
from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft
from dagpilot.core.reading.json_documents import read_json
from dagpilot.workloads.argo_expand import expand
from dagpilot.workloads.argo_limits import Budget, fan_out
from dagpilot.workloads.argo_manifest import Library, Manifest, Raw, Where, sequence, text


def read_digest(path: Path, settings: LoaderSettings) -> list[JobDraft]:
    file = str(path)
    document = read_json(path)
    if not isinstance(document, Mapping) or not isinstance(document.get("workflows"), list):
        raise InvalidInput(file, "$", "workflows", "expected an object with a workflows list")
    drafts = []
    library = Library([])
    budget = Budget()  # the digest is one file: its DAGs share one budget
    for index, entry in enumerate(document["workflows"]):
        where = Where(file, f"workflows[{index}]")
        if not isinstance(entry, Mapping):
            raise where.error("", "expected an object")
        source = text(entry, "file", where) or f"workflow-{index}"
        where = Where(file, f"workflows[{index}] ({source})")
        templates = _dag_templates(entry, where)
        # once per workflow, not once per DAG template: a digest of n templates stays linear
        images = {t["name"]: t.get("image") or "" for t in sequence(entry, "templates", where)}
        for template in templates:
            name = template["name"]
            manifest = _manifest(entry, template, images, where)
            job_id = f"{PurePosixPath(source).with_suffix('')}/{name}"
            drafts.append(expand(manifest, job_id, library, {}, settings, budget=budget))
    return drafts


def _dag_templates(entry: Raw, where: Where) -> list[Raw]:
    """The DAG templates of one workflow; names are unique, as Argo requires (27,000 copies of
    one template were 27,000 jobs)."""
    templates, names = [], set()
    for index, template in enumerate(sequence(entry, "templates", where)):
        if not isinstance(template, Mapping) or not text(template, "name", where,
                                                         f"templates[{index}].name"):
            raise where.error(f"templates[{index}]", "expected an object with a name")
        if template["name"] in names:
            raise where.error(f"templates[{index}].name",
                              f"duplicate template name {shown(template['name'])}")
        names.add(template["name"])
        if template.get("type") == "dag":
            templates.append(template)
    return templates


def _manifest(entry: Raw, dag: Raw, images: Mapping[str, str], where: Where) -> Manifest:
    where_dag = where.inside(template=dag["name"])
    tasks = [_task(task, images, where_dag, index)
             for index, task in enumerate(sequence(dag, "tasks", where_dag))]
    template = {"name": dag["name"], "dag": {"tasks": tasks}}
    return Manifest(where, text(entry, "kind", where) or "Workflow",
                    text(entry, "name", where) or dag["name"],
                    {"entrypoint": dag["name"]}, {dag["name"]: template})


def _task(task: Any, images: Mapping[str, str], where: Where, index: int) -> Raw:
    """A digest task as an Argo DAG task that runs its template inline, as one pod."""
    if not isinstance(task, Mapping):
        raise where.error(f"tasks[{index}]", "expected an object")
    reference = task.get("templateRef")
    called = task.get("template") or (
        reference.get("template") if isinstance(reference, Mapping) else None) or task.get("name")
    converted = {key: value for key, value in task.items()
                 if key not in ("template", "templateRef", "withItems")}
    converted["inline"] = {"name": called, "container": {"image": images.get(str(called), "")}}
    items = task.get("withItems")
    if isinstance(items, int) and not isinstance(items, bool):
        name = task.get("name")
        # checked before the list is made: a count of 10**8 would take gigabytes
        count = fan_out(items, where.inside(task=name if isinstance(name, str) else ""),
                        "withItems")
        converted["withItems"] = list(range(count))
    elif items is not None:
        converted["withItems"] = items
    return converted
