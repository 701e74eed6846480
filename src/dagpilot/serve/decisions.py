"""One scheduling decision: the model's when it can, the fallback's when it cannot.

`Decider.decide(view)` asks the model in service (through the deadline runner) and returns a
`Choice`: the placement, who made it (`model`, `fallback` or `unschedulable` when nothing fits)
and, for a fallback, why: no model loaded, the policy raised, the deadline passed, or an
earlier late call is still running. The fallback runs on the same view right away, so a pod
never waits on the model.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Protocol

from dagpilot.agent import Decision
from dagpilot.core.scheduler import Placement
from dagpilot.core.view import ClusterView
from dagpilot.serve.deadline import DeadlinePassed, DeadlineRunner, PolicyBusy
from dagpilot.serve.fallback import Fallback
from dagpilot.serve.model_reload import Serving

log = logging.getLogger(__name__)

MODEL, FALLBACK, UNSCHEDULABLE = "model", "fallback", "unschedulable"


class PolicySource(Protocol):
    """Where the model in service comes from (model_reload.ModelPolicy, or a test's)."""

    def current(self) -> Serving | None: ...


@dataclass(frozen=True)
class Choice:
    placement: Placement | None
    outcome: str  # MODEL, FALLBACK or UNSCHEDULABLE
    version: str | None  # the model version that decided (None: the fallback did)
    reason: str | None = None  # why the fallback decided
    decision: Decision | None = None  # the model's, for the journal
    decision_s: float = 0.0
    cohort: str | None = None  # during a canary: the pod's cohort, "stable" or "canary"
    node_set: str | None = None  # and whose nodes took it (model_by_node.py)


class Decider:
    def __init__(self, source: PolicySource, runner: DeadlineRunner,
                 fallback: Fallback) -> None:
        self.source = source
        self.runner = runner
        self.fallback = fallback

    def decide(self, view: ClusterView) -> Choice:
        started = time.perf_counter()
        serving = self.source.current()
        if serving is None:
            return self._fallback(view, "no model loaded", started)
        try:
            decision = self.runner.call(lambda: serving.policy(view))
        except (DeadlinePassed, PolicyBusy) as late:
            return self._fallback(view, str(late), started)
        except Exception as error:  # a defect in the policy must not stop scheduling
            log.exception("policy %s raised; the fallback decides", serving.version)
            return self._fallback(view, f"policy raised {type(error).__name__}", started)
        elapsed = time.perf_counter() - started
        if decision.placement is None:
            return Choice(None, UNSCHEDULABLE, serving.version, decision=decision,
                          decision_s=elapsed)
        return Choice(decision.placement, MODEL, serving.version, decision=decision,
                      decision_s=elapsed)

    def prepare(self, view: ClusterView) -> None:
        """New metrics landed in `view`: the model re-encodes the nodes now, between
        decisions, instead of inside the next one. Through the runner, so it never overlaps
        a decision of the policy thread; skipped while a late call still runs; a failure is
        logged and the next decision encodes as it always could."""
        serving = self.source.current()
        if serving is None or serving.prepare is None:
            return
        prepare = serving.prepare
        try:
            self.runner.call(lambda: prepare(view))
        except (DeadlinePassed, PolicyBusy):
            return
        except Exception:  # a defect here must not stop scheduling
            log.exception("preparing model %s for new metrics failed", serving.version)

    def _fallback(self, view: ClusterView, reason: str, started: float) -> Choice:
        placement = self.fallback.decide(view)
        return Choice(placement, FALLBACK if placement is not None else UNSCHEDULABLE, None,
                      reason, decision_s=time.perf_counter() - started)
