"""Shadow mode on the sandbox: dagpilot decides for another scheduler's pods and binds none;
each decision and, once the other scheduler binds the pod, its outcome reach the journal, and
`shadow report` counts the agreement. `place` with the live state prints a Workflow the API
server accepts (server-side dry run)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from dagpilot.journal import read
from dagpilot.sandbox import rest
from dagpilot.sandbox.state import SandboxState
from dagpilot.serve.explanation import DECISION_ANNOTATION
from dagpilot.serve.place import live_cluster, place
from dagpilot.serve.shadow import ShadowLoop
from dagpilot.serve.shadow_regret import regrets
from dagpilot.serve.shadow_report import report
from tests.live.kube import WORKFLOWS, admin, items, namespace, wait_for
from tests.live.serve.scheduler_env import MODELS, all_bound, config, create_pods, pod, running

pytestmark = pytest.mark.live

OTHER = "dagpilot-test-other"  # the shadowed scheduler: the test binds its pods
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "serve" / "etl-workflow.yaml"


def _schema(version: Path) -> int:
    return int(json.loads((version / "config.json").read_text())["feature_schema_version"])


def _records(journal: Path, kind: str) -> list[dict[str, Any]]:
    if not journal.exists():
        return []
    return [r for r in read(journal).records if r["kind"] == kind]


def test_shadow_mode_journals_what_dagpilot_would_do_and_binds_nothing(
        sandbox: SandboxState, tmp_path: Path) -> None:
    api = admin(sandbox)
    journal = tmp_path / "shadow.jsonl"
    settings = config(sandbox, shadow=True, shadow_of=OTHER, journal=journal)
    with namespace(api, "sched-shadow") as ns, running(settings) as process:
        assert isinstance(process.loop, ShadowLoop) and process.binder is None
        create_pods(api, ns, [pod(f"s{i}", scheduler=OTHER) for i in range(4)])
        shadows = wait_for("4 shadow decisions", lambda: (
            found if len(found := _records(journal, "shadow")) == 4 else None), 30)
        chosen = {r["pod"].split("/", 1)[1]: r["node"] for r in shadows}
        assert all(r["source"] == "model" and r["node"] and r["explanation"]["top"]
                   for r in shadows)
        others = [n["metadata"]["name"] for n in items(api, "/api/v1/nodes")]
        for index, (name, node) in enumerate(sorted(chosen.items())):
            target = node if index < 2 else next(o for o in others if o != node)
            rest.create(api, f"/api/v1/namespaces/{ns}/pods/{name}/binding", {
                "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                "target": {"apiVersion": "v1", "kind": "Node", "name": target}})
        bound = all_bound(api, ns, 4)
        wait_for("4 shadow outcomes", lambda: len(_records(journal, "shadow_outcome")) == 4, 30)
        assert not any(DECISION_ANNOTATION in (p["metadata"].get("annotations") or {})
                       for p in bound)
    document = report(journal, MODELS)
    assert (document["with_outcome"], document["agreed"]) == (4, 2)
    assert document["jobs"] == 4 and document["estimate"]["nodes"] == len(others)
    # the canary gate's shadow regret on this real journal: the serving version's agrees with
    # the report's estimate (the same replays), another version's comes from its own model
    estimate = document["estimate"]
    serving = (MODELS / "current").resolve().name  # the version `report` replays
    other = next(v.name for v in sorted(MODELS.iterdir()) if v.is_dir() and v.name != serving
                 and _schema(v) == _schema(MODELS / serving))  # another servable version
    found = regrets(journal, MODELS, (serving, other))
    assert set(found) == {serving, other} and all(math.isfinite(v) for v in found.values())
    assert found[serving] == pytest.approx(
        estimate["dagpilot_mean_jct_s"] / estimate["kube_default_mean_jct_s"] - 1.0)


def test_place_on_the_live_state_prints_a_workflow_the_api_server_accepts(
        sandbox: SandboxState) -> None:
    api = admin(sandbox)
    cluster = live_cluster(Path(sandbox.kubeconfig))
    placed = yaml.safe_load(place(FIXTURE, cluster, MODELS))
    plan = json.loads(placed["metadata"]["annotations"][DECISION_ANNOTATION])["plan"]
    assert set(plan) == {"extract", "transform", "load"}
    assert all(set(nodes) <= {spec.name for spec in cluster.nodes} for nodes in plan.values())
    with namespace(api, "sched-place") as ns:
        reply = rest.request(api, "POST", f"{WORKFLOWS.format(ns=ns)}?dryRun=All", placed)
        assert reply.status == 201, reply.body[:500]
        assert items(api, WORKFLOWS.format(ns=ns)) == []  # a dry run creates nothing
