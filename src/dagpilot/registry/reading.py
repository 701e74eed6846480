"""Reading inside the registry without ever following a symlink, each file once and bounded.

A version folder is opened relative to a descriptor of ROOT with O_NOFOLLOW, and its files
relative to the folder's descriptor, again with O_NOFOLLOW: a version (or a file in it) that
is a symlink is refused rather than read from wherever it points, and a swap of a path to a
symlink after a check cannot redirect the read. Only regular files are opened (never a FIFO,
which would block, or a device, which never ends), and only up to a size limit.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.errors import CannotCheck

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
CHUNK_BYTES = 4 << 20
NOT_PLAIN_FILE = "not a plain file: a version holds plain files only"
NOT_PLAIN_FOLDER = "not a plain folder: a version is a folder of the registry, never a symlink"


class Missing(IntegrityError):
    """A path that does not exist (callers say what it was expected to be)."""


@contextmanager
def version_folder(root: Path, version: str) -> Iterator[int]:
    """A descriptor of ROOT/VERSION itself: refused when it is a symlink or not a folder."""
    folder = str(root / version)
    try:
        root_descriptor = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise refusal(str(root), error, "not a folder: no registry here") from None
    try:
        descriptor = os.open(version, FOLDER_FLAGS, dir_fd=root_descriptor)
    except OSError as error:
        raise refusal(folder, error, NOT_PLAIN_FOLDER) from None
    finally:
        os.close(root_descriptor)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def plain_names(descriptor: int, folder: str) -> list[str]:
    """The names in an open folder, sorted; any entry that is not a regular file is refused."""
    try:
        names = sorted(os.listdir(descriptor))
    except OSError as error:
        raise refusal(folder, error, NOT_PLAIN_FOLDER) from None
    for name in names:
        try:
            mode = os.stat(name, dir_fd=descriptor, follow_symlinks=False).st_mode
        except OSError as error:
            raise refusal(f"{folder}/{name}", error, NOT_PLAIN_FILE) from None
        if not stat.S_ISREG(mode):
            raise IntegrityError(f"{folder}/{name}", NOT_PLAIN_FILE)
    return names


def read_plain(path: str, *, dir_fd: int | None, label: str, limit: int) -> bytes:
    """The bytes of the regular file PATH (relative to DIR_FD), read once, at most LIMIT."""
    try:
        mode = os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode
        if not stat.S_ISREG(mode):  # checked before opening: a device is never opened
            raise IntegrityError(label, NOT_PLAIN_FILE)
        descriptor = os.open(path, FILE_FLAGS, dir_fd=dir_fd)
    except OSError as error:
        raise refusal(label, error, NOT_PLAIN_FILE) from None
    try:
        return _read_all(descriptor, label, limit)
    except OSError as error:
        raise refusal(label, error, NOT_PLAIN_FILE) from None
    finally:
        os.close(descriptor)


def _read_all(descriptor: int, label: str, limit: int) -> bytes:
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode):  # swapped for something else after the check
        raise IntegrityError(label, NOT_PLAIN_FILE)
    if status.st_size > limit:
        raise IntegrityError(label, f"too large: {status.st_size} bytes, the limit is {limit}")
    chunks: list[bytes] = []
    left = status.st_size + 1  # one byte more than its size: a file still growing shows
    while left > 0 and (chunk := os.read(descriptor, min(left, CHUNK_BYTES))):
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    if len(data) != status.st_size:
        raise IntegrityError(label, f"changed while it was read: {status.st_size} bytes, then "
                                    f"{len(data)}")
    return data


def refusal(label: str, error: OSError, not_plain: str) -> IntegrityError:
    """An OS error as a refusal: absent, a symlink or the wrong kind of entry, or unreadable."""
    if error.errno == errno.ENOENT:
        return Missing(label, "missing")
    if error.errno in (errno.ELOOP, errno.ENOTDIR):  # O_NOFOLLOW met a symlink; not a folder
        return IntegrityError(label, not_plain)
    return CannotCheck(label, f"cannot be read: {error.strerror or error}")
