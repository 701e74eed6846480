"""`dagpilot models publish|verify|list|rollback` through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dagpilot.cli import app
from dagpilot.core.errors import SpecError
from dagpilot.registry import RegistryError, publish, read_current
from dagpilot.registry.errors import SchemaMismatch
from dagpilot.state import FEATURE_SCHEMA_VERSION
from tests.registry.builders import flip_byte, model_folder


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["models", *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_publish_then_list_then_verify(tmp_path: Path) -> None:
    root = str(tmp_path / "models")
    code, output = invoke("publish", str(model_folder(tmp_path / "a", 1)), "--root", root,
                          "--version", "v1", "--set", "seed=11", "--set", "commit=0123456789abcdef")
    assert code == 0, output
    assert "published v1 (#1)" in output and "now current" in output
    code, output = invoke("publish", str(model_folder(tmp_path / "b", 2)), "--root", root,
                          "--version", "v2", "--no-activate")
    assert code == 0 and "not current" in output
    code, output = invoke("list", "--root", root, "--json")
    listed = json.loads(output)
    assert [(row["version"], row["current"]) for row in listed] == [("v1", True), ("v2", False)]
    assert listed[0]["metadata"]["seed"] == 11  # JSON values are parsed
    assert listed[0]["metadata"]["commit"] == "0123456789abcdef"  # others stay text
    assert listed[0]["feature_schema_version"] == 3
    code, output = invoke("list", "--root", root)
    assert code == 0
    assert "v1" in output and "v2" in output and "*" in output and "0123456789ab" in output
    code, output = invoke("verify", "--root", root)
    assert code == 0, output
    assert "OK" in output and "2 version(s)" in output and "current: v1" in output


def test_verify_names_a_file_that_fails_its_line(root: Path) -> None:
    flip_byte(root / "v1" / "config.json", offset=2)
    code, output = invoke("verify", "--root", str(root))
    assert code == 1
    assert "FAILED" in output and "v1/config.json" in output and "checksum mismatch" in output
    assert "1 problem(s)" in output


def test_verify_fails_without_sha256sums(root: Path) -> None:
    (root / "SHA256SUMS").unlink()
    code, output = invoke("verify", "--root", str(root))
    assert code == 1
    assert "SHA256SUMS" in output and "missing" in output


def test_verify_fails_on_a_folder_that_is_not_a_registry(tmp_path: Path) -> None:
    code, output = invoke("verify", "--root", str(tmp_path / "nowhere"))
    assert code == 1 and "no registry here" in output


def served(tmp_path: Path, *schemas: int) -> Path:
    """A registry of versions v1, v2, ... saved under these feature schemas; the last current."""
    root = tmp_path / "served"
    for index, schema in enumerate(schemas, start=1):
        publish(root, f"v{index}", model_folder(tmp_path / f"src{index}", index, schema=schema))
    return root


def test_rollback_and_rollback_to(tmp_path: Path) -> None:
    root = served(tmp_path, FEATURE_SCHEMA_VERSION, FEATURE_SCHEMA_VERSION)
    code, output = invoke("rollback", "--root", str(root))
    assert code == 0 and "current: v2 -> v1" in output
    code, output = invoke("rollback", "--root", str(root), "--to", "v2")
    assert code == 0 and "current: v1 -> v2" in output
    assert read_current(root) == "v2"


def test_rollback_refuses_a_version_this_dagpilot_cannot_serve(tmp_path: Path) -> None:
    root = served(tmp_path, FEATURE_SCHEMA_VERSION - 1, FEATURE_SCHEMA_VERSION)
    with pytest.raises(SchemaMismatch, match="refusing to serve it"):
        invoke("rollback", "--root", str(root))
    assert read_current(root) == "v2"  # still serving the one it can


def test_refusals_are_dagpilot_errors_for_the_one_line_handler(root: Path,
                                                               tmp_path: Path) -> None:
    """main() turns these into one red line and exit status 2."""
    with pytest.raises(RegistryError, match=r"already published"):
        invoke("publish", str(model_folder(tmp_path / "again", 5)), "--root", str(root),
               "--version", "v1")
    with pytest.raises(SpecError, match=r"--set takes KEY=VALUE"):
        invoke("publish", str(tmp_path / "again"), "--root", str(root), "--version", "v5",
               "--set", "seed")


def test_names_and_metadata_cannot_write_to_the_terminal(root: Path) -> None:
    """A file name or a metadata value with an escape sequence is printed escaped."""
    (root / "v1" / "\x1b]0;owned\x07notes").write_text("x")
    code, output = invoke("verify", "--root", str(root))
    assert code == 1 and "\x1b" not in output and "\\x1b]0;owned\\x07notes" in output
    publish(root, "v3", model_folder(root.parent / "src3", 3), {"seed": "\x1b[2J7",
                                                                "commit": "\x1b[31m" * 50})
    code, output = invoke("list", "--root", str(root))
    assert code == 0 and "\x1b" not in output and "\\x1b[2J7" in output
