"""ModelHandle: a failed reload keeps the previous model in service."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.core.errors import IntegrityError
from dagpilot.registry import ModelHandle, ReloadOutcome, publish, rollback
from tests.registry.builders import SCHEMA, flip_byte, model_folder


def test_reload_follows_a_new_current(root: Path, tmp_path: Path) -> None:
    handle = ModelHandle.open(root, SCHEMA)
    assert handle.model.version == "v2"
    assert handle.reload() == ReloadOutcome(serving="v2", changed=False)
    publish(root, "v3", model_folder(tmp_path / "src3", 3))
    assert handle.reload() == ReloadOutcome(serving="v3", changed=True)
    assert handle.model.config["index"] == 3


def test_a_corrupt_new_current_keeps_the_old_model(root: Path) -> None:
    handle = ModelHandle.open(root, SCHEMA)
    serving = handle.model
    rollback(root)  # current -> v1, verified
    flip_byte(root / "v1" / "normaliser.json", offset=3)  # then damaged on disk
    outcome = handle.reload()
    assert outcome.serving == "v2" and not outcome.changed
    assert outcome.error is not None
    assert str(root / "v1" / "normaliser.json") in outcome.error
    assert "checksum mismatch" in outcome.error
    assert handle.model is serving


def test_a_wrong_schema_or_missing_current_keeps_the_old_model(root: Path,
                                                                tmp_path: Path) -> None:
    handle = ModelHandle.open(root, SCHEMA)
    publish(root, "v3", model_folder(tmp_path / "src3", 3, schema=SCHEMA + 1))
    outcome = handle.reload()
    assert outcome.error is not None and "feature schema version 4" in outcome.error
    (root / "current").unlink()
    outcome = handle.reload()
    assert outcome.error is not None and "no version is in service" in outcome.error
    assert handle.model.version == "v2"


def test_opening_without_a_loadable_current_raises(root: Path) -> None:
    (root / "SHA256SUMS").unlink()
    with pytest.raises(IntegrityError, match=r"SHA256SUMS: missing"):
        ModelHandle.open(root, SCHEMA)
