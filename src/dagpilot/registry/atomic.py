"""Durable, atomic file-system steps: a reader sees the old state or the new one, never a mix.

Each step writes under a scratch name, fsyncs, then renames over the target (`os.replace` is
atomic on POSIX), and fsyncs the folder so the rename itself survives a power cut.
"""

from __future__ import annotations

import os
from pathlib import Path

SCRATCH_LINK = ".current.tmp"


def fsync_dir(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_durably(path: Path, data: bytes) -> None:
    """Write a new file and flush it to disk (the caller renames its folder into place)."""
    with path.open("xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def replace_file(path: Path, data: bytes) -> None:
    """Replace PATH with DATA atomically: write a scratch file beside it, then rename over it."""
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.unlink(missing_ok=True)
    write_durably(scratch, data)
    os.replace(scratch, path)
    fsync_dir(path.parent)


def rename_dir(source: Path, target: Path) -> None:
    """Move a completely written folder into place; refuses to replace an existing one."""
    if target.exists() or target.is_symlink():
        raise FileExistsError(target)  # rename(2) would silently replace an empty folder
    fsync_dir(source)
    source.rename(target)
    fsync_dir(target.parent)


def swap_symlink(link: Path, target: str) -> None:
    """Point LINK at TARGET (relative) atomically: a scratch link renamed over the old one."""
    scratch = link.with_name(SCRATCH_LINK)
    scratch.unlink(missing_ok=True)  # left by an interrupted swap; the caller holds the lock
    os.symlink(target, scratch)
    os.replace(scratch, link)
    fsync_dir(link.parent)
