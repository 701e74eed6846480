"""A Job rendered as an Argo Workflow reads back through the Argo loader as the same DAG."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dagpilot.core.config import LoaderSettings
from dagpilot.core.types import Task
from dagpilot.live.workflow_manifest import argo_name, workflow_manifest
from dagpilot.workloads import argo, load


@pytest.mark.parametrize("index", [0, 2, 7])
def test_the_mix_reads_back_through_the_argo_loader(tmp_path: Path, index: int) -> None:
    job = load("builtin:mix")[index]
    manifest = workflow_manifest(job, time_scale=2.0)
    path = tmp_path / "wf.yaml"
    path.write_text(yaml.safe_dump(manifest))
    (draft,) = argo.read(str(path), LoaderSettings())
    back = draft.build() if hasattr(draft, "build") else draft
    # Argo runs each item of a withSequence as a node of its own: "scan-0(3)".
    groups: dict[str, list[Task]] = {}
    for seen in back.tasks:
        groups.setdefault(seen.id.split("(")[0], []).append(seen)
    assert set(groups) == {argo_name(t.id) for t in job.tasks}
    for task in job.tasks:
        items = groups[argo_name(task.id)]
        assert len(items) == task.instances
        for seen in items:
            assert (seen.requests.cpu, seen.requests.memory) == (task.requests.cpu,
                                                                task.requests.memory)
            assert {p.split("(")[0] for p in seen.parents} == {argo_name(p)
                                                              for p in task.parents}
            assert seen.runtime_s == pytest.approx(task.runtime_s / 2.0, rel=1e-5)


def test_names_become_dns_labels_and_never_the_entrypoint() -> None:
    assert argo_name("Join_1") == "join-1"
    assert argo_name("__") == "task"
    job = load("builtin:mix")[0]
    names = [t["name"] for t in workflow_manifest(job)["spec"]["templates"]]
    assert len(names) == len(set(names))
