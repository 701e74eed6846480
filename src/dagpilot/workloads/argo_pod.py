"""What the pod of one Argo leaf template asks for: resources, placement rules, priority, runtime.

- Requests and limits are summed over the template's containers (`container`, `script`, or every
  container of a `containerSet`) and its `sidecars`, for cpu, memory and `nvidia.com/gpu`. As in
  Kubernetes a request left out where a limit is given equals the limit (GPUs are usually only
  limits). A resource no container names gets the settings default (no GPU). A limit left out
  where others are given is taken to be the request.
- `nodeSelector`, `tolerations`, `affinity` and `priority` of the template replace the workflow's
  `nodeSelector`, `tolerations`, `affinity` and `podPriority`, as Argo's controller does. Of the
  affinity only `nodeAffinity` is used; a `matchFields` requirement on `metadata.name` becomes
  one on the `kubernetes.io/hostname` label, which Kubernetes sets to the node name.
- The expected runtime is the template's `dagpilot.io/expected-duration` annotation ("90s",
  "5m", "1h30m" or seconds), else the history entry for the template's name, else
  `settings.default_runtime_s`.
- Every amount is finite and not negative, at most MAX_CORES cores or GPUs and MAX_BYTES of
  memory (beyond what makes sense, job_draft's rules refuse it); priorities are int32, as in
  Kubernetes and Argo.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dagpilot.core.config import LoaderSettings
from dagpilot.core.echo import shown
from dagpilot.core.numbers import INT32, MAX_BYTES, MAX_CORES, problem
from dagpilot.core.types import (
    Labels,
    NodeAffinity,
    Requirement,
    Resources,
    TaintEffect,
    Term,
    Toleration,
    labels,
)
from dagpilot.core.units import cpu_cores, duration_s, quantity
from dagpilot.workloads.argo_manifest import Raw, Where, mapping, sequence, text

EXPECTED_DURATION = "dagpilot.io/expected-duration"
GPU = "nvidia.com/gpu"
RESOURCES = ("cpu", "memory", GPU)
OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})
HOSTNAME_LABEL = "kubernetes.io/hostname"
MAX_AMOUNT = {"cpu": MAX_CORES, "memory": float(MAX_BYTES), GPU: MAX_CORES}


@dataclass(frozen=True, slots=True)
class Pod:
    requests: Resources
    limits: Resources | None
    node_selector: Labels
    tolerations: tuple[Toleration, ...]
    affinity: NodeAffinity | None
    priority: int


def pod(template: Raw, spec: Raw, where: Where, settings: LoaderSettings) -> Pod:
    """The pod fields of a leaf template run by a workflow with spec `spec`."""
    requests, limits = _resources(template, where, settings)
    node_selector = mapping(template, "nodeSelector", where) or mapping(
        spec, "nodeSelector", where, "spec.nodeSelector")
    tolerations = sequence(template, "tolerations", where) or sequence(
        spec, "tolerations", where, "spec.tolerations")
    affinity = mapping(template, "affinity", where) or mapping(spec, "affinity", where,
                                                               "spec.affinity")
    field = "priority" if "priority" in template else "spec.podPriority"
    priority = checked_priority(template.get("priority", spec.get("podPriority", 0)), where,
                                field)
    return Pod(requests, limits, _node_selector(node_selector, where),
               tuple(_toleration(t, where, f"tolerations[{i}]") for i, t in enumerate(tolerations)),
               _node_affinity(affinity, where), priority)


def checked_priority(value: Any, where: Where, field: str) -> int:
    """A priority: an integer in int32's range (what Kubernetes and Argo store)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise where.error(field, f"expected an integer, got {shown(value)}")
    reason = problem(value, *INT32)
    if reason is not None:
        raise where.error(field, f"{reason} (priorities are 32-bit integers)")
    return value


def runtime_s(template: Raw, name: str, history: Mapping[str, float], where: Where,
              settings: LoaderSettings) -> float:
    annotations = mapping(mapping(template, "metadata", where), "annotations", where,
                          "metadata.annotations")
    if EXPECTED_DURATION in annotations:
        value = annotations[EXPECTED_DURATION]
        try:
            return duration_s(value)
        except ValueError as error:
            raise where.error(f"metadata.annotations.{EXPECTED_DURATION}", str(error)) from error
    return history.get(name, settings.default_runtime_s)


def _containers(template: Raw, where: Where) -> list[tuple[str, Raw]]:
    found: list[tuple[str, Raw]] = []
    for kind in ("container", "script"):
        if kind in template:
            found.append((kind, mapping(template, kind, where)))
    container_set = mapping(template, "containerSet", where)
    for index, item in enumerate(sequence(container_set, "containers", where,
                                          "containerSet.containers")):
        path = f"containerSet.containers[{index}]"
        found.append((path, _as_mapping(item, where, path)))
    for index, item in enumerate(sequence(template, "sidecars", where)):
        found.append((f"sidecars[{index}]", _as_mapping(item, where, f"sidecars[{index}]")))
    return found


def _as_mapping(value: Any, where: Where, path: str) -> Raw:
    if not isinstance(value, Mapping):
        raise where.error(path, f"expected a mapping, got {shown(value)}")
    return value


