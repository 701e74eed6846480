"""Hostile and careless values in cluster files: non-finite and huge figures, counts beyond their
ceilings, unhashable or odd types, Unicode digits, CSV shapes, terminal escapes in names.

Regression tests of issue 14, defects 1, 3 and 13: each is a clear InvalidInput (or SpecError)
naming file, record and field, checked before anything is built from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dagpilot.cli import app
from dagpilot.clusters import alibaba_gpu, cws_cluster, load_cluster, yaml_file
from dagpilot.clusters.node_conventions import MAX_NODE_GPUS, MAX_NODES
from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput, SpecError

SETTINGS = LoaderSettings()
BASE = {"name": "g", "count": "2", "cpu": "4", "memory": "8Gi"}


def group_yaml(key: str, value: str) -> str:
    """A one-group cluster whose group has `key: value` (YAML text) over BASE."""
    fields = {**BASE, key: value}
    return "node_groups:\n  - {" + ", ".join(f"{k}: {v}" for k, v in fields.items()) + "}\n"


@pytest.mark.parametrize(("key", "value", "field", "message"), [
    ("cpu", ".inf", "cpu", "finite"),
    ("cpu", ".nan", "cpu", "finite"),
    ("cpu", "1e300", "cpu", "beyond the limit"),
    ("cpu", "'1e999'", "cpu", "finite"),
    ("memory", ".inf", "memory", "finite"),
    ("memory", "1e300", "memory", "beyond the limit"),
    ("memory_bandwidth", "1e300", "memory_bandwidth", "beyond the limit"),
    ("cpu_speed", "1e9", "cpu_speed", "beyond the limit"),
    ("disk", "{bandwidth: .inf}", "disk.bandwidth", "finite"),
    ("disk", "{iops: 1e300}", "disk.iops", "beyond the limit"),
    ("gpus", "{model: A100, count: 1000000000}", "gpus.count", "beyond the limit"),
    ("gpus", "{model: A100, count: 8, root_complexes: 1000000000}", "gpus.root_complexes",
     "beyond the limit"),
    ("gpus", "{model: A100, count: 8, root_complexes: [" + "0, " * 100 + "8]}",
     "gpus.root_complexes", "beyond the limit"),
    ("gpus", "{model: A100, count: 8, root_complexes: [9, -1]}", "gpus.root_complexes",
     "below the minimum"),
    ("disk", "{kind: [nvme]}", "disk.kind", "expected one of"),
    ("taints", "[{key: k, effect: [NoSchedule]}]", "taints[0].effect", "expected one of"),
])
def test_node_figures(tmp_path: Path, key: str, value: str, field: str, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(group_yaml(key, value))
    with pytest.raises(InvalidInput, match=message) as caught:
        yaml_file.read(str(path), SETTINGS)
    assert (caught.value.record, caught.value.field) == ("node_groups[0] (g)", field)


@pytest.mark.parametrize(("text", "field"), [
    ("node_groups:\n  - {name: g, count: 1000000000, cpu: 4, memory: 8Gi}\n", "count"),
    ("node_groups:\n  - {name: g, count: .inf, cpu: 4, memory: 8Gi}\n", "count"),
    (f"node_groups:\n  - {{name: a, count: {MAX_NODES}, cpu: 4, memory: 8Gi}}\n"
     "  - {name: g, count: 1, cpu: 4, memory: 8Gi}\n", "count"),
])
def test_node_counts_are_checked_before_nodes_are_made(tmp_path: Path, text: str,
                                                       field: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(InvalidInput) as caught:
        yaml_file.read(str(path), SETTINGS)
    assert caught.value.field == field
    assert caught.value.record.endswith("(g)")


def test_node_labels_that_are_no_mapping(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("node_groups:\n  - {name: g, cpu: 4, memory: 8Gi, labels: [a],"
                    " nodes: [{name: n}]}\n")
    with pytest.raises(InvalidInput, match="mapping") as caught:
        yaml_file.read(str(path), SETTINGS)
    assert caught.value.field == "labels"


def test_the_largest_gpu_node_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(group_yaml("gpus", f"{{model: A100, count: {MAX_NODE_GPUS}}}"))
    assert yaml_file.read(str(path), SETTINGS).nodes[0].allocatable.gpus == MAX_NODE_GPUS


# --- alibaba-gpu ---------------------------------------------------------------------------

NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"


@pytest.mark.parametrize(("rows", "record", "field"), [
    ("n0,32000,131072,0,\nn1,9000000000000000000,131072,0,\n", "line 3", "cpu_milli"),
    ("n0,32000,131072,0,\nn1,32000,99999999999999,0,\n", "line 3", "memory_mib"),
    ("n0,32000,131072,1000000,T4\n", "line 2", "gpu"),
    ("n0,32000,131072,0,\nn1,32000\n", "line 3", "memory_mib"),
])
def test_alibaba_gpu_figures_and_rows(tmp_path: Path, rows: str, record: str,
                                      field: str) -> None:
    path = tmp_path / "nodes.csv"
    path.write_text(NODE_HEADER + rows)
    with pytest.raises(InvalidInput) as caught:
        alibaba_gpu.read(str(path), SETTINGS)
    assert (caught.value.record, caught.value.field) == (record, field)


def test_alibaba_gpu_duplicated_column(tmp_path: Path) -> None:
    path = tmp_path / "nodes.csv"
    path.write_text("sn,cpu_milli,memory_mib,gpu,model,gpu\nn0,32000,131072,0,,8\n")
    with pytest.raises(InvalidInput) as caught:
        alibaba_gpu.read(str(path), SETTINGS)
    assert (caught.value.record, caught.value.field) == ("header (line 1)", "gpu")


@pytest.mark.parametrize("tail", ["²", "٣", "1_0"])
def test_alibaba_gpu_sample_sizes_are_ascii_digits(fixtures: Path, tail: str) -> None:
    # not a sample size, so part of the path, which names no file: no int() of "²"
    nodes = fixtures / "clusters" / "alibaba-gpu" / "nodes.csv"
    with pytest.raises(InvalidInput):
        load_cluster(f"alibaba-gpu:{nodes}:{tail}", SETTINGS)


# --- cws cluster.json and built-in specs ---------------------------------------------------

@pytest.mark.parametrize(("cpu", "ram", "field"), [
    ("Infinity", "1", "cpu"), ("NaN", "1", "cpu"), ("1e400", "1", "cpu"),
    ("1" + "0" * 400, "1", "cpu"), ("4", "1" + "0" * 400, "ram_bytes"),
    ("4", "1e300", "ram_bytes"), ("true", "1", "cpu"), ("0", "1", "cpu"),
])
def test_cws_cluster_figures(tmp_path: Path, cpu: str, ram: str, field: str) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(f'{{"worker_nodes": [{{"name": "w", "cpu": {cpu}, "ram_bytes": {ram}}}]}}')
    with pytest.raises(InvalidInput) as caught:
        cws_cluster.read(str(path), SETTINGS)
    assert (caught.value.record, caught.value.field) == ("worker_nodes[0]", field)


@pytest.mark.parametrize("spec", ["builtin:scale-²", "builtin:scale-٣", "builtin:scale- 4",
                                  "builtin:scale-" + "9" * 5000])
def test_builtin_scale_counts_are_ascii_digits(spec: str) -> None:
    with pytest.raises(SpecError, match="scale-N") as caught:
        load_cluster(spec, SETTINGS)
    assert len(str(caught.value)) < 400


# --- what `clusters show` and `workloads show` echo ----------------------------------------

def test_clusters_show_prints_no_terminal_escapes(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(json.dumps({"name": "evil\x1b]0;pwned\x07\x1b[2J", "node_groups": [
        {"name": "g", "count": 1, "cpu": 4, "memory": "8Gi",
         "gpus": {"model": "T4\x1b[31m", "count": 1}}]}))
    result = CliRunner().invoke(app, ["clusters", "show", f"yaml:{path}"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "evil\\x1b" in result.output


def test_workloads_show_prints_no_terminal_escapes(tmp_path: Path, fixtures: Path) -> None:
    path = tmp_path / "w\x1b[2J.json"
    path.write_bytes((fixtures / "validate" / "wf_valid.json").read_bytes())
    result = CliRunner().invoke(app, ["workloads", "show", f"wfformat:{path}"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
