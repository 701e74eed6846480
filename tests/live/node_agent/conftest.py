"""Real cgroups and real processes for the node agent's probes, removed even when a test fails.

`kube_cgroups` makes a kubelet-style tree (<test parent>/kubepods/<qos>/pod<uid>/<container>) in
every hierarchy of this machine (cgroup v1 memory, cpuacct and blkio here; v2 where it has the
controllers) under a name unique to the test, and starts workload.py processes inside.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from dagpilot.live.node_agent.cgroup_hierarchy import Hierarchy, find_hierarchy

CGROUP_ROOT = Path("/sys/fs/cgroup")
WORKLOAD = Path(__file__).with_name("workload.py")
AGENT = (sys.executable, "-m", "dagpilot.cli", "node-agent")
REPO_DOCS = Path(__file__).resolve().parents[3] / "docs"
START_TIMEOUT_S = 60.0
JOIN_AND_EXEC = 'IFS=:; for p in $DAGPILOT_TEST_CGROUPS; do echo $$ > "$p"; done; exec "$@"'


def needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: real cgroups, loop devices and network namespaces")


@dataclass
class KubeCgroups:
    """A kubelet-style pod tree of the test's own, in every hierarchy."""

    hierarchies: dict[str, Hierarchy]
    kubepods: str  # the parent, relative to each hierarchy root (the probes' --kubepods)
    made: list[Path] = field(default_factory=list)
    processes: list[subprocess.Popen[str]] = field(default_factory=list)

    def make_pod(self, uid: str, qos: str = "burstable") -> list[Path]:
        """The pod's cgroup with one container cgroup below it; the containers' cgroup.procs."""
        relative = Path(self.kubepods) / ("" if qos == "guaranteed" else qos) / f"pod{uid}"
        procs: list[Path] = []
        for root in sorted({h.root for h in self.hierarchies.values()}):
            container = self._make(root, relative / "container")
            procs.append(container / "cgroup.procs")
        return procs

    def pod_dir(self, controller: str, uid: str, qos: str = "burstable") -> Path:
        relative = Path(self.kubepods) / ("" if qos == "guaranteed" else qos) / f"pod{uid}"
        return self.hierarchies[controller].root / relative

    def start(self, procs: list[Path], *argv: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
        """workload.py in the cgroups, once it has done its work: (process, what it reports)."""
        env = dict(os.environ, DAGPILOT_TEST_CGROUPS=":".join(map(str, procs)))
        # The shell joins the cgroups, then becomes the workload: all its memory is charged
        # there, as a container's is (cgroup v1 does not move charges made before a join).
        process = subprocess.Popen(["/bin/sh", "-c", JOIN_AND_EXEC, "sh", sys.executable,
                                    str(WORKLOAD), *argv], env=env, text=True,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.processes.append(process)
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT_S)
        assert ready, f"workload {argv} said nothing in {START_TIMEOUT_S} s"
        line = process.stdout.readline()
        assert line, f"workload {argv} exited with {process.wait(5)}"
        return process, json.loads(line)

    def stop_all(self) -> None:
        for process in self.processes:
            with contextlib.suppress(OSError):
                assert process.stdin is not None
                process.stdin.close()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
            assert process.stdout is not None
            process.stdout.close()

    def remove(self) -> None:
        """rmdir every cgroup made, deepest first (a cgroup just emptied can stay busy a moment)."""
        for path in sorted(self.made, key=lambda p: len(p.parts), reverse=True):
            deadline = time.monotonic() + 10
            while path.exists():
                try:
                    path.rmdir()
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)

    def _make(self, root: Path, relative: Path) -> Path:
        path = root
        for part in relative.parts:
            parent, path = path, path / part
            if not path.exists():
                self._enable_v2_controllers(root, parent)
                path.mkdir()
                self.made.append(path)
        return path

    def _enable_v2_controllers(self, root: Path, parent: Path) -> None:
        """cgroup v2 gives a child only the controllers its parent enables for it."""
        wanted = [h.controller for h in self.hierarchies.values() if h.version == 2
                  and h.root == root]
        if wanted:
            (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))


@pytest.fixture
def kube_cgroups() -> Iterator[KubeCgroups]:
    needs_root()
    hierarchies: dict[str, Hierarchy] = {}
    for controller in ("memory", "cpu", "io"):
        found = find_hierarchy(CGROUP_ROOT, controller)
        if isinstance(found, str):
            pytest.skip(found)
        hierarchies[controller] = found
    tree = KubeCgroups(hierarchies, f"dagpilot-test-{os.getpid()}-{uuid.uuid4().hex[:8]}/kubepods")
    try:
        yield tree
    finally:
        tree.stop_all()
        tree.remove()
    assert not any(path.exists() for path in tree.made)


def stop_process(process: subprocess.Popen[str]) -> int:
    """SIGTERM, then SIGKILL after 10 s; the exit status."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
    return process.wait(timeout=10)


def run(*argv: str) -> str:
    """A setup command (ip, losetup, ...) that must succeed; its stdout."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, f"{' '.join(argv)}: {done.stderr.strip()}"
    return done.stdout


@dataclass
class AgentProcess:
    process: subprocess.Popen[str]
    port: int


def start_agent(*options: str, netns: str | None = None) -> AgentProcess:
    """`dagpilot node-agent OPTIONS` (inside a network namespace if given), once it serves."""
    prefix = ("ip", "netns", "exec", netns) if netns else ()
    process = subprocess.Popen([*prefix, *AGENT, *options], text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT_S)
    line = process.stdout.readline() if ready else ""
    if "/metrics" not in line:
        stop_process(process)
        process.stdout.close()
        raise AssertionError(f"node-agent {options} did not start: {line!r}")
    return AgentProcess(process, int(line.split("/metrics")[0].rsplit(":", 1)[1]))


def stop_agent(agent: AgentProcess) -> int:
    code = stop_process(agent.process)
    assert agent.process.stdout is not None
    agent.process.stdout.close()
    return code


Series = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(port: int, host: str = "127.0.0.1") -> Series:
    """Every sample of the agent's /metrics: (name, labels) -> value."""
    with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(series: Series, name: str, **labels: str) -> float | None:
    return series.get((name, frozenset(labels.items())))


def scrape_until(port: int, condition: Callable[[Series], bool], timeout_s: float = 30.0,
                 host: str = "127.0.0.1") -> Series:
    """Scrape until condition holds (the agent measures every period); the last scrape."""
    deadline = time.monotonic() + timeout_s
    while True:
        series = scrape(port, host)
        if condition(series):
            return series
        assert time.monotonic() < deadline, f"condition not met in {timeout_s} s: {series}"
        time.sleep(0.2)  # a scrape interval, not a race: the agent publishes once per period
