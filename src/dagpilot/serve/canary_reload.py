"""The canary in service: ROOT/canary.json and its model, re-read without a restart.

`CanaryModel.plan()` is None while no canary is active (every node is the stable model's), else
a `CanaryPlan`: the canary version, the selector of the nodes it serves at this stage, and its
policy (None when the canary's model could not be loaded: its nodes are then the fallback's,
which the gate counts, so `advance` refuses; it is warmed up before it serves, as model_reload
does). A thread re-reads the file every `period_s`; a new revision is parsed (and a new canary
version loaded and verified) before it is swapped in with one assignment, so a decision sees
the old plan or the new one, never a mix, and none is lost. A file that does not read or parse
keeps the plan in force (logged, counted). `current()` makes it the policy source of the
canary's Decider.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from dagpilot.core.label_selector import Selector, parse
from dagpilot.registry import load_version
from dagpilot.registry.canary import CanaryState, read_canary
from dagpilot.serve.model_reload import Serving, serving
from dagpilot.serve.periodic import Periodic
from dagpilot.state import FEATURE_SCHEMA_VERSION

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CanaryPlan:
    version: str
    selector: Selector  # the canary's nodes at this stage
    stage: int  # 0-based
    stages: int
    revision: int
    serving: Serving | None  # None: the canary model failed to load


class CanaryModel:
    def __init__(self, root: Path, period_s: float = 5.0) -> None:
        self.root = root
        self.period_s = period_s
        self.error: str | None = None  # the last read or load that failed
        self.failed_reads = 0
        self._plan: CanaryPlan | None = None
        self._refresher = Periodic("dagpilot-canary-reload", period_s, self.refresh)
        self.refresh()

    def plan(self) -> CanaryPlan | None:
        return self._plan

    def current(self) -> Serving | None:
        plan = self._plan
        return plan.serving if plan is not None else None

    def refresh(self) -> None:
        try:
            state = read_canary(self.root)
        except Exception as error:  # a broken file: the plan in force stays
            self.failed_reads += 1
            self.error = f"{type(error).__name__}: {error}"[:500]
            log.warning("kept the canary plan in force (failed read %d): %s",
                        self.failed_reads, self.error)
            return
        if state is None or not state.active:
            if self._plan is not None:
                log.info("canary %s ended: every node serves the stable model",
                         self._plan.version)
            self._plan = None
            return
        plan = self._plan
        if plan is not None and plan.revision == state.revision and plan.serving is not None:
            return  # unchanged (a canary model that failed to load is tried again)
        self._plan = self._next(state, plan)
        log.info("canary %s at stage %d of %d on %r", state.canary, state.stage + 1,
                 len(state.stages), state.stages[state.stage].selector)

    def _next(self, state: CanaryState, plan: CanaryPlan | None) -> CanaryPlan:
        serving = plan.serving if plan is not None and plan.version == state.canary else None
        if serving is None:
            serving = self._load(state.canary)
        return CanaryPlan(state.canary, parse(state.stages[state.stage].selector), state.stage,
                          len(state.stages), state.revision, serving)

    def _load(self, version: str) -> Serving | None:
        try:
            loaded = serving(load_version(self.root, version, FEATURE_SCHEMA_VERSION))
        except Exception as error:  # its nodes go to the fallback; the gate sees it
            self.error = f"{type(error).__name__}: {error}"[:500]
            log.warning("canary model %s not loaded, its nodes use the fallback: %s", version,
                        self.error)
            return None
        self.error = None
        return loaded

    def start(self) -> None:
        self._refresher.start()

    def close(self) -> None:
        self._refresher.close()
