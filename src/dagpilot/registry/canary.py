"""The canary's state: ROOT/canary.json, beside `current`, written atomically under the lock.

    {"version": 1, "revision": 4, "status": "active", "stable": "v1", "canary": "v2",
     "stages": [{"selector": "topology.kubernetes.io/zone=zone-a,topology.dagpilot.io/rack in
                (rack-0)", "nodes": 8}, {"selector": "topology.kubernetes.io/zone=zone-a",
                "nodes": 24}, {"selector": "", "nodes": 48}],
     "stage": 1, "stage_started_t": 1767225600.0,
     "gate": {"window_s": 1800, "min_decisions": 20, "max_fallback_increase": 0.05,
              "max_unschedulable_increase": 0.05, "max_regret_increase": 0.02},
     "history": [{"t": ..., "action": "plan", "stage": 0, "detail": "..."}, ...]}

While `status` is "active", the nodes that stage `stage`'s selector matches are served by the
canary version and every other node by `current` (the stable version). "aborted" and
"promoted" serve `current` everywhere (a promotion made the canary current). `stages[i].nodes`
is the count at plan time, for the record; serving matches the selector against the nodes as
they are. The registry root is its home because the scheduler already follows the registry
(one volume, one reload, one lock) and the document names registry versions; a ConfigMap would
need an API write path and RBAC the scheduler does not otherwise have.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from dagpilot.clusters.node_conventions import RACK, ZONE
from dagpilot.core.errors import InvalidInput
from dagpilot.core.label_selector import Selector, parse
from dagpilot.core.types import NodeSpec
from dagpilot.registry.atomic import replace_file
from dagpilot.registry.formats import json_object
from dagpilot.registry.layout import CANARY, is_valid_name
from dagpilot.registry.limits import MAX_JSON_BYTES
from dagpilot.registry.lock import locked
from dagpilot.registry.reading import Missing, read_plain

FORMAT_VERSION = 1
ACTIVE, ABORTED, PROMOTED = "active", "aborted", "promoted"
KEEP_HISTORY = 200  # entries; the oldest are dropped


@dataclass(frozen=True)
class Gate:
    """How much worse than the stable version the canary may be, over `window_s`."""

    window_s: float = 1800.0
    min_decisions: int = 20  # canary decisions in the window, below which nothing is judged
    max_fallback_increase: float = 0.05  # fallback rate, canary minus stable
    max_unschedulable_increase: float = 0.05  # own-set unschedulable rate, canary minus stable
    max_regret_increase: float | None = 0.02  # shadow regret, canary minus stable (None: off)


@dataclass(frozen=True)
class Stage:
    selector: str  # a label selector's text (core.label_selector); "" is every node
    nodes: int  # matching nodes when planned

    def parsed(self) -> Selector:
        return parse(self.selector)


@dataclass(frozen=True)
class CanaryState:
    stable: str
    canary: str
    stages: tuple[Stage, ...]
    gate: Gate = Gate()
    stage: int = 0
    status: str = ACTIVE
    stage_started_t: float = 0.0
    revision: int = 1
    history: tuple[dict[str, Any], ...] = field(default=())

    @property
    def active(self) -> bool:
        return self.status == ACTIVE

    def document(self) -> dict[str, Any]:
        body = asdict(self)
        return {"version": FORMAT_VERSION, **body,
                "stages": [asdict(stage) for stage in self.stages],
                "history": list(self.history)[-KEEP_HISTORY:]}


def node_labels(spec: NodeSpec) -> dict[str, str]:
    """What a stage's selector is matched against: the node's labels, with its zone and rack
    under the well-known keys (a NodeSpec built without those labels has its defaults)."""
    return {ZONE: spec.zone, RACK: spec.rack, **dict(spec.labels)}


def canary_path(root: Path) -> Path:
    return root / CANARY


def read_canary(root: Path) -> CanaryState | None:
    """The state, or None when no canary was ever planned; InvalidInput naming the field."""
    file = str(canary_path(root))
    try:
        descriptor = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        data = read_plain(CANARY, dir_fd=descriptor, label=file, limit=MAX_JSON_BYTES)
    except Missing:
        return None
    finally:
        os.close(descriptor)
    return from_document(json_object(file, data), file)


def write_canary(root: Path, state: CanaryState, expected_revision: int | None) -> CanaryState:
    """Write STATE as revision `expected_revision + 1` (1 for a first plan), under the
    registry's lock; refused when someone else wrote in between (a stale read)."""
    with locked(root, exclusive=True):
        present = read_canary(root)
        found = present.revision if present is not None else None
        if found != expected_revision:
            raise InvalidInput(str(canary_path(root)), "canary", "revision",
                               f"is {found}, expected {expected_revision}: another change was "
                               "made meanwhile; look at `dagpilot ops canary status` and retry")
        written = replace(state, revision=(expected_revision or 0) + 1)
        text = json.dumps(written.document(), indent=1, allow_nan=False) + "\n"
        replace_file(canary_path(root), text.encode())
    return written


