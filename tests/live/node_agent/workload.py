"""A workload for the node agent's tests: joins its cgroups, does one thing, says what it did.

    python workload.py MODE AMOUNT [PATH]

It is started inside its cgroups (conftest.py: a shell joins them and execs it), then:
  grow-memory MiB          holds MiB of anonymous memory, every page written
  write-cache MiB PATH     writes MiB to PATH through the page cache (no fsync)
  burn-cpu SECONDS         spins until the process has used SECONDS of CPU
  direct-io MiB PATH       writes then reads MiB of PATH with O_DIRECT, 1 MiB at a time
  await-writes COUNT PATH  COUNT synchronous 4 KiB O_DIRECT writes to PATH, each timed
prints one JSON line (what it did, measured by itself), then waits for stdin to close, at most
60 s, so that the test can measure it while it is alive.
"""

from __future__ import annotations

import json
import mmap
import os
import select
import sys
import time

MIB = 1 << 20
MAX_LIFE_S = 60.0


def anon_rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no RssAnon in /proc/self/status")


def grow_memory(mib: int) -> dict[str, object]:
    held = b"\x01" * (mib * MIB)  # filled, so every page is faulted in
    return {"held_bytes": len(held), "anon_rss_bytes": anon_rss_bytes(), "_keep": held}


def write_cache(mib: int, path: str) -> dict[str, object]:
    block = b"\x02" * MIB
    with open(path, "wb") as file:
        for _ in range(mib):
            file.write(block)
    return {"written_bytes": mib * MIB, "anon_rss_bytes": anon_rss_bytes()}


def burn_cpu(seconds: float) -> dict[str, object]:
    deadline = time.monotonic() + 10 * seconds + 10  # bounded even on a starved machine
    while time.process_time() < seconds and time.monotonic() < deadline:
        sum(range(10_000))
    return {"cpu_s": time.process_time()}  # the whole process's, interpreter start included


def direct_io(mib: int, path: str) -> dict[str, object]:
    buffer = mmap.mmap(-1, MIB)  # page-aligned, as O_DIRECT needs
    buffer.write(b"\x03" * MIB)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)
    try:
        for index in range(mib):
            os.pwritev(fd, [buffer], index * MIB)
        os.fsync(fd)
        for index in range(mib):
            os.preadv(fd, [buffer], index * MIB)
    finally:
        os.close(fd)
    return {"written_bytes": mib * MIB, "read_bytes": mib * MIB}


def await_writes(count: int, path: str) -> dict[str, object]:
    buffer = mmap.mmap(-1, 4096)
    fd = os.open(path, os.O_WRONLY | os.O_DIRECT)  # a direct write returns once done
    spent = 0.0
    try:
        for index in range(count):
            started = time.perf_counter()
            os.pwritev(fd, [buffer], index * 4096)
            spent += time.perf_counter() - started
    finally:
        os.close(fd)
    return {"writes": count, "mean_latency_ms": 1000 * spent / count}


def main() -> None:
    mode, amount, *rest = sys.argv[1:]
    modes = {"grow-memory": grow_memory, "write-cache": write_cache, "burn-cpu": burn_cpu,
             "direct-io": direct_io, "await-writes": await_writes}
    number = float(amount) if mode == "burn-cpu" else int(amount)
    done = modes[mode](number, *rest)  # type: ignore[operator]
    print(json.dumps({key: value for key, value in done.items() if not key.startswith("_")}),
          flush=True)
    select.select([sys.stdin], [], [], MAX_LIFE_S)  # until the test closes stdin


if __name__ == "__main__":
    main()
