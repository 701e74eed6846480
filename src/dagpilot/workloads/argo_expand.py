"""One Argo workflow -> one job: its entrypoint template unrolled into pod-level tasks.

- A `dag` template's tasks wait for the tasks their `dependencies` list or `depends` expression
  names (see argo_depends); `when` conditions are ignored: every task is taken to run.
- A `steps` template is a list of groups run in order; the steps of a group run in parallel and
  each waits for every step of the group before it.
- A task or step whose template is itself a `dag` or `steps` template is inlined: what depends on
  it waits for its last tasks, and its first tasks wait for what it depends on. Task ids follow
  Argo's node names without the workflow's: `A`, `A.inner-B`, `[0].step`, `A[1].step`.
- Fan-out: `withItems` (one task per item), `withSequence` (`count`, or `start`..`end`) and a
  `withParam` that is a literal JSON list make one task per item, ids `B(0)`, `B(1)`, ...; what
  depends on a fanned-out task waits for all its items. A `withParam` (or sequence) computed at
  run time has an unknown count: the called template's `dagpilot.io/fan-out` annotation, else the
  workflow's (metadata.annotations), else 1. Every count, and what a file unrolls to in all, has
  a ceiling, checked before unrolling: see argo_limits.
- Templates are found by `template` in the calling template's manifest, by `templateRef` among
  the WorkflowTemplates (`clusterScope: true`: ClusterWorkflowTemplates) read together, or
  `inline`. Every other template (container, script, containerSet, resource, data, http, plugin,
  suspend) is one pod: see argo_pod. Exit handlers and hooks are not part of the DAG.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dagpilot.core.config import LoaderSettings
from dagpilot.core.dag import topological_order
from dagpilot.core.echo import shown
from dagpilot.core.job_draft import JobDraft
from dagpilot.core.numbers import MAX_DIGITS, ascii_whole
from dagpilot.core.reading.json_documents import NotJson, parse_json
from dagpilot.core.types import Task, TaskClass, labels
from dagpilot.workloads.argo_depends import DependsError, referenced_tasks
from dagpilot.workloads.argo_limits import MAX_TEMPLATE_DEPTH, Budget, fan_out
from dagpilot.workloads.argo_manifest import (
    Library,
    Manifest,
    Raw,
    Where,
    mapping,
    sequence,
    text,
)
from dagpilot.workloads.argo_pod import Pod, checked_priority, pod, runtime_s

FAN_OUT = "dagpilot.io/fan-out"
LEAF_KINDS = ("container", "script", "containerSet", "resource", "data", "http", "plugin",
              "suspend")


@dataclass(frozen=True, slots=True)
class Scope:
    """A template, its name, and the manifest in which its own `template:` references resolve."""

    manifest: Manifest
    name: str
    template: Raw


def expand(workflow: Manifest, job_id: str, library: Library, history: Mapping[str, float],
           settings: LoaderSettings, *, budget: Budget | None = None) -> JobDraft:
    """The draft of a workflow whose templates are complete (workflowTemplateRef resolved).

    `budget` is what is left of the file's nodes and edges (one per file, shared by its
    workflows); a workflow read alone gets a fresh one."""
    entrypoint = workflow.entrypoint
    if entrypoint is None:
        raise workflow.where.error("spec.entrypoint", "a workflow needs an entrypoint")
    template = workflow.templates.get(entrypoint)
    if template is None:
        raise workflow.where.error("spec.entrypoint", f"unknown template {shown(entrypoint)}")
    found = {"argo.kind": workflow.kind, "argo.name": workflow.name}
    if workflow.schedule:
        found["argo.schedule"] = workflow.schedule
    priority = checked_priority(workflow.spec.get("priority", 0), workflow.where,
                                "spec.priority")
    draft = JobDraft(workflow.where.file, job_id, priority=priority, labels=labels(found))
    _Unroller(workflow, library, history, settings, draft, budget=budget or Budget()).template(
        Scope(workflow, entrypoint, template), "", (), workflow.where.inside(template=entrypoint))
    return draft


def _union(groups: Iterable[Iterable[str]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(task for group in groups for task in group))


class _Unroller:
    """Adds the tasks of a template to a draft; each step returns the ids of its last tasks."""

    def __init__(self, workflow: Manifest, library: Library, history: Mapping[str, float],
                 settings: LoaderSettings, draft: JobDraft, *, budget: Budget) -> None:
        self.workflow = workflow
        self.library = library
        self.history = history
        self.settings = settings
        self.draft = draft
        self.budget = budget
        # a template's pod fields, worked out once however many tasks run it (by id: the
        # templates live as long as the manifests; 10,000 items x 40,000 sidecars stay linear)
        self.pods: dict[int, Pod] = {}
        self.active: list[tuple[str, str, str]] = []  # templates being unrolled, for recursion

    def template(self, scope: Scope, prefix: str, parents: tuple[str, ...],
                 caller: Where) -> tuple[str, ...]:
        """Unroll `scope` under id `prefix` after `parents`; the ids that finish it."""
        key = (scope.manifest.where.file, scope.manifest.where.document, scope.name)
        where = scope.manifest.where.inside(template=scope.name, task=caller.task)
        if key in self.active:
            raise where.error("template", "recursive template: a template that calls itself "
                              "cannot be unrolled into a static DAG")
        if len(self.active) >= MAX_TEMPLATE_DEPTH:
            raise where.error("template", f"templates call each other more than "
                              f"{MAX_TEMPLATE_DEPTH} deep")
        self.budget.spend(where)
        self.active.append(key)
        try:
            if "dag" in scope.template:
                return self._dag(scope, prefix, parents, where.inside(task=""))
            if "steps" in scope.template:
                return self._steps(scope, prefix, parents, where.inside(task=""))
            return (self._leaf(scope, prefix, parents, caller, where),)
        finally:
            self.active.pop()

    def _dag(self, scope: Scope, prefix: str, parents: tuple[str, ...],
             where: Where) -> tuple[str, ...]:
        tasks: dict[str, Raw] = {}
        waits: dict[str, tuple[str, ...]] = {}
        for index, raw in enumerate(sequence(mapping(scope.template, "dag", where), "tasks",
                                             where, "dag.tasks")):
            task = _task_mapping(raw, where, f"dag.tasks[{index}]")
            name = text(task, "name", where, f"dag.tasks[{index}].name")
            if not name or name in tasks:
                raise where.inside(task=name).error("name", "a DAG task needs a unique name")
            tasks[name] = task
            waits[name] = _dependencies(task, where.inside(task=name))
        for name, deps in waits.items():
            for dep in deps:
                if dep not in tasks:
                    field = "depends" if "depends" in tasks[name] else "dependencies"
                    raise where.inside(task=name).error(field, f"unknown task {shown(dep)}")
        order, on_cycle = topological_order(waits)
        if on_cycle:
            first = on_cycle[0]
            field = "depends" if "depends" in tasks[first] else "dependencies"
            raise where.inside(task=first).error(field, "dependency cycle through "
                                                 + ", ".join(on_cycle))
        ends: dict[str, tuple[str, ...]] = {}
        for name in order:
            entry = _union(ends[dep] for dep in waits[name]) if waits[name] else parents
            ends[name] = self._call(scope, tasks[name], f"{prefix}.{name}" if prefix else name,
                                    entry, where.inside(task=name))
        awaited = {dep for deps in waits.values() for dep in deps}
        return _union(ends[name] for name in order if name not in awaited) or parents

    def _steps(self, scope: Scope, prefix: str, parents: tuple[str, ...],
               where: Where) -> tuple[str, ...]:
        entry = parents
        for index, group in enumerate(sequence(scope.template, "steps", where)):
            steps = [group] if isinstance(group, Mapping) else group
            if not isinstance(steps, list):
                raise where.error(f"steps[{index}]",
                                  f"expected a list of steps, got {shown(group)}")
            ends: list[tuple[str, ...]] = []
            for position, raw in enumerate(steps):
                step = _task_mapping(raw, where, f"steps[{index}][{position}]")
                name = text(step, "name", where, f"steps[{index}][{position}].name")
                if not name:
                    raise where.error(f"steps[{index}][{position}].name", "a step needs a name")
                ends.append(self._call(scope, step, f"{prefix}[{index}].{name}", entry,
                                       where.inside(task=name)))
            entry = _union(ends) or entry
        return entry

    def _call(self, scope: Scope, task: Raw, task_id: str, parents: tuple[str, ...],
              where: Where) -> tuple[str, ...]:
        """The template a task or step runs, once or once per item."""
        target = self._resolve(scope, task, where)
        count = self._fan_out(task, target, where)
        if count is None:
            return self.template(target, task_id, parents, where)
        self.budget.reserve(count, where)  # before unrolling any item
        return _union(self.template(target, f"{task_id}({item})", parents, where)
                      for item in range(count)) or parents

    def _resolve(self, scope: Scope, task: Raw, where: Where) -> Scope:
        if "inline" in task:
            inline = mapping(task, "inline", where)
            return Scope(scope.manifest, text(inline, "name", where, "inline.name") or where.task,
                         inline)
        if "templateRef" in task:
            return self._referenced(mapping(task, "templateRef", where), where)
        name = text(task, "template", where)
        if not name:
            raise where.error("template", "names no template (template, templateRef or inline)")
        template = scope.manifest.templates.get(name)
        if template is None:
            raise where.error("template", f"unknown template {shown(name)}")
        return Scope(scope.manifest, name, template)

    def _referenced(self, reference: Raw, where: Where) -> Scope:
        cluster = bool(reference.get("clusterScope"))
        owner_name = text(reference, "name", where, "templateRef.name")
        owner = self.library.find(owner_name, cluster)
        if owner is None:
            raise where.error("templateRef.name",
                              f"unknown {Library.kind_name(cluster)} {shown(owner_name)}")
        name = text(reference, "template", where, "templateRef.template")
        template = owner.templates.get(name)
        if template is None:
            raise where.error("templateRef.template", f"unknown template {shown(name)} in "
                              f"{Library.kind_name(cluster)} {shown(owner_name)}")
        return Scope(owner, name, template)

    def _fan_out(self, task: Raw, target: Scope, where: Where) -> int | None:
        """The items of a fanned-out task (None when it is not), within MAX_FAN_OUT."""
        if "withItems" in task:
            return fan_out(len(sequence(task, "withItems", where)), where, "withItems")
        if "withSequence" in task:
            field = "withSequence"
            count = _sequence_count(mapping(task, field, where), where)
        elif "withParam" in task:
            field = "withParam"
            count = _literal_count(task["withParam"], where)
        else:
            return None
        if count is None:
            return self._default_fan_out(target, where)
        return fan_out(count, where, field)

    def _default_fan_out(self, target: Scope, where: Where) -> int:
        own = mapping(mapping(target.template, "metadata", where), "annotations", where,
                      "metadata.annotations")
        value = own.get(FAN_OUT, self.workflow.annotations.get(FAN_OUT, "1"))
        field = f"metadata.annotations.{FAN_OUT}"
        count = ascii_whole(value.strip()) if isinstance(value, str) else (
            value if isinstance(value, int) and not isinstance(value, bool) else None)
        if count is None:
            raise where.error(field, f"expected a whole number of items, got {shown(value)}")
        return fan_out(count, where, field)

    def _leaf(self, scope: Scope, task_id: str, parents: tuple[str, ...], caller: Where,
              where: Where) -> str:
        template = scope.template
        if not any(kind in template for kind in LEAF_KINDS):
            raise where.error("template", "is none of dag, steps, " + ", ".join(LEAF_KINDS))
        fields = self.pods.get(id(template))
        if fields is None:
            fields = self.pods[id(template)] = pod(template, self.workflow.spec, where,
                                                   self.settings)
        self.budget.link(len(parents), where)
        task = Task(
            id=task_id or scope.name, name=scope.name,
            runtime_s=runtime_s(template, scope.name, self.history, where, self.settings),
            requests=fields.requests, parents=parents, limits=fields.limits,
            task_class=TaskClass.GPU if fields.requests.gpus else TaskClass.CPU,
            priority=fields.priority, node_selector=fields.node_selector,
            tolerations=fields.tolerations, affinity=fields.affinity)
        record = caller.inside(task=task.id).record()
        if caller.file != self.draft.file:  # a template from another file (templateRef)
            record = f"{caller.file}: {record}"
        self.draft.add(task, record)
        return task.id


def _task_mapping(raw: Any, where: Where, path: str) -> Raw:
    if not isinstance(raw, Mapping):
        raise where.error(path, f"expected a mapping, got {shown(raw)}")
    return raw


def _dependencies(task: Raw, where: Where) -> tuple[str, ...]:
    if "depends" in task and "dependencies" in task:
        raise where.error("depends", "use either depends or dependencies, not both")
    if "depends" in task:
        expression = task["depends"]
        if not isinstance(expression, str):
            raise where.error("depends", f"expected an expression, got {shown(expression)}")
        try:
            return referenced_tasks(expression)
        except DependsError as error:
            raise where.error("depends", str(error)) from error
    names = sequence(task, "dependencies", where)
    if not all(isinstance(name, str) for name in names):
        raise where.error("dependencies", f"expected task names, got {shown(names)}")
    return tuple(dict.fromkeys(names))


def _sequence_count(spec: Raw, where: Where) -> int | None:
    """Items of a withSequence (`count`, or `start` to `end`), or None when they are computed at
    run time (a `{{...}}` parameter)."""
    if "count" in spec:
        count = _sequence_number(spec["count"], where, "withSequence.count")
        return None if count is None else max(count, 0)
    start = _sequence_number(spec.get("start", 0), where, "withSequence.start")
    end = _sequence_number(spec.get("end", 0), where, "withSequence.end")
    return None if start is None or end is None else max(end - start + 1, 0)


def _sequence_number(value: Any, where: Where, field: str) -> int | None:
    """An int of at most MAX_DIGITS digits, from a number or its text; None for text that is
    no number (a parameter resolved at run time); an InvalidInput for anything else."""
    if isinstance(value, str):
        text = value.strip()
        number = ascii_whole(text.removeprefix("-"))
        return None if number is None else (-number if text.startswith("-") else number)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or abs(value) >= 10**MAX_DIGITS:
        raise where.error(field, f"expected a whole number of at most {MAX_DIGITS} digits, "
                          f"got {shown(value)}")
    return value


def _literal_count(param: Any, where: Where) -> int | None:
    """Items of a withParam written as a JSON list, or None when computed at run time."""
    if isinstance(param, list):
        return len(param)
    try:
        value = parse_json(param, where.file, where.record(), "withParam") \
            if isinstance(param, str) else None
    except NotJson:  # an expression such as {{steps.list.outputs.result}}
        return None
    return len(value) if isinstance(value, list) else None
