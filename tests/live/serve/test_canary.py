"""`dagpilot ops canary` on the real sandbox: plan makes topology stages from the kwok nodes'
zone and rack labels; `serve scheduler` then serves two versions, each on its node set (the
pods of the canary's cohort land on canary nodes, decided by the canary version, as their
`dagpilot.io/decision` annotation says; the others on stable nodes by the stable version);
advance widens the set once the gate passes on the journal; abort returns every node to the
stable version, picked up without a restart."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dagpilot import cli
from dagpilot.core.label_selector import parse
from dagpilot.ops.canary_plan import live_cluster
from dagpilot.registry import publish
from dagpilot.registry.canary import node_labels, read_canary
from dagpilot.sandbox.state import SandboxState
from dagpilot.serve.explanation import DECISION_ANNOTATION
from dagpilot.serve.model_by_node import cohort_point
from tests.live.kube import admin, items, namespace, wait_for
from tests.live.serve.scheduler_env import MODELS, all_bound, config, create_pods, pod, running

pytestmark = pytest.mark.live

Run = Callable[..., tuple[int, str]]


@pytest.fixture
def dagpilot(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    def run(*args: str) -> tuple[int, str]:
        monkeypatch.setattr(sys, "argv", ["dagpilot", *args])
        try:
            cli.main()
            code = 0
        except SystemExit as stop:
            code = int(stop.code or 0)
        captured = capsys.readouterr()
        return code, captured.out + captured.err
    return run


def share_and_nodes(sandbox: SandboxState, selector: str) -> tuple[float, set[str]]:
    cluster = live_cluster(Path(sandbox.kubeconfig))
    chosen = parse(selector)
    inside = [s for s in cluster.nodes if chosen.matches(node_labels(s))]
    total = sum(s.allocatable.cpu for s in cluster.nodes)
    return sum(s.allocatable.cpu for s in inside) / total, {s.name for s in inside}


def names(ns: str, share: float, canary: bool, count: int, prefix: str) -> list[str]:
    """Pod names whose single-pod workflows (job id ns/name) hash into the cohort."""
    found = [f"{prefix}-{i}" for i in range(2000)
             if (cohort_point(f"{ns}/{prefix}-{i}") < share) == canary]
    return found[:count]


def decisions(api: Any, ns: str, wanted: list[str]) -> dict[str, tuple[str, str | None]]:
    pods = {p["metadata"]["name"]: p for p in items(api, f"/api/v1/namespaces/{ns}/pods")}
    return {name: (pods[name]["spec"]["nodeName"],
                   json.loads(pods[name]["metadata"]["annotations"][DECISION_ANNOTATION])["model"])
            for name in wanted}


def test_two_versions_serve_by_node_set_advance_widens_and_abort_returns_all_to_stable(
        sandbox: SandboxState, tmp_path: Path, dagpilot: Run) -> None:
    api = admin(sandbox)
    root = tmp_path / "models"
    publish(root, "stable", (MODELS / "current").resolve())
    publish(root, "canary", (MODELS / "current").resolve(), activate=False)
    journal = tmp_path / "journal.jsonl"
    code, text = dagpilot("ops", "canary", "plan", "--models", str(root), "--model", "canary",
                          "--kubeconfig", sandbox.kubeconfig, "--racks", "1",
                          "--min-decisions", "3", "--no-regret-gate")
    assert code == 0, text
    state = read_canary(root)
    assert state is not None and [s.nodes for s in state.stages] == [8, 24, 48], text
    with namespace(api, "canary") as ns, running(config(sandbox, models=root,
                                                        journal=journal)) as process:
        share, canary_nodes = share_and_nodes(sandbox, state.stages[0].selector)
        ours, theirs = (names(ns, share, True, 4, "s1"), names(ns, share, False, 4, "s1"))
        create_pods(api, ns, [pod(name) for name in ours + theirs])
        all_bound(api, ns, 8)
        placed = decisions(api, ns, ours + theirs)
        assert all(node in canary_nodes and model == "canary"
                   for node, model in (placed[n] for n in ours)), placed
        assert all(node not in canary_nodes and model == "stable"
                   for node, model in (placed[n] for n in theirs)), placed

        code, text = dagpilot("ops", "canary", "advance", "--models", str(root),
                              "--journal", str(journal))
        assert code == 0 and "stage 2 of 3: 24 nodes" in text, text
        assert process.canary is not None
        wait_for("the scheduler at stage 2", lambda: (
            (plan := process.canary.plan()) is not None and plan.stage == 1), 30)  # type: ignore[union-attr]
        share, zone_a = share_and_nodes(sandbox, read_canary(root).stages[1].selector)  # type: ignore[union-attr]
        wider = names(ns, share, True, 4, "s2")
        create_pods(api, ns, [pod(name) for name in wider])
        all_bound(api, ns, 12)
        assert all(node in zone_a and model == "canary"
                   for node, model in decisions(api, ns, wider).values())

        code, text = dagpilot("ops", "canary", "status", "--models", str(root),
                              "--journal", str(journal), "--kubeconfig", sandbox.kubeconfig,
                              "--json")
        assert code == 0, text
        status = json.loads(text)
        assert status["stage"] == 1 and status["stages"][1]["nodes_now"] == 24
        assert status["window"]["canary"]["placed"] >= 4

        code, text = dagpilot("ops", "canary", "abort", "--models", str(root))
        assert code == 0 and "aborted" in text, text
        wait_for("the scheduler back to one version", lambda: process.canary.plan() is None,  # type: ignore[union-attr]
                 30)
        after = names(ns, share, True, 4, "s3")  # the canary's cohort, were it still active
        create_pods(api, ns, [pod(name) for name in after])
        all_bound(api, ns, 16)
        assert {model for _, model in decisions(api, ns, after).values()} == {"stable"}
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    sets = {r["pod"].split("/")[1]: r.get("node_set") for r in records if r["kind"] == "decision"}
    assert all(sets[name] == "canary" for name in ours + wider)
    assert all(sets[name] == "stable" for name in theirs)
    assert all(sets[name] is None for name in after)