def _resources(template: Raw, where: Where,
               settings: LoaderSettings) -> tuple[Resources, Resources | None]:
    requested: dict[str, float] = {}
    limited: dict[str, float] = {}
    for path, container in _containers(template, where):
        resources = mapping(container, "resources", where, f"{path}.resources")
        requests = mapping(resources, "requests", where, f"{path}.resources.requests")
        limits = mapping(resources, "limits", where, f"{path}.resources.limits")
        for name in RESOURCES:
            limit = _amount(limits, name, where, f"{path}.resources.limits.{name}")
            request = _amount(requests, name, where, f"{path}.resources.requests.{name}")
            if request is None:
                request = limit
            if request is not None:
                requested[name] = requested.get(name, 0.0) + request
            if limit is not None:
                limited[name] = limited.get(name, 0.0) + limit
    gpus = requested.get(GPU, 0.0)
    if not gpus.is_integer():
        raise where.error(f"resources.requests.{GPU}", f"GPUs come whole, got {gpus:g}")
    requests_total = Resources(requested.get("cpu", settings.default_cpu),
                               round(requested.get("memory", settings.default_memory)), int(gpus))
    if not limited:
        return requests_total, None
    return requests_total, Resources(
        limited.get("cpu", requests_total.cpu),
        round(limited.get("memory", requests_total.memory)),
        int(limited.get(GPU, requests_total.gpus)))


def _amount(values: Raw, name: str, where: Where, path: str) -> float | None:
    if name not in values:
        return None
    raw = values[name]
    try:
        amount = cpu_cores(raw) if name == "cpu" else quantity(raw)
    except (ValueError, TypeError) as error:
        raise where.error(path, f"bad Kubernetes quantity {shown(raw)}: {error}") from error
    reason = problem(amount, 0.0, MAX_AMOUNT[name])
    if reason is not None:
        raise where.error(path, f"{name} {reason}")
    return float(round(amount)) if name == "memory" else amount


def _node_selector(raw: Raw, where: Where) -> Labels:
    for key, value in raw.items():
        if not isinstance(value, str):
            raise where.error(f"nodeSelector.{shown(key)}",
                              f"expected a string, got {shown(value)}")
    return labels({str(k): v for k, v in raw.items()})


def _toleration(raw: Any, where: Where, path: str) -> Toleration:
    item = _as_mapping(raw, where, path)
    operator = text(item, "operator", where, f"{path}.operator", "Equal")
    if operator not in ("Equal", "Exists"):
        raise where.error(f"{path}.operator", f"expected Equal or Exists, got {shown(operator)}")
    effect_name = text(item, "effect", where, f"{path}.effect")
    try:
        effect = TaintEffect(effect_name) if effect_name else None
    except ValueError as error:
        known = ", ".join(e.value for e in TaintEffect)
        raise where.error(f"{path}.effect",
                          f"unknown effect {shown(effect_name)}; known: {known}") from error
    return Toleration(text(item, "key", where, f"{path}.key"), operator,
                      text(item, "value", where, f"{path}.value"), effect)


def _node_affinity(affinity: Raw, where: Where) -> NodeAffinity | None:
    node = mapping(affinity, "nodeAffinity", where, "affinity.nodeAffinity")
    if not node:
        return None
    path = "affinity.nodeAffinity"
    required_key = "requiredDuringSchedulingIgnoredDuringExecution"
    required = mapping(node, required_key, where, f"{path}.{required_key}")
    terms = tuple(
        _term(term, where, f"{path}.{required_key}.nodeSelectorTerms[{index}]")
        for index, term in enumerate(sequence(required, "nodeSelectorTerms", where,
                                              f"{path}.{required_key}.nodeSelectorTerms")))
    preferred_key = "preferredDuringSchedulingIgnoredDuringExecution"
    preferred = []
    for index, item in enumerate(sequence(node, preferred_key, where, f"{path}.{preferred_key}")):
        item_path = f"{path}.{preferred_key}[{index}]"
        entry = _as_mapping(item, where, item_path)
        weight = entry.get("weight")
        if not isinstance(weight, int) or isinstance(weight, bool) or not 1 <= weight <= 100:
            raise where.error(f"{item_path}.weight", f"expected 1..100, got {shown(weight)}")
        preferred.append((weight, _term(entry.get("preference"), where,
                                        f"{item_path}.preference")))
    return NodeAffinity(terms, tuple(preferred))


def _term(raw: Any, where: Where, path: str) -> Term:
    term = _as_mapping(raw, where, path)
    requirements = [
        _requirement(item, where, f"{path}.matchExpressions[{index}]", fields=False)
        for index, item in enumerate(sequence(term, "matchExpressions", where,
                                              f"{path}.matchExpressions"))]
    requirements += [
        _requirement(item, where, f"{path}.matchFields[{index}]", fields=True)
        for index, item in enumerate(sequence(term, "matchFields", where, f"{path}.matchFields"))]
    return tuple(requirements)


def _requirement(raw: Any, where: Where, path: str, fields: bool) -> Requirement:
    item = _as_mapping(raw, where, path)
    key = text(item, "key", where, f"{path}.key")
    operator = text(item, "operator", where, f"{path}.operator")
    if operator not in OPERATORS:
        raise where.error(f"{path}.operator",
                          f"unknown operator {shown(operator)}; known: "
                          f"{', '.join(sorted(OPERATORS))}")
    values = sequence(item, "values", where, f"{path}.values")
    if not all(isinstance(v, str) for v in values):
        raise where.error(f"{path}.values", f"expected strings, got {shown(values)}")
    if fields:
        if key != "metadata.name":
            raise where.error(f"{path}.key",
                              f"matchFields supports metadata.name, got {shown(key)}")
        key = HOSTNAME_LABEL
    return Requirement(key, operator, tuple(values))
