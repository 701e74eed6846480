"""perf_event_open(2) through ctypes: one counting event on one CPU, read as a u64.

Enough of the API for system-wide counters (uncore PMUs count per socket, so they are opened
with pid -1 on one CPU of each). The attribute is the first published layout (64 bytes), which
every kernel accepts.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys

# The syscall's number differs per architecture (asm/unistd.h).
_SYSCALL_NUMBERS = {"x86_64": 298, "aarch64": 241, "ppc64le": 319, "s390x": 331,
                    "riscv64": 241}
_ATTR_SIZE_VER0 = 64
_FLAG_CLOEXEC = 8  # PERF_FLAG_FD_CLOEXEC


class _EventAttr(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("config", ctypes.c_uint64),
        ("sample_period", ctypes.c_uint64),
        ("sample_type", ctypes.c_uint64),
        ("read_format", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),  # disabled, inherit, ... bits: all 0, counting at once
        ("wakeup_events", ctypes.c_uint32),
        ("bp_type", ctypes.c_uint32),
        ("config1", ctypes.c_uint64),
    ]


class PerfCounter:
    """An open system-wide counter; `value()` reads its count so far."""

    def __init__(self, pmu_type: int, config: int, cpu: int, config1: int = 0) -> None:
        number = _SYSCALL_NUMBERS.get(platform.machine())
        if number is None:
            raise OSError(f"perf_event_open: no syscall number known for {platform.machine()}")
        attr = _EventAttr(type=pmu_type, size=_ATTR_SIZE_VER0, config=config, config1=config1)
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.syscall(number, ctypes.byref(attr), -1, cpu, -1, _FLAG_CLOEXEC)
        if fd < 0:
            error = ctypes.get_errno()
            raise OSError(error, f"perf_event_open(type={pmu_type}, config={config:#x}, "
                                 f"cpu={cpu}): {os.strerror(error)}")
        self._fd: int | None = fd

    def value(self) -> int:
        if self._fd is None:
            raise OSError("perf counter read after close")
        return int.from_bytes(os.read(self._fd, 8), sys.byteorder)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

