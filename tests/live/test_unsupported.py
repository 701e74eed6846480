"""The required placement rules dagpilot's filters do not implement are found; their preferred
forms and everything else are not."""

from __future__ import annotations

from typing import Any

import pytest

from dagpilot.live.unsupported import unsupported_rule

TERM = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}


@pytest.mark.parametrize(("spec", "named"), [
    ({"affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [TERM]}}},
     "required pod anti-affinity (spec.affinity.podAntiAffinity)"),
    ({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [TERM]}}},
     "required pod affinity (spec.affinity.podAffinity)"),
    ({"topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
     "spec.topologySpreadConstraints[1]"),
    ({"initContainers": [{"name": "i"}], "containers": [
        {"name": "a", "ports": [{"containerPort": 80}]},
        {"name": "b", "ports": [{"containerPort": 80, "hostPort": 8080}]}]},
     "a host port (spec.containers[1].ports)"),
    ({"initContainers": [{"name": "i", "ports": [{"hostPort": 9}]}]},
     "spec.initContainers[0].ports"),
])
def test_a_required_rule_dagpilot_cannot_honour_is_named(spec: dict[str, Any],
                                                         named: str) -> None:
    message = unsupported_rule(spec)
    assert message is not None and named in message
    assert "schedulerName default-scheduler" in message


@pytest.mark.parametrize("spec", [
    {},
    {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": TERM}]}}},
    {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}}},
    {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}},
    {"topologySpreadConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"}]},
    {"containers": [{"name": "a", "ports": [{"containerPort": 80, "hostPort": 0}]}]},
    {"affinity": "nonsense", "topologySpreadConstraints": "x", "containers": [7, {"ports": 3}]},
])
def test_preferences_and_what_the_filters_cover_are_not_refused(spec: dict[str, Any]) -> None:
    assert unsupported_rule(spec) is None
