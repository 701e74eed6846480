"""openb node inventories and pod lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.workloads.validation.inventory import node_violations, pod_violations

HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"


def nodes(tmp_path: Path, rows: str, name: str = "nodes.csv") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + rows)
    return path


@pytest.mark.parametrize(("rows", "expected"), [
    ("n0,32000,1024,0,\n", []),
    ("n0,0,1024,0,\n", [("line 2", "field.capacity")]),
    ("n0,32000,,0,\n", [("line 2", "field.capacity")]),
    ("n0,32000,1024,-1,\n", [("line 2", "field.capacity")]),
    ("n0,32000,1024,2,\n", [("line 2", "field.capacity")]),  # GPUs without a model
    ("n0,32000,1024,0,\nn0,64000,1024,0,\n", [("line 2", "inventory.duplicate"),
                                              ("line 3", "inventory.duplicate")]),
])
def test_node_rules(tmp_path: Path, rows: str, expected: list[tuple[str, str]]) -> None:
    assert [(v.record, v.rule) for v in node_violations(nodes(tmp_path, rows), [])] == expected


def test_a_missing_column_is_invalid_input(tmp_path: Path) -> None:
    path = tmp_path / "nodes.csv"
    path.write_text("sn,cpu_milli,gpu\nn0,1,0\n")
    with pytest.raises(InvalidInput) as caught:
        node_violations(path, [])
    assert (caught.value.record, caught.value.field) == ("line 1", "memory_mib")


@pytest.mark.parametrize(("row", "expected"), [
    # name, cpu_milli, memory_mib, num_gpu, creation_time, deletion_time
    ("p,1000,1024,0,10,20", []),
    ("p,-1000,1024,0,10,20", ["field.requests"]),
    ("p,1000,,0,10,20", ["field.requests"]),
    ("p,1000,1024,0,10,5", ["field.runtime"]),  # deleted before it was created
    ("p,64000,1024,0,10,20", ["resource.node-capacity"]),  # more CPUs than any node
    ("p,32000,1024,1,10,20", ["resource.node-capacity"]),  # no node has both
])
def test_pod_rules(tmp_path: Path, row: str, expected: list[str]) -> None:
    inventory = nodes(tmp_path, "big,32000,4096,0,\ngpu,8000,4096,1,T4\n")
    pods = tmp_path / "pods.csv"
    pods.write_text(f"name,cpu_milli,memory_mib,num_gpu,creation_time,deletion_time\n{row}\n")
    assert [v.rule for v in pod_violations(pods, [inventory])] == expected
