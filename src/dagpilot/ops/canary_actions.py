"""`dagpilot ops canary advance|abort|status`: the canary's state changes and its picture.

`advance` moves to the next stage only when the gate passes (canary_gate.py); past the last
stage it promotes: `current` becomes the canary version (the registry's switch, verified)
and the canary ends. `abort` ends it at once: every node back to the stable model on the
scheduler's next reload of canary.json. Each change is one atomic write of the next revision;
a change made meanwhile by someone else is refused rather than overwritten.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dagpilot.core.label_selector import parse
from dagpilot.core.types import Cluster
from dagpilot.ops.canary_gate import Verdict, judge, rates, window_start
from dagpilot.ops.canary_plan import matching
from dagpilot.registry import read_current, rollback
from dagpilot.registry.canary import (
    ABORTED,
    PROMOTED,
    CanaryState,
    read_canary,
    write_canary,
)
from dagpilot.registry.errors import RegistryError
from dagpilot.state import FEATURE_SCHEMA_VERSION


@dataclass(frozen=True)
class Advance:
    verdict: Verdict
    state: CanaryState  # after the change (unchanged when the gate refused)
    promoted: bool = False


def active(root: Path) -> CanaryState:
    state = read_canary(root)
    if state is None:
        raise RegistryError(f"{root}: no canary planned (dagpilot ops canary plan)")
    if not state.active:
        raise RegistryError(f"canary of {state.canary} is {state.status}, not active")
    return state


def advance(root: Path, records: Iterable[Mapping[str, Any]],
            regret: Mapping[str, float] | None, now_t: float) -> Advance:
    state = active(root)
    since = window_start(state, now_t)
    verdict = judge(state, rates(records, since, now_t), regret, since)
    if not verdict.passed:
        return Advance(verdict, state)
    if state.stage + 1 < len(state.stages):
        nodes = state.stages[state.stage + 1].nodes
        following = replace(state, stage=state.stage + 1, stage_started_t=now_t,
                            history=_logged(state, now_t, "advance", state.stage + 1,
                                            f"stage {state.stage + 2}: {nodes} nodes"))
        return Advance(verdict, write_canary(root, following, state.revision))
    if read_current(root) != state.canary:
        rollback(root, to=state.canary, feature_schema_version=FEATURE_SCHEMA_VERSION)
    done = replace(state, status=PROMOTED,
                   history=_logged(state, now_t, "promote", state.stage,
                                   f"{state.canary} is current"))
    return Advance(verdict, write_canary(root, done, state.revision), promoted=True)


def abort(root: Path, now_t: float, reason: str) -> CanaryState:
    state = active(root)
    ended = replace(state, status=ABORTED,
                    history=_logged(state, now_t, "abort", state.stage, reason[:300]))
    return write_canary(root, ended, state.revision)


def status(root: Path, cluster: Cluster | None, records: Iterable[Mapping[str, Any]] | None,
           now_t: float) -> dict[str, Any]:
    state = read_canary(root)
    if state is None:
        return {"canary": None, "current": read_current(root)}
    document = state.document()
    document["current"] = read_current(root)
    if cluster is not None:
        for stage in document["stages"]:
            stage["nodes_now"] = len(matching(cluster, parse(stage["selector"])))
        document["cluster_nodes"] = len(cluster.nodes)
    if records is not None and state.active:
        since = window_start(state, now_t)
        window = rates(records, since, now_t)
        document["window"] = {"since_t": since, "until_t": now_t,
                              **{name: one.document() for name, one in window.items()}}
    return document


def _logged(state: CanaryState, now_t: float, action: str, stage: int,
            detail: str) -> tuple[dict[str, Any], ...]:
    return (*state.history, {"t": now_t, "action": action, "stage": stage, "detail": detail})