def from_document(document: dict[str, Any], file: str) -> CanaryState:
    def fail(name: str, message: str) -> InvalidInput:
        return InvalidInput(file, "canary", name, message)

    if document.get("version") != FORMAT_VERSION:
        raise fail("version", f"must be {FORMAT_VERSION}, not {document.get('version')!r}")
    versions = {}
    for name in ("stable", "canary"):
        value = document.get(name)
        if not isinstance(value, str) or not is_valid_name(value):
            raise fail(name, "must name a version of this registry")
        versions[name] = value
    stages = document.get("stages")
    if not isinstance(stages, list) or not stages:
        raise fail("stages", "must be a non-empty list")
    parsed = tuple(_stage(one, index, fail) for index, one in enumerate(stages))
    stage = _number(document, "stage", int, fail)
    if not 0 <= stage < len(parsed):
        raise fail("stage", f"{stage} is not a stage index (0 to {len(parsed) - 1})")
    status = document.get("status")
    if status not in (ACTIVE, ABORTED, PROMOTED):
        raise fail("status", f"must be {ACTIVE}, {ABORTED} or {PROMOTED}, not {status!r}")
    history = document.get("history", [])
    if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
        raise fail("history", "must be a list of objects")
    return CanaryState(
        stable=versions["stable"], canary=versions["canary"], stages=parsed,
        gate=_gate(document.get("gate"), fail), stage=stage, status=status,
        stage_started_t=float(_number(document, "stage_started_t", float, fail)),
        revision=_number(document, "revision", int, fail), history=tuple(history))


def _stage(value: Any, index: int, fail: Any) -> Stage:
    if not isinstance(value, dict) or not isinstance(value.get("selector"), str):
        raise fail(f"stages[{index}].selector", "must be a label selector's text")
    nodes = value.get("nodes", 0)
    if not isinstance(nodes, int) or isinstance(nodes, bool) or nodes < 0:
        raise fail(f"stages[{index}].nodes", "must be a count")
    try:
        parse(value["selector"])
    except Exception as error:
        raise fail(f"stages[{index}].selector", str(error)) from None
    return Stage(value["selector"], nodes)


def _gate(value: Any, fail: Any) -> Gate:
    if not isinstance(value, dict):
        raise fail("gate", "must be an object")
    window = _number(value, "window_s", float, fail, "gate.")
    decisions = _number(value, "min_decisions", int, fail, "gate.")
    if window <= 0 or decisions < 1:
        raise fail("gate", "window_s must be > 0 and min_decisions >= 1")
    increases = {}
    for name in ("max_fallback_increase", "max_unschedulable_increase"):
        increases[name] = float(_number(value, name, float, fail, "gate."))
    regret = value.get("max_regret_increase")
    return Gate(float(window), decisions, increases["max_fallback_increase"],
                increases["max_unschedulable_increase"],
                None if regret is None else float(_number(value, "max_regret_increase", float,
                                                          fail, "gate.")))


def _number(document: dict[str, Any], name: str, kind: type, fail: Any,
            prefix: str = "") -> Any:
    value = document.get(name)
    ok = isinstance(value, int | float) if kind is float else isinstance(value, int)
    if not ok or isinstance(value, bool):  # JSON here has no NaN or Infinity (formats)
        raise fail(prefix + name, f"must be a finite {'number' if kind is float else 'integer'}")
    return value
