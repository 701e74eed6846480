"""The parent's side of a worker: start it, hand it cases, enforce the time limit, restart it.

A worker that does not answer within the time limit is killed (a hang); one that dies is a
signal (or, when its log says an allocation failed, the memory cap). Either way the next case
starts a fresh worker, which imports the target again.
"""

from __future__ import annotations

import contextlib
import linecache
import multiprocessing
import os
import re
import signal
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, NamedTuple

from fuzz import worker

START_TIMEOUT_S = 120.0
WALL_FACTOR = 10  # a case's wall-clock limit, in multiples of its CPU limit (a busy host)
_POLL_S = 0.25
_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
_MEMORY_WORDS = ("memory allocation of", "MemoryError", "Cannot allocate memory",
                 "std::bad_alloc", "out of memory")

Signature = tuple[str, str, str]


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0
    memory_cap_bytes: int = 1 << 30


@dataclass(frozen=True)
class Result:
    """What one case did. kind: accepted, clean, exception, memory, hang, signal."""

    kind: str
    error_type: str = ""
    where: str = ""
    line: str = ""
    message: str = ""
    flags: tuple[str, ...] = field(default=())
    logged: bool = False

    @property
    def failed(self) -> bool:
        return self.kind not in ("accepted", "clean")

    @property
    def signature(self) -> Signature:
        """Two failures with one signature are one defect (kept once, minimised once). A hang
        is known by the function it loops in (error_type), not by the line it was caught at."""
        where = self.where.rpartition(":")[0] if self.kind == "hang" else self.where
        return (self.kind, self.error_type, where)

    def as_json(self) -> dict[str, Any]:
        shown = {"kind": self.kind, "type": self.error_type, "where": self.where,
                 "line": self.line, "message": self.message}
        return {**shown, "logged": True} if self.logged else shown


class HarnessError(RuntimeError):
    """The worker could not start: a broken target, not a finding."""


