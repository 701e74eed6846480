"""Shared test fixtures: where the real traces and the hand-written fixtures live."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
# The real public traces sit beside the repository (../shared/traces), for developers and CI alike.
TRACES = REPO.parent / "shared" / "traces"


@pytest.fixture(scope="session")
def traces() -> Path:
    assert TRACES.is_dir(), f"the shared traces are missing: expected {TRACES}"
    return TRACES


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES
