"""`shadow report` on a hand-made journal: agreement over the pods whose outcome is known, by
who decided; the recorded jobs replayed in the simulator under kube-default and dagpilot."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dagpilot.clusters import load_cluster
from dagpilot.core.errors import InvalidInput
from dagpilot.journal import Journal
from dagpilot.live.inventory import node_manifest
from dagpilot.live.workflow_manifest import workflow_manifest
from dagpilot.serve.shadow_report import report
from tests.serve.test_model_reload import SHIPPED
from tests.sim.helpers import job, task
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]


def journal(path: Path, *, with_cluster: bool = True) -> Path:
    written = Journal(path)
    if with_cluster:
        written.write("shadow_cluster", {"nodes": [node_manifest(spec) for spec in
                                                   load_cluster("builtin:small").nodes]})
    for number, arrival in enumerate((1000.0, 1030.0)):
        manifest = workflow_manifest(job(f"j{number}", task("a", 60.0, cpu=2.0),
                                         task("b", 30.0, cpu=1.0, parents=("a",))),
                                     name=f"j{number}")
        manifest["metadata"]["creationTimestamp"] = f"2026-12-01T00:{arrival // 60:02.0f}:" \
                                                    f"{arrival % 60:02.0f}Z"
        written.write("shadow_job", {"job": f"j{number}", "arrival_s": arrival,
                                     "workflow": manifest})
    for uid, source, agree in (("u1", "model", True), ("u2", "model", False),
                               ("u3", "fallback", True), ("u4", "model", None)):
        written.write("shadow", {"uid": uid, "source": source, "node": "node-0000"})
        if agree is not None:
            written.write("shadow_outcome", {"uid": uid, "agree": agree})
    written.close()
    return path


def test_agreement_and_the_simulated_jct_difference(tmp_path: Path) -> None:
    document = report(journal(tmp_path / "j.jsonl"), SHIPPED)
    assert (document["shadowed"], document["with_outcome"], document["agreed"]) == (4, 3, 2)
    assert document["agreement"] == pytest.approx(2 / 3)
    assert document["by_source"] == {"fallback": {"with_outcome": 1, "agreed": 1},
                                     "model": {"with_outcome": 2, "agreed": 1}}
    estimate = document["estimate"]
    assert document["jobs"] == 2 and estimate["nodes"] == 6
    assert estimate["kube_default_mean_jct_s"] >= 90.0  # at least the critical path
    assert estimate["dagpilot_mean_jct_s"] >= 90.0
    assert math.isclose(estimate["difference_s"], estimate["dagpilot_mean_jct_s"]
                        - estimate["kube_default_mean_jct_s"])


def test_without_a_recorded_cluster_the_report_asks_for_one(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="--cluster"):
        report(journal(tmp_path / "j.jsonl", with_cluster=False), SHIPPED)
    document = report(tmp_path / "j.jsonl", SHIPPED, load_cluster("builtin:small"))
    assert document["estimate"]["cluster"] == "small"
