"""Starting, probing and stopping the sandbox's processes, each by its own pid and log file."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dagpilot.sandbox.errors import SandboxError

START_DEADLINE_S = 120.0
STOP_DEADLINE_S = 5.0
POLL_S = 0.1


@dataclass(frozen=True, slots=True)
class Component:
    """One process of the sandbox: how to start it and how to tell it is ready."""

    name: str
    argv: Sequence[str]
    ready: Callable[[], bool]
    port: int
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Running:
    name: str
    pid: int
    port: int
    log: Path
    executable: str


def start(component: Component, log_dir: Path) -> Running:
    """Starts `component` in its own session (so `down` can stop it whole), output to its log."""
    log = log_dir / f"{component.name}.log"
    if not os.access(component.argv[0], os.X_OK):
        raise SandboxError(component.name, f"{component.argv[0]} is not an executable")
    # posix_spawn, not Popen: the component outlives this process (a `dagpilot sandbox up`
    # returns while it runs), so there is no Popen object to keep or to warn about.
    with log.open("ab") as out, open(os.devnull, "rb") as null:
        pid = os.posix_spawn(component.argv[0], list(component.argv),
                             {**os.environ, **component.env}, setsid=True, file_actions=[
                                 (os.POSIX_SPAWN_DUP2, null.fileno(), 0),
                                 (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                                 (os.POSIX_SPAWN_DUP2, out.fileno(), 2)])
    # /proc/PID/exe names the resolved file: a venv's python is a symlink to the real one.
    return Running(component.name, pid, component.port, log,
                   os.path.realpath(component.argv[0]))


def wait_ready(component: Component, running: Running,
               deadline_s: float = START_DEADLINE_S) -> None:
    """Returns when the component answers its probe; SandboxError if it exits or times out."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if component.ready():
            return
        if not alive(running):
            raise SandboxError(component.name, f"exited during start-up{_hint(running.log)}; "
                                               f"see {running.log}")
        time.sleep(POLL_S)
    raise SandboxError(component.name, f"not ready after {deadline_s:.0f} s; see {running.log}")


def _hint(log: Path) -> str:
    """The one cause worth naming in the error line: a port someone else holds."""
    try:
        tail = log.read_bytes()[-4000:].decode(errors="replace")
    except OSError:
        return ""
    return " (address already in use)" if "address already in use" in tail else ""


def alive(running: Running) -> bool:
    """Whether the pid is still this component's process (not a recycled pid or a zombie)."""
    try:
        with open(f"/proc/{running.pid}/stat", "rb") as stat:
            state = stat.read().rsplit(b")", 1)[1].split()[0]
        executable = os.readlink(f"/proc/{running.pid}/exe")
    except (OSError, IndexError):
        return False
    _reap(running.pid)
    return state != b"Z" and os.path.basename(executable) == os.path.basename(
        running.executable)


def _reap(pid: int) -> None:
    # A child of this process that exited stays a zombie until waited for.
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def stop(runnings: Sequence[Running], deadline_s: float = STOP_DEADLINE_S) -> None:
    """SIGTERM to each component's process group, SIGKILL to any left after the deadline.

    Only processes that are still the recorded components are signalled (pids are recycled).
    All are told at once: their graceful shutdowns overlap instead of adding up."""
    ours = [running for running in runnings if alive(running)]
    for running in ours:
        _signal(running.pid, signal.SIGTERM)
    deadline = time.monotonic() + deadline_s
    while ours and time.monotonic() < deadline:
        ours = [running for running in ours if alive(running)]
        time.sleep(POLL_S)
    for running in ours:
        _signal(running.pid, signal.SIGKILL)


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)  # the component's session: it and any child it started
    except ProcessLookupError:
        pass
    except PermissionError as error:
        raise SandboxError(f"pid {pid}", f"cannot be stopped: {error}") from None
