"""A registry with two published versions, v1 then v2 (current)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.registry import publish
from tests.registry.builders import model_folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    models = tmp_path / "models"
    publish(models, "v1", model_folder(tmp_path / "src1", 1))
    publish(models, "v2", model_folder(tmp_path / "src2", 2, normaliser="npz"))
    return models
