"""Rollback: publish order, a named target, verification first, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.core.errors import IntegrityError
from dagpilot.registry import (
    RegistryError,
    SchemaMismatch,
    Switch,
    load_current,
    publish,
    read_current,
    rollback,
)
from tests.registry.builders import SCHEMA, flip_byte, model_folder


def test_rollback_steps_back_in_publish_order(root: Path, tmp_path: Path) -> None:
    publish(root, "v3", model_folder(tmp_path / "src3", 3))
    assert rollback(root) == Switch(previous="v3", current="v2")
    assert rollback(root) == Switch(previous="v2", current="v1")
    assert load_current(root, SCHEMA).version == "v1"


def test_the_first_version_has_nothing_before_it(root: Path) -> None:
    rollback(root)
    with pytest.raises(RegistryError, match=r"v1 is the first version published"):
        rollback(root)
    assert read_current(root) == "v1"


def test_rollback_to_a_named_version_also_goes_forward(root: Path) -> None:
    rollback(root, "v1")
    assert rollback(root, to="v2") == Switch(previous="v1", current="v2")


def test_named_targets_must_exist_and_differ(root: Path) -> None:
    with pytest.raises(RegistryError, match=r"v2 is already current"):
        rollback(root, "v2")
    with pytest.raises(RegistryError, match=r"no such version"):
        rollback(root, "v9")
    with pytest.raises(RegistryError, match=r"bad version name"):
        rollback(root, "../v1")


@pytest.mark.parametrize("name", ["weights.pt", "config.json"])
def test_a_corrupt_target_is_refused_and_current_stays(root: Path, name: str) -> None:
    flip_byte(root / "v1" / name, offset=5)
    with pytest.raises(IntegrityError, match=r"checksum mismatch") as caught:
        rollback(root)
    assert caught.value.file == str(root / "v1" / name)
    assert read_current(root) == "v2"


def test_a_target_of_another_schema_is_refused_when_one_is_expected(root: Path,
                                                                    tmp_path: Path) -> None:
    publish(root, "v3", model_folder(tmp_path / "src3", 3, schema=SCHEMA + 1))
    with pytest.raises(SchemaMismatch):
        rollback(root, feature_schema_version=SCHEMA + 1)
    assert read_current(root) == "v3"
    assert rollback(root).current == "v2"  # without an expectation: its own schema


def test_nothing_current_needs_a_named_target(tmp_path: Path) -> None:
    root = tmp_path / "models"
    publish(root, "v1", model_folder(tmp_path / "src", 1), activate=False)
    with pytest.raises(RegistryError, match=r"no version is current"):
        rollback(root)
    assert rollback(root, "v1") == Switch(previous=None, current="v1")


def test_a_missing_registry_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match=r"no registry here"):
        rollback(tmp_path / "nowhere")
