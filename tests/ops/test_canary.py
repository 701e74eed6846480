"""`ops canary`: stages from node labels (zone, then rack, never a traffic share), each
widening the one before; a plan refuses what the registry does not vouch for; the gate
refuses on each of its figures and on too little evidence; advance moves one stage, then
promotes; abort ends it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dagpilot.clusters import load_cluster
from dagpilot.core.errors import SpecError
from dagpilot.ops import canary_actions
from dagpilot.ops.canary_gate import SetRates, judge, rates
from dagpilot.ops.canary_plan import default_stages, plan, stages
from dagpilot.registry import read_current
from dagpilot.registry.canary import ABORTED, PROMOTED, Gate, read_canary, write_canary
from dagpilot.registry.errors import RegistryError
from tests.canary_registry import stable_and_canary

SHIPPED = Path(__file__).resolve().parents[2] / "models" / "current"
CLUSTER = load_cluster("builtin:default")  # 48 nodes, racks 0-2 in zone-a, 3-5 in zone-b
GATE = Gate(window_s=600.0, min_decisions=4, max_fallback_increase=0.1,
            max_unschedulable_increase=0.1, max_regret_increase=0.02)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return stable_and_canary(tmp_path)


def test_default_stages_widen_by_rack_then_zone_then_everything() -> None:
    found = stages(CLUSTER, default_stages(CLUSTER, racks=1))
    assert [s.nodes for s in found] == [8, 24, 48]
    assert found[0].selector == ("topology.kubernetes.io/zone=zone-a,"
                                 "topology.dagpilot.io/rack=rack-0")
    assert found[1].selector == "topology.kubernetes.io/zone=zone-a" and found[2].selector == ""
    # zone-a has three racks: its first three are the zone, and the repeated stage is dropped
    assert [s.nodes for s in stages(CLUSTER, default_stages(CLUSTER))] == [24, 48]


def test_a_stage_that_takes_nodes_back_is_refused() -> None:
    with pytest.raises(SpecError, match="leaves out nodes"):
        stages(CLUSTER, ["zone=zone-a", "zone=zone-b"])
    with pytest.raises(SpecError, match="matches no node"):
        stages(CLUSTER, ["zone=zone-x"])


def test_plan_refuses_the_current_an_unverified_or_a_second_version(root: Path) -> None:
    with pytest.raises(RegistryError, match="current already"):
        plan(root, CLUSTER, "stable", texts=None, gate=GATE, now_t=0.0)
    (root / "canary" / "config.json").write_text("{}")
    with pytest.raises(RegistryError, match="does not verify"):
        plan(root, CLUSTER, "canary", texts=None, gate=GATE, now_t=0.0)


def test_a_second_plan_is_refused_while_one_is_active(root: Path) -> None:
    write_canary(root, plan(root, CLUSTER, "canary", texts=None, gate=GATE, now_t=0.0), None)
    with pytest.raises(RegistryError, match="is active"):
        plan(root, CLUSTER, "canary", texts=None, gate=GATE, now_t=0.0)


def decision(t: float, node_set: str, cohort: str, source: str = "model") -> dict[str, Any]:
    return {"kind": "decision", "t": t, "node_set": node_set, "cohort": cohort,
            "source": source}


def test_rates_count_per_node_set_within_the_window_only() -> None:
    records = [decision(10, "canary", "canary"), decision(11, "canary", "canary", "fallback"),
               decision(12, "stable", "canary"), decision(13, "stable", "stable"),
               decision(5, "canary", "canary", "fallback"),  # before the window
               {"kind": "decision", "t": 12, "source": "fallback"}]  # no canary active
    window = rates(records, 10.0, 20.0)
    assert window["canary"] == SetRates(placed=2, fallback=1, cohort=3, spilled=1)
    assert window["stable"] == SetRates(placed=2, fallback=0, cohort=1, spilled=0)
    assert window["canary"].fallback_rate == 0.5
    assert window["canary"].unschedulable_rate == pytest.approx(1 / 3)


def test_the_gate_fails_on_each_figure_and_on_too_little_evidence(root: Path) -> None:
    state = plan(root, CLUSTER, "canary", texts=None, gate=GATE, now_t=0.0)
    good = {"canary": SetRates(10, 0, 10, 0), "stable": SetRates(10, 0, 10, 0)}
    regret = {"stable": 0.01, "canary": 0.02}
    assert judge(state, good, regret, 0.0).passed
    cases = {"canary decisions": {**good, "canary": SetRates(3, 0, 3, 0)},
             "fallback rate": {**good, "canary": SetRates(10, 2, 10, 0)},
             "unschedulable rate": {**good, "canary": SetRates(10, 0, 10, 2)}}
    for name, window in cases.items():
        verdict = judge(state, window, regret, 0.0)
        assert not verdict.passed and [c.name for c in verdict.checks if not c.passed] == [name]
    worse = judge(state, good, {"stable": 0.01, "canary": 0.04}, 0.0)
    assert [c.name for c in worse.checks if not c.passed] == ["shadow regret"]
    unmeasured = judge(state, good, None, 0.0)
    assert "not measured" in unmeasured.reasons()[0]


def test_advance_moves_one_stage_then_promotes_and_abort_ends_it(root: Path) -> None:
    gate = Gate(window_s=600.0, min_decisions=2, max_regret_increase=None)
    texts = ["zone=zone-a,rack=rack-0", "zone=zone-a"]
    write_canary(root, plan(root, CLUSTER, "canary", texts=texts, gate=gate, now_t=100.0), None)
    refused = canary_actions.advance(root, [decision(101, "canary", "canary")], None, 110.0)
    assert not refused.verdict.passed and read_canary(root).stage == 0  # type: ignore[union-attr]
    evidence = [decision(t, "canary", "canary") for t in (101, 102)]
    step = canary_actions.advance(root, evidence, None, 110.0)
    assert step.verdict.passed and step.state.stage == 1 and step.state.stage_started_t == 110.0
    # the window starts with the stage: the evidence of stage 1 does not count for stage 2
    assert not canary_actions.advance(root, evidence, None, 120.0).verdict.passed
    later = [decision(t, "canary", "canary") for t in (111, 112)]
    done = canary_actions.advance(root, later, None, 120.0)
    assert done.promoted and done.state.status == PROMOTED and read_current(root) == "canary"
    with pytest.raises(RegistryError, match="not active"):
        canary_actions.abort(root, 130.0, "too late")


def test_abort_returns_every_node_to_stable(root: Path) -> None:
    write_canary(root, plan(root, CLUSTER, "canary", texts=None, gate=GATE, now_t=0.0), None)
    ended = canary_actions.abort(root, 5.0, "fallbacks")
    assert ended.status == ABORTED and read_current(root) == "stable"
    assert [h["action"] for h in ended.history] == ["plan", "abort"]
    assert canary_actions.status(root, CLUSTER, [], 6.0)["stages"][0]["nodes_now"] == 24
