"""The bytes of one regular file, read once and capped; never a FIFO, a device or a folder.

A path is stat'ed before it is opened (a FIFO would block the open, a device such as /dev/zero
never ends), opened without blocking, and its descriptor checked again: what is read is what
was checked, even if the path is swapped in between. The read stops one byte past the cap.

`pinned` makes every read of one path inside a block return bytes already read, so that the
validator's format detection, the reader and the extra checks all see the same bytes, read
from disk once (a context variable: scoped to the block and to the thread, not a global).
"""

from __future__ import annotations

import contextvars
import errno
import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType

from dagpilot.core.errors import InvalidInput, Unreadable
from dagpilot.core.reading.limits import size_text

_CHUNK = 1 << 20
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_CLOEXEC", 0))
_NOTHING_PINNED: Mapping[str, bytes] = MappingProxyType({})
_PINNED: contextvars.ContextVar[Mapping[str, bytes]] = contextvars.ContextVar(
    "dagpilot_pinned_files", default=_NOTHING_PINNED)


def read_file(path: Path | str, max_bytes: int) -> bytes:
    """The bytes of the regular file `path`; `Unreadable` for what the OS refuses or what is
    not a regular file, `InvalidInput` for a file over `max_bytes`."""
    name = os.fspath(path)
    held = _PINNED.get().get(_key(name))
    if held is not None:
        _check_size(name, len(held), max_bytes)
        return held
    _check_size(name, regular_status(name).st_size, max_bytes)
    descriptor, size = _open_regular(name)
    try:
        return _read_capped(descriptor, name, size, max_bytes)
    except OSError as error:
        raise unreadable(name, error) from error
    finally:
        os.close(descriptor)


def read_head(path: Path | str, size: int) -> bytes:
    """At most the first `size` bytes of the regular file `path` (a header)."""
    name = os.fspath(path)
    held = _PINNED.get().get(_key(name))
    if held is not None:
        return held[:size]
    regular_status(name)
    descriptor, _ = _open_regular(name)
    try:
        return os.read(descriptor, size)
    except OSError as error:
        raise unreadable(name, error) from error
    finally:
        os.close(descriptor)


def regular_status(name: str) -> os.stat_result:
    """`os.stat` of a path that must be a regular file (symbolic links followed)."""
    try:
        status = os.stat(name)
    except OSError as error:
        raise unreadable(name, error) from error
    if stat.S_ISDIR(status.st_mode):
        raise Unreadable(name, "is a folder, not a file")
    if not stat.S_ISREG(status.st_mode):
        raise Unreadable(name, f"not a regular file ({kind_of(status.st_mode)}): not opened")
    return status


@contextmanager
def pinned(path: Path | str, data: bytes) -> Iterator[None]:
    """Within the block, `read_file(path)` returns `data` without touching the disk."""
    token = _PINNED.set(MappingProxyType({**_PINNED.get(), _key(os.fspath(path)): data}))
    try:
        yield
    finally:
        _PINNED.reset(token)


def unreadable(name: str, error: OSError, action: str = "read") -> Unreadable:
    """An OS error as one clear line about `name` (the path the caller asked for) and what
    could not be done (`read`, `list this folder`)."""
    if error.errno == errno.ELOOP:
        return Unreadable(name, "symbolic link loop (too many levels of symbolic links)")
    if error.errno == errno.ENOENT:
        target = _link_target(name)
        return Unreadable(name, "no such file or folder" if target is None
                          else f"broken symbolic link (to {target!r:.200})")
    return Unreadable(name, f"cannot {action}: {error.strerror or error}")


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return kind
    return "not a plain file"


def _open_regular(name: str) -> tuple[int, int]:
    """A descriptor of `name`, opened without blocking, and its size; refused unless it is
    still a regular file once opened (it may have been swapped for a FIFO since the check)."""
    try:
        descriptor = os.open(name, _OPEN_FLAGS)
    except OSError as error:
        raise unreadable(name, error) from error
    try:
        opened = os.fstat(descriptor)
    except OSError as error:
        os.close(descriptor)
        raise unreadable(name, error) from error
    if not stat.S_ISREG(opened.st_mode):
        os.close(descriptor)
        raise Unreadable(name, f"not a regular file ({kind_of(opened.st_mode)})")
    return descriptor, opened.st_size


def _read_capped(descriptor: int, name: str, expected: int, max_bytes: int) -> bytes:
    """Read to the end, or one byte past `max_bytes` (a file may grow while it is read)."""
    chunks: list[bytes] = []
    total = 0
    want = min(expected + 1, max_bytes + 1)  # the file's size in one read, usually
    while True:
        chunk = os.read(descriptor, max(1, min(want, max_bytes + 1 - total)))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        _check_size(name, total, max_bytes)
        want = _CHUNK


def _check_size(name: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise InvalidInput(name, "", "", f"larger than the limit of {size_text(max_bytes)} "
                           f"for this kind of file ({size} bytes or more)")


def _link_target(name: str) -> str | None:
    try:
        return os.readlink(name)
    except OSError:  # not a link, or gone
        return None


def _key(name: str) -> str:
    return os.path.abspath(name)
