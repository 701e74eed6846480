"""deploy/scheduler-extender: the shipped KubeSchedulerConfiguration's extender entry, and the
extender's read-only RBAC, read as shipped (the live test runs kube-scheduler with the entry:
tests/live/serve/test_extender_live.py)."""

from __future__ import annotations

from typing import Any

import yaml

from dagpilot.serve.extender_app import FILTER_PATH, PRIORITIZE_PATH
from dagpilot.serve.extender_process import SCHEDULER_CLIENT
from tests.conftest import REPO
from tests.deploy.manifests import DEPLOY, named, render


def scheduler_config() -> dict[str, Any]:
    config_map = named(render(), "ConfigMap", "dagpilot-scheduler-extender-config")
    document = yaml.safe_load(config_map["data"]["scheduler-config.yaml"])
    assert isinstance(document, dict)
    return document


def test_the_extender_entry_has_every_setting_the_issue_asks() -> None:
    config = scheduler_config()
    assert config["kind"] == "KubeSchedulerConfiguration"
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert config["percentageOfNodesToScore"] == 100
    assert [p["schedulerName"] for p in config["profiles"]] == ["dagpilot-extender"]
    [entry] = config["extenders"]
    assert entry["urlPrefix"].startswith("https://")
    assert "/" + entry["filterVerb"] == FILTER_PATH
    assert "/" + entry["prioritizeVerb"] == PRIORITIZE_PATH
    assert entry["enableHTTPS"] is True and entry["ignorable"] is True
    assert entry["nodeCacheCapable"] is True
    assert set(entry["tlsConfig"]) == {"certFile", "keyFile", "caFile"}
    assert entry["httpTimeout"] == "1s"


def test_the_weight_is_the_documented_one_and_outweighs_the_plugins() -> None:
    weight = scheduler_config()["extenders"][0]["weight"]
    default_plugin_weights = 3 + 2 + 2 + 2 + 1 + 1 + 1 + 1  # kube-scheduler v1 defaults
    assert weight * 10 > default_plugin_weights * 100
    serving = (REPO / "docs" / "SERVING.md").read_text()
    assert f"weight {weight}" in serving


def test_the_extender_only_reads() -> None:
    objects = render(DEPLOY / "scheduler-extender")
    role = named(objects, "ClusterRole", "dagpilot-extender")
    assert {verb for rule in role["rules"] for verb in rule["verbs"]} == {"get", "list", "watch"}
    assert {r for rule in role["rules"] for r in rule["resources"]} == {
        "nodes", "pods", "workflows"}
    binding = named(objects, "ClusterRoleBinding", "dagpilot-extender")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "dagpilot-extender",
                                    "namespace": "dagpilot"}]
    deployment = named(objects, "Deployment", "dagpilot-extender")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"][:2] == ["serve", "extender"]
    assert f"--allowed-subject={SCHEDULER_CLIENT}" in container["args"]
    assert set(container["resources"]) == {"requests", "limits"}
    assert container["resources"]["requests"] == container["resources"]["limits"]  # Guaranteed
    assert container["resources"]["limits"]["cpu"] == "1"
