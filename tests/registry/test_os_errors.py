"""OS errors are one `error:` line and exit status 2, never a traceback, and a refused publish
leaves nothing half-written (issue 14, defect 9).

Permission failures are real ones: the command runs in a subprocess as root without the
capabilities that let root ignore mode bits (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, dropped
with util-linux `setpriv`), so a 0555 folder refuses writes and a 0000 folder refuses reads.
Where that cannot be arranged (not root, no setpriv) those tests skip; the rest run in
process through `dagpilot.cli.main`, the entry point that prints `error:`.
"""

from __future__ import annotations

import functools
import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagpilot.cli import main
from dagpilot.core.errors import IntegrityError
from dagpilot.registry import Problem, publish, read_current, verify
from dagpilot.state import FEATURE_SCHEMA_VERSION
from tests.registry.builders import model_folder

WITHOUT_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search",
               "--bounding-set=-dac_override,-dac_read_search", "--"]
TIMEOUT_S = 300  # a hang guard: a command that blocked would fail here, not hang CI
verify_module = importlib.import_module("dagpilot.registry.verify")  # not the function


@functools.cache
def mode_bits_bind_root() -> bool:
    """Whether a command run under WITHOUT_DAC is refused by a read-only folder."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    probe = Path(f"/tmp/dagpilot-dac-probe-{os.getpid()}")
    probe.mkdir(mode=0o555)
    try:
        result = subprocess.run([*WITHOUT_DAC, "touch", str(probe / "x")], capture_output=True,
                                check=False, timeout=TIMEOUT_S)
        return result.returncode != 0 and not (probe / "x").exists()
    finally:
        (probe / "x").unlink(missing_ok=True)
        probe.rmdir()


needs_mode_bits = pytest.mark.skipif("not mode_bits_bind_root()",
                                     reason="needs root and setpriv to make mode bits bind")


def unprivileged(*args: str) -> subprocess.CompletedProcess[str]:
    """`dagpilot models ARGS` in a subprocess for which mode bits bind."""
    return subprocess.run([*WITHOUT_DAC, sys.executable, "-m", "dagpilot.cli", "models", *args],
                          capture_output=True, text=True, check=False, timeout=TIMEOUT_S)


@pytest.fixture
def schema_root(tmp_path: Path) -> Iterator[Path]:
    """v1 then v2 (current), both of the schema this dagpilot serves, so rollback can run;
    mode bits are restored afterwards so that pytest can clean up."""
    root = tmp_path / "served"
    for index in (1, 2):
        publish(root, f"v{index}", model_folder(tmp_path / f"src{index}", index,
                                                schema=FEATURE_SCHEMA_VERSION))
    yield root
    for path in (root, *root.iterdir()):
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry under ROOT: a file's bytes, a link's target, a folder's mark."""
    entries: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        entries[name] = (os.readlink(path) if path.is_symlink() else
                         "<folder>" if path.is_dir() else path.read_bytes())
    return entries


def refused_cleanly(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr


@needs_mode_bits
def test_publish_without_write_permission(schema_root: Path, tmp_path: Path) -> None:
    source = model_folder(tmp_path / "src3", 3, schema=FEATURE_SCHEMA_VERSION)
    before = snapshot(schema_root)
    schema_root.chmod(0o555)
    result = unprivileged("publish", str(source), "--root", str(schema_root), "--version", "v3")
    refused_cleanly(result, f"{schema_root}/.publish-v3: cannot publish: Permission denied")
    assert snapshot(schema_root) == before


@needs_mode_bits
def test_rollback_without_write_permission(schema_root: Path) -> None:
    schema_root.chmod(0o555)
    result = unprivileged("rollback", "--root", str(schema_root))
    refused_cleanly(result, f"{schema_root}/.current.tmp: cannot roll back: Permission denied")
    assert read_current(schema_root) == "v2"


@needs_mode_bits
def test_verify_on_an_unreadable_version_folder(schema_root: Path) -> None:
    (schema_root / "v1").chmod(0)
    result = unprivileged("verify", "--root", str(schema_root))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"FAILED {schema_root}/v1: cannot be read: Permission denied" in result.stdout
    assert result.stderr.startswith(f"error: {schema_root}: ") and \
        "could not be checked" in result.stderr


def run_main(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
             *args: str) -> tuple[int, str]:
    """`dagpilot models ARGS` through main(): its exit status and stderr."""
    monkeypatch.setattr(sys, "argv", ["dagpilot", "models", *args])
    with pytest.raises(SystemExit) as exited:  # anything else would be a traceback
        main()
    return int(exited.value.code or 0), capsys.readouterr().err


def test_publish_when_current_is_a_folder_stores_nothing(
        schema_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`current` could not be swapped, so the version is refused before it is stored (it
    was stored and listed, but never current)."""
    (schema_root / "current").unlink()
    (schema_root / "current").mkdir()
    before = snapshot(schema_root)
    source = model_folder(tmp_path / "src3", 3)
    with pytest.raises(IntegrityError, match=r"current: not a symlink"):
        publish(schema_root, "v3", source)
    assert snapshot(schema_root) == before
    code, stderr = run_main(capsys, monkeypatch, "publish", str(source), "--root",
                            str(schema_root), "--version", "v3")
    assert code == 2 and stderr.startswith("error: ") and "current: not a symlink" in stderr
    assert snapshot(schema_root) == before


def test_publish_into_proc(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    source = model_folder(tmp_path / "src", 1)
    code, stderr = run_main(capsys, monkeypatch, "publish", str(source), "--root",
                            "/proc/dagpilot-models", "--version", "v1")
    assert code == 2
    assert stderr.startswith("error: /proc/dagpilot-models: cannot publish: ")


@pytest.mark.parametrize(("value", "message"), [
    ("[" * 100_000, "'--set x=...': VALUE nests too deep or holds a number too long"),
    ("7" * 5000, "'--set x=...': VALUE nests too deep or holds a number too long"),
    ("[" * 40 + "]" * 40, "metadata cannot be stored: nested deeper than 32 levels"),
])
def test_publish_with_a_metadata_value_beyond_the_limits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        value: str, message: str) -> None:
    source = model_folder(tmp_path / "src", 1)
    root = tmp_path / "models"
    code, stderr = run_main(capsys, monkeypatch, "publish", str(source), "--root", str(root),
                            "--version", "v1", "--set", f"x={value}")
    assert code == 2 and stderr.startswith("error: ") and message in stderr, stderr
    assert len(stderr) < 300  # the value is not echoed back
    assert not root.exists()


def test_verify_of_a_root_that_cannot_be_opened(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock's open of the root, failing as it does without read permission."""
    def refused(root: Path, *, exclusive: bool) -> None:
        raise PermissionError(13, "Permission denied", str(root))

    monkeypatch.setattr(verify_module, "locked", refused)
    (tmp_path / "models").mkdir()
    assert verify(tmp_path / "models") == [
        Problem(str(tmp_path / "models"), "cannot be read: Permission denied", cannot_check=True)]
