"""Hostile and careless files through every loader: a clear error naming the file, never a
traceback, a hang or memory without bound (issue 14, defects 2, 3 and 9)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dagpilot import cli
from dagpilot.clusters import cws_cluster, yaml_file
from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput, Unreadable
from dagpilot.workloads import load
from tests.core.reading import laughs
from tests.unprivileged import lock, open_tree, run_cli_unprivileged

__all__ = ["open_tree"]  # a fixture the tests below use

SETTINGS = LoaderSettings()
DEEP = 2_000  # past json's own recursion limit (about 1,000)
LONG = "9" * 5_000  # past Python's 4,300-digit int conversion limit
TOO_DEEP = "nested deeper than the limit of 100 levels"
TOO_LONG = "a number too long to read (integers are limited to 4300 digits)"


def deep_list() -> Any:
    value: Any = []
    for _ in range(DEEP):
        value = [value]
    return value


def nested_text() -> str:
    return "[" * DEEP + "]" * DEEP


def refused(spec: str) -> InvalidInput:
    with pytest.raises(InvalidInput) as caught:
        load(spec, SETTINGS)
    return caught.value


# --- JSON: every reader -------------------------------------------------------------------

def _wfformat(folder: Path, inner: str) -> tuple[str, Path]:
    path = folder / "w.json"
    path.write_text('{"schemaVersion": "1.5", "workflow": {"specification": ' + inner + "}}")
    return f"wfformat:{path}", path


def _tpch(folder: Path, inner: str) -> tuple[str, Path]:
    path = folder / "tpch.json"
    path.write_text('{"2g": {"q1": {"stages": ' + inner + "}}}")
    return f"tpch:{path}", path


def _argo_digest(folder: Path, inner: str) -> tuple[str, Path]:
    path = folder / "argo_example_dags.json"
    path.write_text('{"workflows": [{"file": "x.yaml", "templates": ' + inner + "}]}")
    return f"argo:{path}", path


def _cws_process_dag(folder: Path, inner: str, fixtures: Path) -> tuple[str, Path]:
    shutil.copytree(fixtures / "cws", folder / "cws")
    path = folder / "cws" / "process_dags" / "toy.json"
    path.write_text('{"processes": ["A"], "process_edges": ' + inner + "}")
    return f"cws:{folder / 'cws'}", path


JSON_READERS: dict[str, Callable[..., tuple[str, Path]]] = {
    "wfformat": _wfformat, "tpch": _tpch, "argo digest": _argo_digest,
    "cws process DAG": _cws_process_dag}


@pytest.mark.parametrize("reader", JSON_READERS)
@pytest.mark.parametrize(("inner", "message"), [(nested_text(), TOO_DEEP),
                                                ("[" + LONG + "]", TOO_LONG)])
def test_json_beyond_the_limits_is_invalid_input(tmp_path: Path, fixtures: Path, reader: str,
                                                 inner: str, message: str) -> None:
    make = JSON_READERS[reader]
    spec, path = make(tmp_path, inner, fixtures) if reader == "cws process DAG" else make(
        tmp_path, inner)
    error = refused(spec)
    assert (error.file, error.message) == (str(path), message)


def test_a_cws_cluster_file_beyond_the_limits_is_invalid_input(tmp_path: Path) -> None:
    path = tmp_path / "cluster.json"
    path.write_text('{"worker_nodes": ' + nested_text() + "}")
    with pytest.raises(InvalidInput, match=TOO_DEEP):
        cws_cluster.read(str(tmp_path), SETTINGS)


def _argo_with_param(tmp_path: Path, param: str) -> Path:
    document = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
                "metadata": {"name": "w"}, "spec": {"entrypoint": "main", "templates": [
                    {"name": "main", "dag": {"tasks": [
                        {"name": "A", "template": "work", "withParam": param}]}},
                    {"name": "work", "container": {"image": "alpine"}}]}}
    path = tmp_path / "w.yaml"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(("param", "message"), [(nested_text(), TOO_DEEP),
                                                ("[1, " + LONG + "]", TOO_LONG)])
def test_a_with_param_literal_beyond_the_limits_names_its_task(tmp_path: Path, param: str,
                                                               message: str) -> None:
    path = _argo_with_param(tmp_path, param)
    error = refused(f"argo:{path}")
    assert (error.file, error.record, error.field, error.message) == (
        str(path), "document 1, template 'main', task 'A'", "withParam", message)


def test_a_with_param_expression_is_still_resolved_at_run_time(tmp_path: Path) -> None:
    path = _argo_with_param(tmp_path, "{{tasks.gen.outputs.result}}")
    [job] = load(f"argo:{path}", SETTINGS)
    assert len(job.tasks) == 1  # the template's default fan-out


# --- YAML: depth and aliases --------------------------------------------------------------

def test_argo_yaml_20000_deep_is_invalid_input(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("kind: Workflow\nspec: " + "[" * 20_000 + "]" * 20_000 + "\n")
    error = refused(f"argo:{path}")
    assert (error.file, error.message) == (str(path), TOO_DEEP)


def test_argo_billion_laughs_is_refused_before_it_expands(tmp_path: Path) -> None:
    path = tmp_path / "lol.yaml"
    path.write_text(laughs.argo_workflow())
    assert path.stat().st_size < 700
    error = refused(f"argo:{path}")
    assert error.file == str(path)
    assert error.message.startswith("aliases expand to more than the limit of 100000 nodes")


@pytest.mark.parametrize(("text", "message"), [
    (laughs.cluster(), "aliases expand to more than the limit of 100000 nodes (a YAML bomb?)"),
    ("name: c\nnode_groups: " + "[" * 20_000 + "]" * 20_000 + "\n", TOO_DEEP),
    ("name: c\nnode_groups:\n  - {name: cpu, count: " + LONG + "}\n", TOO_LONG),
])
def test_cluster_yaml_beyond_the_limits_is_invalid_input(tmp_path: Path, text: str,
                                                         message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(InvalidInput) as caught:
        yaml_file.read(str(path), SETTINGS)
    assert (caught.value.file, caught.value.message) == (str(path), message)


def test_a_cluster_file_of_two_documents_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("name: a\n---\nname: b\n")
    with pytest.raises(InvalidInput, match="holds one YAML document, this one 2"):
        yaml_file.read(str(path), SETTINGS)


# --- size ------------------------------------------------------------------------------

def test_a_gzip_bomb_stops_at_the_ratio_limit(tmp_path: Path) -> None:
    member = gzip.compress(bytes(2**20), compresslevel=9)  # 1 MiB of zeros in about 1 KiB
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(member * 300)  # 300 MiB from about 300 KiB: stopped at the 64 MiB floor
    error = refused(f"wfformat:{path}")
    assert (error.file, error.message) == (
        str(path), "decompresses to more than 64 MiB, 50 times its compressed size (a gzip "
        "bomb?)")


# --- what the OS refuses --------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "make"), [
    ("alibaba", lambda p: os.mkfifo(p / "x.csv")),
    ("alibaba", lambda p: (p / "x.csv").symlink_to("/dev/zero")),
    ("wfformat", lambda p: (p / "x.json").symlink_to("gone.json")),
    ("argo", lambda p: (p / "x.yaml").symlink_to("x.yaml")),
])
def test_a_folder_entry_that_is_not_a_regular_file_is_named(
        tmp_path: Path, kind: str, make: Callable[[Path], object]) -> None:
    make(tmp_path)
    with pytest.raises(Unreadable) as caught:
        load(f"{kind}:{tmp_path}", SETTINGS)
    assert caught.value.file == next(str(p) for p in tmp_path.iterdir())


def test_a_path_through_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    error = refused(f"wfformat:{tmp_path / 'plain' / 'w.json'}")
    assert error.message == "cannot read: Not a directory"


@pytest.mark.parametrize("kind", ["alibaba", "cws", "wfformat", "argo"])
def test_an_unreadable_folder_is_error_and_exit_2(open_tree: Path, fixtures: Path,
                                                  kind: str) -> None:
    if kind == "cws":
        shutil.copytree(fixtures / "cws", open_tree / "cws")
        locked = lock(open_tree / "cws" / "traces")
        argument = open_tree / "cws"
    else:
        argument = open_tree / "data"
        (argument / "sub").mkdir(parents=True)
        locked = lock(argument / "sub") if kind in ("wfformat", "argo") else lock(argument)
    child = run_cli_unprivileged("workloads", "show", f"{kind}:{argument}")
    assert child.returncode == 2, child.stderr
    assert child.stderr.strip() == f"error: {locked}: cannot list this folder: Permission denied"
    assert "Traceback" not in child.stderr


def test_an_unreadable_file_in_a_folder_is_error_and_exit_2(open_tree: Path) -> None:
    (open_tree / "x.csv").write_text("job_name,task_name\n")
    lock(open_tree / "x.csv")
    child = run_cli_unprivileged("workloads", "show", f"alibaba:{open_tree}")
    assert (child.returncode, child.stderr.strip()) == (
        2, f"error: {open_tree / 'x.csv'}: cannot read: Permission denied")


def test_any_other_os_error_is_error_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    def fail(*_: object) -> None:
        raise PermissionError(13, "Permission denied", "/var/lib/x")

    monkeypatch.setattr(cli, "load", fail)
    monkeypatch.setattr(sys, "argv", ["dagpilot", "workloads", "show", "builtin:mix"])
    with pytest.raises(SystemExit) as stopped:
        cli.main()
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip() == "error: /var/lib/x: Permission denied"
