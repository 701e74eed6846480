"""deploy/webhook: what the issue and an SRE require of the shipped objects, read as shipped
(the server-side dry run is tests/live/serve/test_deploy_dry_run.py)."""

from __future__ import annotations

from tests.deploy.manifests import CLUSTER_SCOPED, DEPLOY, PLURALS, named, render


def test_every_object_is_namespaced_in_dagpilot_or_cluster_scoped() -> None:
    objects = render()
    assert named(objects, "Namespace", "dagpilot")["metadata"]["labels"] == {
        "dagpilot.io/managed": "true"}
    for item in objects:
        assert item["kind"] in PLURALS, f"tests/deploy/manifests.py: no plural for {item['kind']}"
        namespace = item["metadata"].get("namespace")
        assert (namespace is None) == (item["kind"] in CLUSTER_SCOPED), item["metadata"]


def test_the_webhook_configuration_has_the_required_settings() -> None:
    config = named(render(), "MutatingWebhookConfiguration", "dagpilot-workflows")
    [webhook] = config["webhooks"]
    assert webhook["failurePolicy"] == "Ignore"
    assert webhook["timeoutSeconds"] == 5
    assert webhook["sideEffects"] == "None"
    assert webhook["admissionReviewVersions"] == ["v1"]
    assert webhook["namespaceSelector"] == {"matchLabels": {"dagpilot.io/managed": "true"}}
    [rule] = webhook["rules"]
    assert (rule["apiGroups"], rule["resources"], rule["operations"]) == (
        ["argoproj.io"], ["workflows"], ["CREATE"])
    assert webhook["clientConfig"]["service"] == {"namespace": "dagpilot",
                                                  "name": "dagpilot-webhook",
                                                  "path": "/mutate", "port": 443}


def test_the_webhook_may_create_get_and_update_workflows_in_its_namespace_only() -> None:
    objects = render(DEPLOY / "webhook")
    role = named(objects, "Role", "dagpilot-webhook")
    assert role["rules"] == [{"apiGroups": ["argoproj.io"], "resources": ["workflows"],
                              "verbs": ["create", "get", "update"]}]
    binding = named(objects, "RoleBinding", "dagpilot-webhook")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "dagpilot-webhook",
                                    "namespace": "dagpilot"}]
    assert not [o for o in objects if o["kind"] in ("ClusterRole", "ClusterRoleBinding")]
    deployment = named(objects, "Deployment", "dagpilot-webhook")
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "dagpilot-webhook"


def test_the_policy_admits_new_workflows_in_managed_namespaces_only_from_the_submitter() -> None:
    objects = render()
    policy = named(objects, "ValidatingAdmissionPolicy", "dagpilot-signed-workflows")
    assert policy["spec"]["failurePolicy"] == "Fail"
    assert policy["spec"]["matchConstraints"]["namespaceSelector"] == {
        "matchLabels": {"dagpilot.io/managed": "true"}}
    submitter = {v["name"]: v["expression"] for v in policy["spec"]["variables"]}["submitter"]
    assert submitter == "'system:serviceaccount:' + request.namespace + ':dagpilot-webhook'"
    binding = named(objects, "ValidatingAdmissionPolicyBinding", "dagpilot-signed-workflows")
    assert binding["spec"] == {"policyName": "dagpilot-signed-workflows",
                               "validationActions": ["Deny"]}
