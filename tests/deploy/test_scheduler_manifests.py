"""deploy/scheduler as shipped: least-privilege RBAC (exactly what the scheduler calls), the
Lease Role limited to its one name, a Deployment of two replicas, Guaranteed with one CPU, whose
arguments the CLI takes (tests/live/serve/test_scheduler_rbac.py runs the scheduler on this
RBAC; test_deploy_dry_run.py passes every object through the API server)."""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from dagpilot.cli import app
from tests.deploy.manifests import named, render

VERBS_BY_RESOURCE = {
    ("", "nodes"): {"get", "list", "watch"},
    ("", "pods"): {"get", "list", "watch"},
    ("", "pods/binding"): {"create"},
    ("", "pods/status"): {"patch"},
    ("", "events"): {"create"},
    ("argoproj.io", "workflows"): {"get", "list", "watch"},
}


def _grants(rules: list[dict[str, Any]]) -> dict[tuple[str, str], set[str]]:
    granted: dict[tuple[str, str], set[str]] = {}
    for rule in rules:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                granted.setdefault((group, resource), set()).update(rule["verbs"])
    return granted


def test_the_cluster_role_grants_exactly_what_the_scheduler_calls() -> None:
    role = named(render(), "ClusterRole", "dagpilot-scheduler")
    assert _grants(role["rules"]) == VERBS_BY_RESOURCE
    assert not any("*" in str(rule) for rule in role["rules"])


def test_the_lease_role_is_namespaced_and_names_its_one_lease() -> None:
    role = named(render(), "Role", "dagpilot-scheduler-lease")
    assert role["metadata"]["namespace"] == "dagpilot"
    by_verbs = {tuple(rule["verbs"]): rule for rule in role["rules"]}
    assert by_verbs[("get", "update")]["resourceNames"] == ["dagpilot-scheduler"]
    assert "resourceNames" not in by_verbs[("create",)]  # create cannot name its object


def test_the_deployment_has_two_replicas_with_requests_limits_and_valid_arguments() -> None:
    deployment = named(render(), "Deployment", "dagpilot-scheduler")
    assert deployment["spec"]["replicas"] == 2
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    resources = container["resources"]
    assert set(resources["requests"]) == set(resources["limits"]) == {"cpu", "memory"}
    assert resources["requests"] == resources["limits"]  # Guaranteed: a CPU of its own
    assert resources["limits"]["cpu"] == "1"  # (docs/SERVING.md, "Give it one CPU")
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "dagpilot-scheduler"
    assert container["args"][:2] == ["serve", "scheduler"]
    assert "--lease-namespace=dagpilot" in container["args"]
    help_text = CliRunner().invoke(app, ["serve", "scheduler", "--help"],
                                   terminal_width=200).output
    for argument in container["args"][2:]:
        assert argument.split("=", 1)[0] in help_text
