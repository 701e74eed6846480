"""Running a check where file permissions apply, and folders it cannot read.

Tests run as root here, and root reads whatever the mode says (chmod 000 stops nobody). So a
"cannot read" test runs its code in a child process that drops to the `nobody` user once it has
imported dagpilot (the interpreter's own files may not be readable by nobody). When the tests
do not run as root, the child simply runs as the same user, for whom chmod 000 is enough.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

NOBODY = 65534
DEADLINE_S = 300  # a guard against a hang, not a timing assertion


def run_unprivileged(code: str, preload: str = "dagpilot.cli") -> subprocess.CompletedProcess[str]:
    """`code` run by a Python child without root's power over file modes, once the modules
    `preload` names (comma-separated) are imported."""
    drop = f"os.setgid({NOBODY}); os.setuid({NOBODY})\n" if os.geteuid() == 0 else ""
    prelude = f"import os, sys\nimport {preload}\n" + drop
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                          text=True, timeout=DEADLINE_S, cwd=REPO, check=False)


def run_cli_unprivileged(*arguments: str) -> subprocess.CompletedProcess[str]:
    """`dagpilot ARGUMENTS` run as `run_unprivileged` says (exit status and output kept)."""
    return run_unprivileged(f"sys.argv = ['dagpilot', *{list(arguments)!r}]\n"
                            "dagpilot.cli.main()\n")


@pytest.fixture
def open_tree() -> Iterator[Path]:
    """A folder everybody may enter (pytest's tmp_path is root's alone), removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="dagpilot-perm-"))
    root.chmod(0o755)
    yield root
    for folder, subfolders, _ in os.walk(root):
        for name in subfolders:
            (Path(folder) / name).chmod(0o755)  # what the test locked, so it can be removed
    shutil.rmtree(root)


def lock(path: Path) -> Path:
    """`path` with no permission for anyone but root."""
    path.chmod(0)
    return path
