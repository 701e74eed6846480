"""The canary's gate: is the canary worse than the stable version, by more than allowed?

Measured from the serving scheduler's decision journal over the window (the stage's start or
`window_s` ago, whichever is later), per node set (records with `node_set`, written only while
a canary is active):

- fallback rate: of the placements on a set's nodes, the share the fallback made (the set's
  model had none loaded, raised, or missed its deadline);
- unschedulable rate: of a cohort's placed pods, the share its own set could not take (placed
  on the other set instead: model_by_node.py); pods nothing in the cluster could take are the
  cluster's, not a model's, and count for neither;
- shadow regret: the simulator's estimate on a shadow journal's recorded stream (as
  `dagpilot shadow report` makes it): mean JCT under the version / under kube-default - 1.

Each passes when canary - stable <= its allowed increase. With no stable decision in the
window (the last stage holds every node) the stable rate counts as 0, the strict reading. Too
few canary decisions is a refusal too: no evidence is not good evidence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dagpilot.registry.canary import CanaryState, Gate

STABLE, CANARY = "stable", "canary"


@dataclass(frozen=True)
class SetRates:
    placed: int = 0  # placements on this set's nodes
    fallback: int = 0  # of which the fallback made
    cohort: int = 0  # pods of this cohort placed anywhere
    spilled: int = 0  # of which on the other set

    @property
    def fallback_rate(self) -> float:
        return self.fallback / self.placed if self.placed else 0.0

    @property
    def unschedulable_rate(self) -> float:
        return self.spilled / self.cohort if self.cohort else 0.0

    def document(self) -> dict[str, Any]:
        return {"placed": self.placed, "fallback": self.fallback, "cohort_pods": self.cohort,
                "spilled": self.spilled, "fallback_rate": round(self.fallback_rate, 4),
                "unschedulable_rate": round(self.unschedulable_rate, 4)}


@dataclass(frozen=True)
class Check:
    name: str
    canary: float | None
    stable: float | None
    allowed: float | None  # the increase allowed; None: the check is off
    passed: bool
    detail: str


@dataclass(frozen=True)
class Verdict:
    passed: bool
    checks: tuple[Check, ...]
    rates: Mapping[str, SetRates]
    since_t: float

    def reasons(self) -> list[str]:
        return [check.detail for check in self.checks if not check.passed]


def window_start(state: CanaryState, now_t: float) -> float:
    return max(state.stage_started_t, now_t - state.gate.window_s)


def rates(records: Iterable[Mapping[str, Any]], since_t: float,
          until_t: float) -> dict[str, SetRates]:
    counts = {name: [0, 0, 0, 0] for name in (STABLE, CANARY)}
    for record in records:
        node_set, cohort = record.get("node_set"), record.get("cohort")
        if record.get("kind") != "decision" or node_set not in counts:
            continue
        if not since_t <= float(record.get("t", 0.0)) <= until_t:
            continue
        counts[node_set][0] += 1
        counts[node_set][1] += record.get("source") == "fallback"
        if cohort in counts:
            counts[cohort][2] += 1
            counts[cohort][3] += cohort != node_set
    return {name: SetRates(*values) for name, values in counts.items()}


def judge(state: CanaryState, window: Mapping[str, SetRates],
          regret: Mapping[str, float] | None, since_t: float) -> Verdict:
    gate, canary, stable = state.gate, window[CANARY], window[STABLE]
    checks = [_evidence(gate, canary),
              _increase("fallback rate", canary.fallback_rate, stable.fallback_rate,
                        gate.max_fallback_increase),
              _increase("unschedulable rate", canary.unschedulable_rate,
                        stable.unschedulable_rate, gate.max_unschedulable_increase),
              _regret(gate, regret, state)]
    return Verdict(all(check.passed for check in checks), tuple(checks), dict(window), since_t)


def _evidence(gate: Gate, canary: SetRates) -> Check:
    enough = canary.placed >= gate.min_decisions
    return Check("canary decisions", float(canary.placed), None, float(gate.min_decisions),
                 enough, f"canary decisions: {canary.placed} in the window, "
                         f"{'at least' if enough else 'fewer than'} the {gate.min_decisions} "
                         "needed")


def _increase(name: str, canary: float, stable: float, allowed: float) -> Check:
    increase = canary - stable
    passed = increase <= allowed + 1e-12
    return Check(name, canary, stable, allowed, passed,
                 f"{name}: canary {canary:.2%}, stable {stable:.2%}, increase {increase:+.2%}"
                 f" ({'within' if passed else 'above'} the {allowed:.2%} allowed)")


def _regret(gate: Gate, regret: Mapping[str, float] | None, state: CanaryState) -> Check:
    allowed = gate.max_regret_increase
    if allowed is None:
        return Check("shadow regret", None, None, None, True, "shadow regret: gate off")
    if regret is None or state.canary not in regret or state.stable not in regret:
        return Check("shadow regret", None, None, allowed, False,
                     "shadow regret: not measured (give --shadow-journal, a journal of "
                     "`serve scheduler --shadow`, or plan with --no-regret-gate)")
    canary, stable = regret[state.canary], regret[state.stable]
    return _increase("shadow regret", canary, stable, allowed)
