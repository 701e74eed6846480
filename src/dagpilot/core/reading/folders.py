"""The files in a folder, with what could not be listed or is not a regular file said aloud.

`Path.rglob` and `Path.is_file` hide problems: an unreadable subfolder, a broken or looping
symbolic link and a FIFO are silently left out, so a loader reads part of a folder and the
validator passes what it never read. `walk` returns the regular files it finds and one Problem
for each such path; `files_in` is the loaders' form, which raises the first problem. Symbolic
links to folders are followed; one that leads back to a folder it is inside is a problem.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from dagpilot.core.errors import Unreadable
from dagpilot.core.reading.files import kind_of, unreadable

NameTest = Callable[[str], bool]
PathKind = Literal["missing", "folder", "file"]


def _everything(_: str) -> bool:
    return True


@dataclass(frozen=True)
class Problem:
    path: Path
    reason: str
    folder: bool = False  # a folder that could not be walked, rather than a file


@dataclass
class Listing:
    files: list[Path] = field(default_factory=list)  # sorted by path
    problems: list[Problem] = field(default_factory=list)


def walk(folder: Path, wanted: NameTest = _everything, *, recursive: bool = True,
         enter: NameTest = _everything) -> Listing:
    """The regular files under `folder` whose names are `wanted`, in sorted path order;
    subfolders whose names pass `enter` are walked when `recursive`."""
    listing = Listing()
    pending = [(folder, _identity(folder))]  # a stack, not recursion: folders nest deeply
    while pending:
        here, ancestors = pending.pop()
        for path, status in _entries(here, wanted, listing):
            if not stat.S_ISDIR(status.st_mode):
                listing.files.append(path)
            elif (status.st_dev, status.st_ino) in ancestors:
                listing.problems.append(Problem(path, "symbolic link loop: leads back to a "
                                                "folder it is inside", folder=True))
            elif recursive and enter(path.name):
                pending.append((path, ancestors | {(status.st_dev, status.st_ino)}))
    listing.files.sort()
    return listing


def path_kind(path: Path) -> PathKind:
    """What is at `path`, symbolic links followed: nothing, a folder, or something to read as a
    file (reading checks that it is a regular one). An OS error other than a missing path (no
    permission, a broken or looping link) is `Unreadable` naming the path."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if error.errno == errno.ENOENT and not os.path.islink(path):
            return "missing"
        raise unreadable(str(path), error) from error
    return "folder" if stat.S_ISDIR(mode) else "file"


def files_in(folder: Path, wanted: NameTest, *, recursive: bool = False) -> list[Path]:
    """Like `walk`, but the first problem is raised as `Unreadable` naming its path."""
    listing = walk(folder, wanted, recursive=recursive)
    if listing.problems:
        first = min(listing.problems, key=lambda problem: problem.path)
        raise Unreadable(str(first.path), first.reason)
    return listing.files


def _entries(folder: Path, wanted: NameTest,
             listing: Listing) -> list[tuple[Path, os.stat_result]]:
    """The subfolders and wanted regular files of one folder (symbolic links followed), with
    a problem recorded for each wanted name that is neither."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(entry.name for entry in entries)
    except OSError as error:
        listing.problems.append(Problem(folder, unreadable(str(folder), error,
                                                           "list this folder").message,
                                        folder=True))
        return []
    found = []
    for name in names:
        path = folder / name
        try:
            status = os.stat(path)
        except OSError as error:
            if wanted(name):  # a broken or looping link that may have been a data file
                listing.problems.append(Problem(path, unreadable(str(path), error).message))
            continue
        if stat.S_ISDIR(status.st_mode) or (stat.S_ISREG(status.st_mode) and wanted(name)):
            found.append((path, status))
        elif wanted(name):
            listing.problems.append(Problem(path, f"not a regular file "
                                            f"({kind_of(status.st_mode)}): not opened"))
    return found


def _identity(folder: Path) -> frozenset[tuple[int, int]]:
    try:
        status = os.stat(folder)
    except OSError:
        return frozenset()  # listing it reports the problem
    return frozenset({(status.st_dev, status.st_ino)})