class Worker:
    """One persistent worker for one parser; `run` restarts it as needed."""

    def __init__(self, parser_ref: str, scratch: Path, limits: Limits,
                 warmup: Path | None = None) -> None:
        self.parser_ref = parser_ref
        self.warmup = warmup
        self.scratch = scratch
        self.limits = limits
        self.starts = 0
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def run(self, path: Path, timeout_s: float | None = None) -> Result:
        connection = self._ready()
        connection.send(str(path))
        limit = timeout_s or self.limits.timeout_s
        overdue = self._await(connection, limit)
        if overdue:
            function, where, line = self._where_hung()
            self._stop()
            return Result("hang", function, where, line, overdue)
        try:
            reply = connection.recv()
        except (EOFError, ConnectionError):
            return self._died()
        if reply["outcome"] == "memory":
            self._stop()  # it exits after a memory outcome: wait for that, start afresh next time
        return Result(reply["outcome"], reply.get("type", ""), reply.get("where", ""),
                      reply.get("line", ""), reply.get("message", ""), tuple(reply["flags"]),
                      reply.get("logged", False))

    def _await(self, connection: Connection, limit: float) -> str:
        """Waits for the answer: "" when it came, else why the case counts as a hang. The limit
        is the worker's CPU time, so a busy machine does not turn slow cases into hangs; a case
        blocked without using CPU (a FIFO, a lock) is caught by WALL_FACTOR times the limit."""
        assert self._process is not None and self._process.pid is not None
        start_cpu, start_wall = _cpu_seconds(self._process.pid), time.monotonic()
        while not connection.poll(min(limit, _POLL_S)):
            if _cpu_seconds(self._process.pid) - start_cpu > limit:
                return f"used {limit:g} s of CPU without answering"
            if time.monotonic() - start_wall > WALL_FACTOR * limit:
                return f"no answer within {WALL_FACTOR * limit:g} s"
        return ""

    def close(self) -> None:
        if self._connection is not None and self._process is not None:
            with contextlib.suppress(OSError):  # a worker that is gone needs no goodbye
                self._connection.send(None)
            self._process.join(5)
        self._stop()

    def _ready(self) -> Connection:
        if self._process is not None and self._process.is_alive() and self._connection:
            return self._connection
        self._stop()
        context = multiprocessing.get_context("spawn")
        mine, theirs = context.Pipe()
        self.scratch.mkdir(parents=True, exist_ok=True)
        process = context.Process(target=worker.serve, daemon=True, args=(
            theirs, self.parser_ref, str(self.scratch), self.limits.memory_cap_bytes,
            None if self.warmup is None else str(self.warmup)))
        process.start()
        theirs.close()
        self._process, self._connection = process, mine
        self.starts += 1
        if not mine.poll(START_TIMEOUT_S) or _received(mine) != "ready":
            tail = self._log_tail()
            self._stop()
            raise HarnessError(f"worker for {self.parser_ref} did not start: {tail}")
        return mine

    def _died(self) -> Result:
        assert self._process is not None
        self._process.join(5)
        code = self._process.exitcode
        tail = self._log_tail()
        where, line = _innermost(self._log())
        self._stop()
        if any(word in tail for word in _MEMORY_WORDS):
            return Result("memory", "died", where, line, tail)
        name = signal.Signals(-code).name if code is not None and code < 0 else f"exit {code}"
        return Result("signal", name, where, line, tail)

    def _where_hung(self) -> tuple[str, str, str]:
        """The loop a hung worker is in: the deepest dagpilot frame that three stack samples
        (faulthandler, on STACK_SIGNAL, 0.2 s apart) share, as (`in FUNCTION`, file:line,
        source). The innermost frame alone differs from sample to sample."""
        samples = [frames for frames in (self._stack_sample() for _ in range(3)) if frames]
        if not samples:
            return "", "", ""
        shared: list[Frame] = []
        for frames in zip(*samples, strict=False):  # outermost first
            if any((f.file, f.function) != (frames[0].file, frames[0].function) for f in frames):
                break
            shared.append(frames[0])
        ours = [frame for frame in shared if "/dagpilot/" in frame.file] or shared[-1:]
        if not ours:
            return "", "", ""
        frame = ours[-1]
        return (f"in {frame.function}", f"{worker.relative(frame.file)}:{frame.line}",
                linecache.getline(frame.file, frame.line).strip())

    def _stack_sample(self) -> list[Frame]:
        if self._process is None or self._process.pid is None:
            return []
        before = self._log().count(_STACK_HEADER)
        with contextlib.suppress(OSError):
            os.kill(self._process.pid, worker.STACK_SIGNAL)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and self._log().count(_STACK_HEADER) == before:
            time.sleep(0.05)
        time.sleep(0.2)
        return _frames(self._log())[::-1]

    def _log(self) -> str:
        try:
            return (self.scratch / "worker.log").read_text("utf-8", "replace")
        except OSError:
            return ""

    def _stop(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(5)
        if self._connection is not None:
            self._connection.close()
        self._process, self._connection = None, None

    def _log_tail(self) -> str:
        try:
            text = (self.scratch / "worker.log").read_bytes()[-600:]
        except OSError:
            return ""
        return text.decode("utf-8", "replace").replace(str(self.scratch), "<scratch>").strip()


_STACK_HEADER = "(most recent call first)"
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<function>\S+)')


class Frame(NamedTuple):
    file: str
    line: int
    function: str


def _frames(log: str) -> list[Frame]:
    """The last stack faulthandler wrote to the log, most recent call first."""
    stack = log.rpartition(_STACK_HEADER)[2]
    return [Frame(m["file"], int(m["line"]), m["function"]) for m in _FRAME.finditer(stack)]


def _innermost(log: str) -> tuple[str, str]:
    """The innermost dagpilot frame of a crash's stack: (file:line, source)."""
    frames = _frames(log)
    ours = [frame for frame in frames if "/dagpilot/" in frame.file] or frames
    if not ours:
        return "", ""
    frame = ours[0]
    return f"{worker.relative(frame.file)}:{frame.line}", linecache.getline(
        frame.file, frame.line).strip()


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of a live process (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS_PER_S  # utime, stime (fields 14, 15)


def _received(connection: Connection) -> Any:
    try:
        return connection.recv()
    except (EOFError, ConnectionError):
        return None
