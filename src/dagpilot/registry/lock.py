"""One writer at a time: publish and rollback hold an exclusive lock on the ROOT folder.

The lock is `flock` on the folder itself, so no lock file is left behind (a shipped, committed
registry stays clean) and a crashed writer releases it with its process. Readers that load a
model take no lock: the order of a publish already keeps them from seeing a partial version.
`verify` takes the shared lock so that it checks one consistent state, not a publish midway.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def locked(root: Path, *, exclusive: bool) -> Iterator[None]:
    descriptor = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(descriptor)  # closing the descriptor releases the lock
