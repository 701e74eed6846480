"""`dagpilot validate` never passes what it could not read, and reads each file once
(issue 14, defects 10 and 13): exit 0 all valid, 1 a violation, 2 something unread."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dagpilot.core.reading import folders
from dagpilot.workloads import validate as validate_module
from dagpilot.workloads.validate import Unread, report_json, validate_file, validate_paths
from tests.conftest import REPO
from tests.unprivileged import lock, open_tree, run_cli_unprivileged

__all__ = ["open_tree"]  # a fixture the tests below use

DEADLINE_S = 300  # a guard against a hang (a FIFO opened for reading), not a timing assertion


@pytest.fixture(scope="module")
def here(fixtures: Path) -> Path:
    return fixtures / "validate"


def dagpilot(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dagpilot.cli", *arguments], cwd=REPO,
                          capture_output=True, text=True, timeout=DEADLINE_S, check=False)


def test_an_empty_folder_is_not_valid(tmp_path: Path) -> None:
    report = validate_paths([tmp_path])
    assert report.unread == (Unread(str(tmp_path), "nothing to check: an empty folder"),)
    assert (report.valid, report.exit_code) == (False, 2)


def test_a_folder_of_documentation_only_is_not_valid(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# nothing here\n")
    report = validate_paths([tmp_path])
    assert [s.reason for s in report.skipped] == ["documentation"]
    assert report.unread == (Unread(str(tmp_path), "nothing to check: no data file, only "
                                                   "files skipped"),)


def test_links_fifos_and_devices_in_a_folder_are_reported(here: Path, tmp_path: Path) -> None:
    shutil.copy(here / "wf_valid.json", tmp_path / "ok.json")
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "gone.csv").symlink_to("nowhere.csv")
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to("..")
    (tmp_path / ".#ok.json").symlink_to("root@host.1234")  # an editor's lock: never read
    os.mkfifo(tmp_path / "NOTES.md")  # documentation: never read
    report = validate_paths([tmp_path])
    assert report.checked == (str(tmp_path / "ok.json"),)
    assert sorted((Path(u.file).relative_to(tmp_path).as_posix(), u.reason)
                  for u in report.unread) == [
        ("fifo.json", "not a regular file (a FIFO): not opened"),
        ("gone.csv", "broken symbolic link (to 'nowhere.csv')"),
        ("loop.yaml", "symbolic link loop (too many levels of symbolic links)"),
        ("sub/up", "symbolic link loop: leads back to a folder it is inside"),
        ("zero.json", "not a regular file (a character device): not opened")]
    assert report.violations == ()
    assert report.exit_code == 2


def test_unread_wins_over_invalid(here: Path, tmp_path: Path) -> None:
    report = validate_paths([here / "wf_cycle.json", tmp_path / "missing.json"])
    assert [v.rule for v in report.violations] == ["dag.cycle"]
    assert report.exit_code == 2
    assert report_json(report)["unread"] == [{"file": str(tmp_path / "missing.json"),
                                              "reason": "no such file or folder"}]


def test_a_folder_that_cannot_be_listed_is_reported(here: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(here / "wf_valid.json", tmp_path / "ok.json")
    (tmp_path / "locked").mkdir()
    listed = os.scandir

    def refuse_locked(path: Path) -> object:
        if Path(path).name == "locked":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return listed(path)

    monkeypatch.setattr(folders.os, "scandir", refuse_locked)
    report = validate_paths([tmp_path])
    assert report.unread == (Unread(str(tmp_path / "locked"),
                                    "cannot list this folder: Permission denied"),)
    assert report.checked == (str(tmp_path / "ok.json"),)


def test_unreadable_folders_and_files_exit_2_for_an_unprivileged_user(here: Path,
                                                                      open_tree: Path) -> None:
    shutil.copy(here / "wf_valid.json", open_tree / "ok.json")
    (open_tree / "locked").mkdir()
    shutil.copy(here / "wf_cycle.json", open_tree / "locked" / "bad.json")
    lock(open_tree / "locked")
    shutil.copy(here / "wf_valid.json", open_tree / "secret.json")
    lock(open_tree / "secret.json")
    child = run_cli_unprivileged("validate", str(open_tree))
    assert child.returncode == 2, child.stderr
    assert child.stdout.splitlines() == [
        f"{open_tree / 'locked'}: cannot check: cannot list this folder: Permission denied",
        f"{open_tree / 'secret.json'}: cannot check: cannot read: Permission denied",
        "1 files checked, 0 skipped, 0 violations, 2 could not be read"]


@pytest.mark.parametrize("make", [os.mkfifo, lambda p: p.symlink_to("/dev/zero")])
def test_a_fifo_or_device_named_on_the_command_line_exits_2_at_once(
        tmp_path: Path, make: Callable[[Path], object]) -> None:
    path = tmp_path / "x.json"
    make(path)
    child = dagpilot("validate", str(path))
    assert child.returncode == 2, child.stderr
    assert child.stdout.splitlines()[0].startswith(f"{path}: cannot check: not a regular file")


# --- one read per file ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["wf_valid.json", "cws/traces/tiny.csv",
                                  "alibaba/batch_task.csv", "inventory/pods.csv",
                                  "metrics/node_cpu_gap.csv"])
def test_each_file_is_opened_once(here: Path, name: str,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = here / name
    opened: list[str] = []
    real_open = os.open

    def counting_open(file: str | os.PathLike[str], flags: int, *rest: int) -> int:
        opened.append(os.path.abspath(file))
        return real_open(file, flags, *rest)

    monkeypatch.setattr(os, "open", counting_open)
    result = validate_file(path)
    assert result.unread is None
    assert opened.count(str(path)) == 1


def test_the_bytes_checked_are_the_bytes_parsed(here: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "w.json"
    shutil.copy(here / "wf_valid.json", path)
    real_read = os.read

    def swap_after_reading(descriptor: int, size: int) -> bytes:
        data = real_read(descriptor, size)
        shutil.copy(here / "wf_cycle.json", path)  # swapped once the validator has read it
        return data

    monkeypatch.setattr(os, "read", swap_after_reading)
    result = validate_file(path)
    assert (result.violations, result.unread) == ((), None)  # what was read, all of it
    monkeypatch.setattr(os, "read", real_read)
    assert [v.rule for v in validate_file(path).violations] == ["dag.cycle"]


def test_a_reader_never_runs_on_a_file_it_cannot_read(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    os.mkfifo(tmp_path / "x.json")
    monkeypatch.setattr(validate_module, "_result", lambda *_: pytest.fail("checked a FIFO"))
    assert validate_file(tmp_path / "x.json").unread == Unread(
        str(tmp_path / "x.json"), "not a regular file (a FIFO): not opened")


def test_file_names_print_without_raw_control_characters(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "f\x1b[2J.json")  # a name that would clear the terminal
    child = dagpilot("validate", str(tmp_path))
    assert child.returncode == 2
    assert "\x1b" not in child.stdout
    assert child.stdout.splitlines()[0] == (f"{tmp_path}/f\\x1b[2J.json: cannot check: not a "
                                            "regular file (a FIFO): not opened")
