"""The worker process: imports a target once, then runs case after case under a memory cap.

Started by `fuzz.pool.Worker` (multiprocessing, spawn). It receives the path of a case, runs
the target's parser on it with stdout and stderr captured, and answers with an outcome:

    accepted   the parser took the input
    clean      a DagpilotError (what the CLI prints as `error: ...` with exit 2), or a refusal
               the command reports on purpose (the validator's exit 1)
    exception  anything else raised, or an exception dagpilot logged with its traceback
    memory     MemoryError: the address-space cap (RLIMIT_AS) was hit

Hangs and signals cannot be answered from inside; the parent sees them (fuzz.pool). After a
memory outcome the worker exits, so every case starts in a sound process.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import importlib
import io
import logging
import os
import resource
import signal
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
STACK_SIGNAL = signal.SIGUSR1
Parser = Callable[[Path], bool]  # True: accepted; False: refused on purpose; raises otherwise
MESSAGE_CHARS = 400
LONG_MESSAGE = 4096  # an error message longer than this quotes too much of its input
_CONTROL = {*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, *range(0x80, 0xA0)}


def serve(connection: Connection, parser_ref: str, scratch: str, memory_cap: int,
          warmup: str | None) -> None:
    """The worker's main loop (the target of the spawned process). `warmup`, a sound input,
    is parsed once first, so no case pays for lazy imports and first-use set-up in its time."""
    _die_with_parent()
    os.environ.setdefault("POLARS_MAX_THREADS", "1")  # one thread: less memory, no oversubscription
    folder = Path(scratch)
    _redirect_output(folder / "worker.log")
    # Python's stack to the log on a crash, and on SIGUSR1: the parent sends it before it kills
    # a hung worker, so a hang is located like an exception
    faulthandler.enable(2)  # fd 2 is the log now
    faulthandler.register(STACK_SIGNAL, 2, all_threads=False)
    sink = _LoggedErrors()
    logging.getLogger().addHandler(sink)  # also makes the CLI's logging.basicConfig a no-op
    module, _, name = parser_ref.partition(":")
    parser: Parser = getattr(importlib.import_module(module), name)(folder / "state")
    if warmup is not None:
        run_case(parser, Path(warmup), sink, scratch)
    _cap_address_space(memory_cap)
    connection.send("ready")
    while True:
        try:
            message = connection.recv()
        except EOFError:
            return
        if message is None:
            return
        reply = run_case(parser, Path(message), sink, str(folder))
        connection.send(reply)
        if reply["outcome"] == "memory":
            return


def run_case(parser: Parser, path: Path, sink: _LoggedErrors, scratch: str) -> dict[str, Any]:
    from dagpilot.core.errors import DagpilotError  # noqa: PLC0415  (imported in the worker only)

    sink.records.clear()
    output = io.StringIO()
    error: BaseException | None = None
    accepted = False
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            accepted = parser(path)
    except (KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as raised:
        error = raised
    logged = next((r.exc_info[1] for r in sink.records if r.exc_info and r.exc_info[1]), None)
    reply: dict[str, Any] = {"outcome": "accepted" if accepted else "clean", "flags": []}
    if error is not None and _is_memory(error):
        reply.update(_described(error, scratch), outcome="memory")
    elif error is not None and not isinstance(error, DagpilotError):
        reply.update(_described(error, scratch), outcome="exception")
    elif logged is not None:
        reply.update(_described(logged, scratch), outcome="exception", logged=True)
    elif error is not None:
        reply.update(outcome="clean", message=_shown(str(error), scratch))
        reply["flags"] += _message_flags(str(error))
    reply["flags"] += _output_flags(output.getvalue())
    return reply


def _described(error: BaseException, scratch: str) -> dict[str, Any]:
    """Type, message and where it was raised: the innermost dagpilot frame of the cause."""
    origin = error.__cause__ or error
    frames = traceback.extract_tb(origin.__traceback__)
    ours = [frame for frame in frames if "/dagpilot/" in frame.filename] or frames
    where, line = "", ""
    if ours:
        frame = ours[-1]
        where = f"{relative(frame.filename)}:{frame.lineno}"
        line = (frame.line or "").strip()
    kind = _type_name(origin)
    if origin is not error:
        kind = f"{_type_name(error)} from {kind}"
    return {"type": kind, "message": _shown(str(error), scratch), "where": where, "line": line}


def _type_name(error: BaseException) -> str:
    kind = type(error)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def relative(filename: str) -> str:
    """A source file as `dagpilot/...` (no machine's paths in findings and fixtures)."""
    for marker in ("/src/dagpilot/", "/dagpilot/"):
        if marker in filename:
            return "dagpilot/" + filename.split(marker, 1)[1]
    return Path(filename).name


def _is_memory(error: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, MemoryError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _message_flags(message: str) -> list[str]:
    flags = []
    if len(message) > LONG_MESSAGE:
        flags.append("long-message")
    if _has_control_chars(message):
        flags.append("control-chars")
    return flags


def _output_flags(output: str) -> list[str]:
    return ["control-chars"] if _has_control_chars(output) else []


def _has_control_chars(text: str) -> bool:
    """Raw control characters (a terminal escape) in what a user would see; the first part
    only: a message of gigabytes is a finding of its own (long-message), not a reason to hang."""
    return any(ord(char) in _CONTROL for char in text[:1 << 20])


def _shown(text: str, scratch: str) -> str:
    text = text.replace(scratch, "<scratch>")
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "..."


class _LoggedErrors(logging.Handler):
    """Formats every record (as the CLI's handler would) and keeps the ones with a traceback:
    dagpilot logs an exception it swallowed (the validator's "internal" violation) that way."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.format(record)
        if record.exc_info:
            self.records.append(record)


def _redirect_output(log: Path) -> None:
    """Native crashes and Rust panics write to fds 1 and 2: keep them for the parent to read."""
    log.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(handle, 1)
    os.dup2(handle, 2)
    os.close(handle)


def _die_with_parent() -> None:
    """SIGKILL this worker when its parent dies (a worker stuck in a hang never reads EOF)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _cap_address_space(cap: int) -> None:
    """RLIMIT_AS at what the process maps now (interpreter, imports) plus `cap` bytes."""
    with open("/proc/self/status") as status:
        mapped = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize"))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = mapped + cap if hard == resource.RLIM_INFINITY else min(mapped + cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
