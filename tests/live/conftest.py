"""One real sandbox for the whole live test run (tests/live runs serially: see dev.sh).

The session fixture builds the control-plane binaries when they are missing (a cold build
takes minutes), starts `builtin:default` once and stops it at the end, then checks that every
process it started is gone. Each test works in a namespace of its own and deletes it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagpilot.sandbox import launcher, process
from dagpilot.sandbox.state import SandboxState

SANDBOX_CLUSTER = "builtin:default"


@pytest.fixture(scope="session")
def sandbox_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sandbox")


@pytest.fixture(scope="session")
def sandbox(sandbox_dir: Path) -> Iterator[SandboxState]:
    twin = os.environ.get("DAGPILOT_TEST_TWIN", "on") == "on"
    state = launcher.up(SANDBOX_CLUSTER, sandbox_dir, twin=twin)
    try:
        yield state
    finally:
        launcher.down(sandbox_dir)
    left = [name for name, running in state.components.items() if process.alive(running)]
    assert not left, f"still running after down: {left}"
