"""A parser for the harness's own tests: the input's first word says what it does."""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path

from dagpilot.core.errors import InvalidInput

log = logging.getLogger(__name__)


def make(state: Path) -> Callable[[Path], bool]:
    def parse(path: Path) -> bool:
        word = path.read_bytes().split(b" ", 1)[0].strip().decode()
        if word == "accept":
            print("\x1b[31mraw escape\x1b[0m")
            return True
        if word == "refuse":
            return False
        if word == "clean":
            raise InvalidInput(str(path), "line 1", "word", "a clean refusal")
        if word == "raise":
            raise ValueError("a traceback")
        if word == "logged":
            try:
                raise KeyError("swallowed")
            except KeyError:
                log.exception("swallowed, then logged")
            return True
        if word == "memory":
            return len(bytearray(4 << 30)) > 0
        if word == "hang":
            while True:
                pass
        if word == "block":  # waits without using CPU, as a read of a FIFO does
            threading.Event().wait()
        if word == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        raise AssertionError(f"unknown word {word!r}")
    return parse
