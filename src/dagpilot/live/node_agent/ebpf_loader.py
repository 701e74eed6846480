"""The agent's eBPF side: the project's objects (ebpf/ at the top of the repository), run by its
own libbpf loader (ebpf/feedback_loader.c) as a child process.

The loader prints `ready` once the programs are attached; each line the agent writes makes it
print every hash map as `MAP KEY_HEX VALUE` lines and `end`. Closing its stdin detaches them.
Everything that can stop eBPF (no objects built, no BTF, no permission, the verifier) comes back
as a reason, never an exception: the agent then uses the cgroup figures alone.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_BTF = Path("/sys/kernel/btf/vmlinux")
BUILD_DIR_VARIABLE = "DAGPILOT_EBPF_DIR"
LOADER = "feedback_loader"
FEEDBACK_OBJECT = "task_feedback.bpf.o"
CHECK_OBJECT = "kernel_check.bpf.o"
START_TIMEOUT_S = 20.0  # loading runs the verifier: a second or so
DUMP_TIMEOUT_S = 10.0
MAX_DUMP_LINES = 1_000_000  # the maps hold at most 16,384 + 2 x 65,536 entries


def default_build_dir() -> Path:
    """$DAGPILOT_EBPF_DIR, else ebpf/build of the clone this package runs from (make -C ebpf)."""
    configured = os.environ.get(BUILD_DIR_VARIABLE)
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[4] / "ebpf" / "build"


@dataclass(frozen=True, slots=True)
class EbpfFigures:
    """One dump: on-CPU ns and block bytes per cgroup id, each including its descendants."""

    cpu_ns: dict[int, int] = field(default_factory=dict)
    io_bytes: dict[tuple[int, int], int] = field(default_factory=dict)  # (cgroup id, write)

    def cpu_seconds(self, cgroup_id: int) -> float:
        return self.cpu_ns.get(cgroup_id, 0) / 1e9

    def read_write_bytes(self, cgroup_id: int) -> tuple[int, int]:
        return self.io_bytes.get((cgroup_id, 0), 0), self.io_bytes.get((cgroup_id, 1), 0)


def cgroup_id(path: Path) -> int:
    """A cgroup's id as the kernel's BPF helpers give it: its kernfs node id, the inode number
    of its directory (64-bit inodes)."""
    return os.stat(path).st_ino


def btf_problem(btf: Path) -> str:
    """Why CO-RE objects cannot be relocated against `btf` ("" when they can be)."""
    if not btf.is_file():
        return (f"no BTF at {btf}: the kernel needs CONFIG_DEBUG_INFO_BTF=y "
                "(or pass --btf FILE)")
    if not os.access(btf, os.R_OK):
        return f"BTF at {btf} is not readable: run the agent as root"
    return ""


def missing_build(build_dir: Path, *names: str) -> str:
    """Why the built files are not there ("" when they are)."""
    missing = [name for name in (LOADER, *names) if not (build_dir / name).is_file()]
    if missing:
        return f"{', '.join(missing)} not built in {build_dir}: run `make -C ebpf`"
    return ""


class FeedbackEbpf:
    """The task-feedback programs, attached while this object lives."""

    def __init__(self, process: subprocess.Popen[str], lines: _Lines) -> None:
        self._process = process
        self._lines = lines

    @classmethod
    def start(cls, build_dir: Path, btf: Path, cpu_v1: bool, io_v1: bool) -> FeedbackEbpf | str:
        """The attached programs, or why they could not be loaded."""
        problem = missing_build(build_dir, FEEDBACK_OBJECT) or btf_problem(btf)
        if problem:
            return problem
        command = [str(build_dir / LOADER), "run", str(build_dir / FEEDBACK_OBJECT),
                   "--btf", str(btf), "--config", f"{int(cpu_v1)},{int(io_v1)}"]
        process = subprocess.Popen(command, text=True, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None
        lines = _Lines(process.stdout.fileno())
        line = lines.next_within(START_TIMEOUT_S)
        if line.strip() == "ready":
            return cls(process, lines)
        _end(process)
        assert process.stderr is not None
        reason = process.stderr.read().strip() or line.strip() or "exited without a word"
        return f"eBPF loader: {reason[-400:]}"

    def read(self) -> EbpfFigures | str:
        """Every cgroup's figures now, or why the loader did not answer."""
        assert self._process.stdin is not None
        try:
            self._process.stdin.write("dump\n")
            self._process.stdin.flush()
        except OSError as error:
            return f"eBPF loader gone: {error.strerror}"
        figures = EbpfFigures()
        for _ in range(MAX_DUMP_LINES):
            line = self._lines.next_within(DUMP_TIMEOUT_S)
            if not line:
                return "eBPF loader stopped answering"
            if line == "end\n":
                return figures
            _add(figures, line)
        return "eBPF loader dump did not end"

    def close(self) -> None:
        _end(self._process)


def _add(figures: EbpfFigures, line: str) -> None:
    name, key_hex, value = line.split()
    key = bytes.fromhex(key_hex)
    if name == "cpu_ns":
        figures.cpu_ns[int.from_bytes(key[:8], "little")] = int(value)
    elif name == "io_bytes":  # struct io_key {u64 cgroup_id; u32 dev; u32 write}: summed over dev
        index = (int.from_bytes(key[:8], "little"), int.from_bytes(key[12:16], "little"))
        figures.io_bytes[index] = figures.io_bytes.get(index, 0) + int(value)


class _Lines:
    """Lines from a pipe with a deadline each: read with os.read, since a buffered reader would
    hold lines that select() no longer sees."""

    def __init__(self, descriptor: int) -> None:
        self._descriptor = descriptor
        self._pending = b""

    def next_within(self, timeout_s: float) -> str:
        """The next line with its newline, or "" at end of file or when timeout_s passes."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._descriptor], [], [], max(left, 0))
            chunk = os.read(self._descriptor, 1 << 16) if ready else b""
            if not chunk:
                return ""
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode() + "\n"


def _end(process: subprocess.Popen[str]) -> None:
    """Close its stdin (it detaches and exits), then wait; kill if it does not."""
    with contextlib.suppress(OSError):
        assert process.stdin is not None
        process.stdin.close()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def check_attach(build_dir: Path, btf: Path) -> tuple[bool, str]:
    """Load, attach and detach the minimal tracepoint program: (worked, what happened)."""
    problem = missing_build(build_dir, CHECK_OBJECT)
    if problem:
        return False, problem
    command = [str(build_dir / LOADER), "check", str(build_dir / CHECK_OBJECT), "--btf",
               str(btf)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return False, f"loader: {error}"
    if done.returncode:
        return False, done.stderr.strip()[-400:] or f"loader exited {done.returncode}"
    return True, done.stdout.strip()
