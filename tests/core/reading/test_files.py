"""Reading one file: regular files only, opened once, capped, every OS error named."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput, Unreadable
from dagpilot.core.reading import files
from dagpilot.core.reading.files import pinned, read_file, read_head
from tests.unprivileged import lock, open_tree, run_unprivileged

__all__ = ["open_tree"]  # a fixture the tests below use

DEADLINE_S = 60  # a guard against a read that blocks, not a timing assertion


def finishes(action: Callable[[], object]) -> BaseException | None:
    """Run `action` on a thread and wait for it with a deadline; what it raised, if anything."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            action()
        except BaseException as error:  # handed to the test
            raised.append(error)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(DEADLINE_S)
    assert not worker.is_alive(), "the read blocked"
    return raised[0] if raised else None


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes(b"x,y\n1,2\n")
    assert read_file(path, 100) == b"x,y\n1,2\n"
    assert read_head(path, 3) == b"x,y"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    error = finishes(lambda: read_file(fifo, 100))
    assert isinstance(error, Unreadable)
    assert (error.file, error.message) == (str(fifo), "not a regular file (a FIFO): not opened")
    assert isinstance(finishes(lambda: read_head(fifo, 10)), Unreadable)


def test_a_link_to_a_device_is_refused_before_reading(tmp_path: Path) -> None:
    link = tmp_path / "x.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(Unreadable, match=r"not a regular file \(a character device\)"):
        read_file(link, 1 << 30)


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: None, "no such file or folder"),
    (lambda p: p.mkdir(), "is a folder, not a file"),
    (lambda p: p.symlink_to("gone.json"), "broken symbolic link (to 'gone.json')"),
    (lambda p: p.symlink_to(p.name), "symbolic link loop (too many levels of symbolic links)"),
])
def test_what_is_not_a_readable_file_is_named(tmp_path: Path, make: Callable[[Path], None],
                                              message: str) -> None:
    path = tmp_path / "x.json"
    make(path)
    with pytest.raises(Unreadable) as caught:
        read_file(path, 100)
    assert (caught.value.file, caught.value.message) == (str(path), message)


def test_a_path_through_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    with pytest.raises(Unreadable, match="cannot read: Not a directory"):
        read_file(tmp_path / "plain" / "x.json", 100)


def test_a_file_over_the_cap_is_refused_before_it_is_read(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.csv"
    path.write_bytes(b"0" * 101)
    monkeypatch.setattr(os, "read", lambda *_: pytest.fail("read past the size check"))
    with pytest.raises(InvalidInput, match="larger than the limit of 100 bytes"):
        read_file(path, 100)


def test_a_file_longer_than_its_size_says_stops_at_the_cap() -> None:
    status = Path("/proc/self/status")  # a regular file whose st_size is 0
    assert status.stat().st_size == 0
    with pytest.raises(InvalidInput, match="larger than the limit of 16 bytes"):
        read_file(status, 16)


def test_a_file_swapped_for_a_fifo_after_the_check_is_refused_once_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.json"
    path.write_text("{}")
    checked = files.regular_status

    def check_then_swap(name: str) -> os.stat_result:
        status = checked(name)
        path.unlink()
        os.mkfifo(path)  # what an attacker does between the check and the open
        return status

    monkeypatch.setattr(files, "regular_status", check_then_swap)
    error = finishes(lambda: read_file(path, 100))
    assert isinstance(error, Unreadable)
    assert error.message == "not a regular file (a FIFO)"


def test_pinned_bytes_are_what_every_read_of_that_path_sees(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("on disk")
    with pinned(tmp_path / "." / "x.json", b"read once"):
        path.write_text("swapped")
        assert read_file(path, 100) == b"read once"
        assert read_head(str(path), 4) == b"read"
        with pytest.raises(InvalidInput, match="larger than the limit"):
            read_file(path, 4)  # the cap holds for pinned bytes too
    assert read_file(path, 100) == b"swapped"


def test_a_file_without_read_permission_is_named(open_tree: Path) -> None:
    secret = open_tree / "secret.json"
    secret.write_text("{}")
    lock(secret)
    child = run_unprivileged(
        "from dagpilot.core.reading.files import read_file\n"
        "from dagpilot.core.errors import Unreadable\n"
        f"try:\n    read_file({str(secret)!r}, 100)\n"
        "except Unreadable as error:\n    print(error)\n",
        preload="dagpilot.core.reading.files")
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == f"{secret}: cannot read: Permission denied"
