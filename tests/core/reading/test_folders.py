"""Listing folders: what could not be listed, broken and looping links and FIFOs are reported."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from dagpilot.core.errors import Unreadable
from dagpilot.core.reading import folders
from dagpilot.core.reading.folders import Problem, files_in, path_kind, walk
from tests.unprivileged import lock, open_tree, run_unprivileged

__all__ = ["open_tree"]  # a fixture the tests below use


def csv(name: str) -> bool:
    return name.endswith(".csv")


def test_files_are_filtered_sorted_and_found_in_subfolders(tmp_path: Path) -> None:
    for name in ("b.csv", "a.csv", "notes.txt", "sub/c.csv", "sub/deeper/d.csv"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    assert files_in(tmp_path, csv) == [tmp_path / "a.csv", tmp_path / "b.csv"]
    assert files_in(tmp_path, csv, recursive=True) == [
        tmp_path / n for n in ("a.csv", "b.csv", "sub/c.csv", "sub/deeper/d.csv")]


def test_what_is_not_a_regular_file_is_a_problem_when_its_name_is_wanted(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.csv")
    (tmp_path / "dangling.csv").symlink_to("gone.csv")
    (tmp_path / "loop.csv").symlink_to("loop.csv")
    (tmp_path / "zero.csv").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo.txt")  # not wanted: never looked at
    (tmp_path / "ok.csv").write_text("x\n")
    listing = walk(tmp_path, csv)
    assert listing.files == [tmp_path / "ok.csv"]
    assert sorted(listing.problems, key=lambda p: p.path) == [
        Problem(tmp_path / "dangling.csv", "broken symbolic link (to 'gone.csv')"),
        Problem(tmp_path / "fifo.csv", "not a regular file (a FIFO): not opened"),
        Problem(tmp_path / "loop.csv", "symbolic link loop (too many levels of symbolic links)"),
        Problem(tmp_path / "zero.csv", "not a regular file (a character device): not opened")]
    with pytest.raises(Unreadable) as caught:
        files_in(tmp_path, csv)
    assert caught.value.file == str(tmp_path / "dangling.csv")  # the first, in path order


def test_links_to_folders_are_followed_and_loops_reported(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "real").mkdir(parents=True)
    (data / "real" / "a.csv").write_text("x\n")
    (data / "alias").symlink_to("real")
    (data / "real" / "up").symlink_to("..")  # back to data: a loop
    listing = walk(data, csv)
    assert listing.files == [data / "alias" / "a.csv", data / "real" / "a.csv"]
    assert [(p.path.name, p.folder) for p in listing.problems] == [("up", True), ("up", True)]
    assert all(p.reason == "symbolic link loop: leads back to a folder it is inside"
               for p in listing.problems)


def test_subfolders_are_entered_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.csv").write_text("x\n")
    assert walk(tmp_path, csv, enter=lambda name: not name.startswith(".")).files == []


def test_a_deep_tree_is_walked_without_recursion(tmp_path: Path) -> None:
    chain = [tmp_path]
    try:
        for _ in range(1_200):  # deeper than Python's recursion limit
            chain.append(chain[-1] / "d")
            chain[-1].mkdir()  # one at a time: mkdir(parents=True) recurses
        (chain[-1] / "deep.csv").write_text("x\n")
        assert walk(tmp_path, csv).files == [chain[-1] / "deep.csv"]
    finally:  # bottom up: shutil.rmtree, and so pytest's clean-up, recurses per level
        (chain[-1] / "deep.csv").unlink(missing_ok=True)
        for folder in reversed(chain[1:]):
            folder.rmdir()


def test_a_folder_that_cannot_be_listed_is_a_problem(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "ok.csv").write_text("x\n")
    listed = os.scandir

    def refuse_locked(path: Path) -> object:
        if Path(path).name == "locked":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return listed(path)

    monkeypatch.setattr(folders.os, "scandir", refuse_locked)
    listing = walk(tmp_path, csv)
    assert listing.files == [tmp_path / "ok.csv"]
    assert listing.problems == [Problem(tmp_path / "locked", "cannot list this folder: "
                                        "Permission denied", folder=True)]


def test_a_locked_folder_is_reported_to_an_unprivileged_user(open_tree: Path) -> None:
    (open_tree / "locked").mkdir()
    (open_tree / "locked" / "hidden.csv").write_text("x\n")
    lock(open_tree / "locked")
    child = run_unprivileged(
        "from pathlib import Path\nfrom dagpilot.core.reading.folders import walk\n"
        f"print(walk(Path({str(open_tree)!r})).problems)\n",
        preload="dagpilot.core.reading.folders")
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == repr([Problem(open_tree / "locked", "cannot list this "
                                                 "folder: Permission denied", folder=True)])


@pytest.mark.parametrize(("make", "kind"), [
    (lambda p: None, "missing"),
    (lambda p: p.mkdir(), "folder"),
    (lambda p: p.write_text("x"), "file"),
    (os.mkfifo, "file"),  # reading it refuses it, with the reason
])
def test_path_kind(tmp_path: Path, make: Callable[[Path], object], kind: str) -> None:
    path = tmp_path / "x"
    make(path)
    assert path_kind(path) == kind


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: p.symlink_to("gone"), "broken symbolic link (to 'gone')"),
    (lambda p: p.symlink_to("x"), "symbolic link loop (too many levels of symbolic links)"),
])
def test_path_kind_names_broken_links(tmp_path: Path, make: Callable[[Path], object],
                                      message: str) -> None:
    path = tmp_path / "x"
    make(path)
    with pytest.raises(Unreadable) as caught:
        path_kind(path)
    assert (caught.value.file, caught.value.message) == (str(path), message)
