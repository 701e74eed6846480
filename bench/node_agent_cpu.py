"""Node agent cost: its CPU time over wall time at a 5 s period (target: at most 2 % of a core).

    .venv/bin/python bench/node_agent_cpu.py [--seconds 300] [--pods 30] [--peers 10]

Starts `dagpilot node-agent` as its own process with every probe on, as on a node: PODS pod
cgroups (each with a container running a sleeping process) under a kubepods tree of the
benchmark's own in this machine's cgroups (root only; without root, no pods), PEERS ping-mesh
peers (TCP listeners on loopback), the host's real /proc/diskstats, and a scrape of /metrics
every 15 s as Prometheus would make. The agent's CPU (user + system, all threads, from
/proc/PID/stat) is read once it serves and has made its first period, and again SECONDS later:
the steady-state share of one core. Its start-up CPU (imports) and its resident memory at the end
are reported on their own. Results go to bench/out/node_agent_cpu.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import select
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "out"
CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "cpuacct", "blkio")
PERIOD_S = 5.0
SCRAPE_EVERY_S = 15.0
START_TIMEOUT_S = 120.0
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of every thread of the process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # fields 14 and 15 of proc(5)


@contextlib.contextmanager
def pod_cgroups(count: int) -> Iterator[str | None]:
    """COUNT burstable pods, each a container cgroup with `sleep` in it; the kubepods path."""
    roots = [CGROUP_ROOT / name for name in V1_CONTROLLERS]
    if count == 0 or os.geteuid() != 0 or not all(root.is_dir() for root in roots):
        yield None
        return
    parent = f"dagpilot-bench-{uuid.uuid4().hex[:8]}/kubepods"
    made: list[Path] = []
    sleepers: list[subprocess.Popen[bytes]] = []
    try:
        for index in range(count):
            relative = Path(parent) / "burstable" / f"pod{uuid.UUID(int=index)}" / "container"
            procs = []
            for root in roots:
                path = root
                for part in relative.parts:
                    path = path / part
                    if not path.exists():
                        path.mkdir()
                        made.append(path)
                procs.append(str(path / "cgroup.procs"))
            join = 'for p in "$@"; do echo $$ > "$p"; done; exec sleep 3600'
            sleepers.append(subprocess.Popen(["/bin/sh", "-c", join, "sh", *procs]))
        yield parent
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait(timeout=10)
        for path in sorted(made, key=lambda p: len(p.parts), reverse=True):
            deadline = time.monotonic() + 10
            while path.exists():
                try:
                    path.rmdir()
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)


@contextlib.contextmanager
def listeners(count: int) -> Iterator[list[int]]:
    """COUNT TCP listeners on loopback that accept and close: the peers the mesh connects to."""
    selector = selectors.DefaultSelector()
    stop = threading.Event()
    sockets = []
    for _ in range(count):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        listener.setblocking(False)
        selector.register(listener, selectors.EVENT_READ)
        sockets.append(listener)

    def serve() -> None:
        while not stop.is_set():
            for key, _ in selector.select(0.5):
                with contextlib.suppress(BlockingIOError):
                    key.fileobj.accept()[0].close()  # type: ignore[union-attr]

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield [s.getsockname()[1] for s in sockets]
    finally:
        stop.set()
        thread.join(timeout=5)
        selector.close()
        for listener in sockets:
            listener.close()


def resident_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def start_agent(kubepods: str | None, peers: list[int]) -> tuple[subprocess.Popen[str], int]:
    command = [sys.executable, "-m", "dagpilot.cli", "node-agent", "--node-name", "bench",
               "--address", "127.0.0.1", "--port", "0", "--period", str(PERIOD_S)]
    if kubepods:
        command += ["--kubepods", kubepods]
    if peers:
        command += ["--peers", ",".join(f"peer{i}=127.0.0.1:{p}" for i, p in enumerate(peers))]
    agent = subprocess.Popen(command, text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    assert agent.stdout is not None
    ready, _, _ = select.select([agent.stdout], [], [], START_TIMEOUT_S)
    line = agent.stdout.readline() if ready else ""
    if "/metrics" not in line:
        agent.kill()
        raise SystemExit(f"the agent did not start: {line!r}")
    return agent, int(line.split("/metrics")[0].rsplit(":", 1)[1])


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        return str(reply.read().decode())


def measure(seconds: float, pods: int, peers: int) -> dict[str, Any]:
    with pod_cgroups(pods) as kubepods, listeners(peers) as ports:
        started = time.monotonic()
        agent, port = start_agent(kubepods, ports)
        try:
            startup_cpu = cpu_seconds(agent.pid)
            startup_wall = time.monotonic() - started
            time.sleep(PERIOD_S + 1)  # past the first period: baselines taken
            text = scrape(port)
            cpu0, wall0 = cpu_seconds(agent.pid), time.monotonic()
            scrapes = 0
            while time.monotonic() - wall0 < seconds:
                time.sleep(min(SCRAPE_EVERY_S, max(0.0, seconds - (time.monotonic() - wall0))))
                text = scrape(port)
                scrapes += 1
            cpu1, wall1 = cpu_seconds(agent.pid), time.monotonic()
            resident = resident_bytes(agent.pid)
        finally:
            agent.send_signal(signal.SIGTERM)
            agent.wait(timeout=30)
            assert agent.stdout is not None
            agent.stdout.close()
    series = [line for line in text.splitlines() if line and not line.startswith("#")]
    unavailable = [line for line in series
                   if line.startswith("dagpilot_probe_available") and line.endswith(" 0.0")]
    lossy = [line for line in series
             if line.startswith("dagpilot_ping_loss_ratio") and not line.endswith(" 0.0")]
    return {"period_s": PERIOD_S, "seconds": wall1 - wall0, "cpu_s": cpu1 - cpu0,
            "core_share": (cpu1 - cpu0) / (wall1 - wall0), "startup_cpu_s": startup_cpu,
            "startup_wall_s": startup_wall, "resident_bytes": resident,
            "pods": pods if kubepods else 0, "peers": peers,
            "scrapes": scrapes, "series": len(series), "unavailable_probes": unavailable,
            "peers_with_loss": lossy}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--pods", type=int, default=30)
    parser.add_argument("--peers", type=int, default=10)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # clean up cgroups on a kill too
    result = measure(args.seconds, args.pods, args.peers)
    result["machine"] = {"cpu": platform.processor() or platform.machine(),
                         "cores": os.cpu_count(), "kernel": platform.release(),
                         "load_average": os.getloadavg()}
    OUT.mkdir(exist_ok=True)
    (OUT / "node_agent_cpu.json").write_text(json.dumps(result, indent=2))
    print(f"node agent, period {PERIOD_S:g} s, {result['pods']} pods, {result['peers']} peers, "
          f"{result['series']} series: {100 * result['core_share']:.2f} % of one core over "
          f"{result['seconds']:.0f} s ({result['cpu_s']:.2f} s CPU, {result['scrapes']} "
          f"scrapes); start-up {result['startup_cpu_s']:.2f} s CPU; resident "
          f"{result['resident_bytes'] / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
