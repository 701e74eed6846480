"""The validator on hostile YAML: a kind that is a list, a document too large to parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading import limits
from dagpilot.core.reading.yaml_documents import read_yaml_documents
from dagpilot.workloads import validate as validator


def test_a_kind_that_is_a_list_is_an_unknown_format_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text("apiVersion: argoproj.io/v1alpha1\nkind: [Workflow]\nmetadata: {name: x}\n")
    report = validator.validate_paths([path])
    assert report.exit_code == 1
    assert [v.rule for v in report.violations] == ["format.unknown"]


def test_yaml_past_its_cap_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"a: " + b"x" * (limits.MAX_YAML_BYTES + 1) + b"\n")
    with pytest.raises(InvalidInput, match="MiB"):
        read_yaml_documents(path)
