"""The closed loop on the real sandbox: a Workflow submitted through the signed endpoint is
mutated by the webhook (the API server's own mTLS call), every pod is bound by `dagpilot serve
scheduler` with its decision annotation, the twin runs them, and Argo's controller finishes
the Workflow."""

from __future__ import annotations

import json
import time
from typing import Any

import yaml

from dagpilot.sandbox.state import SandboxState
from dagpilot.serve.explanation import DECISION_ANNOTATION
from tests.live import kube
from tests.live.serve.conftest import WebhookEnv
from tests.live.serve.scheduler_env import config, events, running
from tests.live.serve.test_signed_submissions import timed_workflow, unique, workflow


def test_a_signed_workflow_is_mutated_scheduled_by_dagpilot_and_succeeds(
        sandbox: SandboxState, webhook_env: WebhookEnv) -> None:
    env = webhook_env
    with running(config(sandbox)):
        body = unique(yaml.safe_dump(timed_workflow()).encode())
        status, answer = env.client().submit(body, env.signer.sign(body, time.time()))
        assert status == 201, answer
        created = workflow(env, answer["name"])
        assert created["spec"]["schedulerName"] == "dagpilot"  # the webhook's mutation

        def succeeded() -> dict[str, Any] | None:
            item = workflow(env, answer["name"])
            phase = (item.get("status") or {}).get("phase")
            assert phase not in ("Failed", "Error"), item.get("status")
            return item if phase == "Succeeded" else None

        kube.wait_for("the signed Workflow to succeed under dagpilot", succeeded, 180, 0.5)
    pods = [p for p in kube.items(env.api, f"/api/v1/namespaces/{env.namespace}/pods")
            if p["metadata"]["labels"].get("workflows.argoproj.io/workflow") == answer["name"]]
    assert len(pods) == 2
    for pod in pods:
        assert pod["spec"]["schedulerName"] == "dagpilot" and pod["spec"]["nodeName"]
        decision = json.loads(pod["metadata"]["annotations"][DECISION_ANNOTATION])
        assert decision["node"] == pod["spec"]["nodeName"]
    scheduled = {e["involvedObject"]["name"] for e in events(env.api, env.namespace,
                                                            "Scheduled")}
    assert {p["metadata"]["name"] for p in pods} <= scheduled
