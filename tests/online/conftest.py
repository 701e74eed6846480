"""A real registry in a temp dir holding the shipped model (models/current) as `base`."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.registry import publish

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "models" / "current"


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    root = tmp_path / "models"
    publish(root, "base", SHIPPED.resolve())
    return root
