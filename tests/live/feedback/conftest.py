"""Task feedback against real processes in real cgroups (the node agent's fixtures), with the
eBPF objects built by the project's own build step (make -C ebpf) into a folder of the test's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ..node_agent.conftest import KubeCgroups, kube_cgroups  # noqa: F401 (the fixture)

EBPF_SOURCES = Path(__file__).resolve().parents[3] / "ebpf"

__all__ = ["KubeCgroups", "ebpf_build"]


@pytest.fixture(scope="session")
def ebpf_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The objects and the loader, built as setup builds them."""
    build = tmp_path_factory.mktemp("ebpf-build")
    done = subprocess.run(["make", "-s", "-C", str(EBPF_SOURCES), f"BUILD={build}"],
                          capture_output=True, text=True, timeout=300, check=False)
    if done.returncode:
        pytest.fail(f"make -C ebpf failed (clang, bpftool, libbpf-dev: dev.sh installs them):\n"
                    f"{done.stderr[-2000:]}")
    return build
