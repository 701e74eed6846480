"""`--cpus` on the real serving processes: `dagpilot serve scheduler --cpus C` and `dagpilot
serve extender --cpus C`, started as an SRE starts them against the session's sandbox, run
every one of their threads on C alone (read from /proc), and still serve: the scheduler binds a
pod, the extender answers a filter call over mTLS."""

from __future__ import annotations

import http.client
import json
import os
import ssl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dagpilot.sandbox.layout import Layout, free_ports
from dagpilot.sandbox.state import SandboxState
from tests.conftest import REPO
from tests.live.kube import admin, namespace
from tests.live.serve.scheduler_env import all_bound, create_pods, pod
from tests.live.serve.setup import serve_process
from tests.serve.extender_helpers import by_names

pytestmark = pytest.mark.live
# The last CPU this test may use. The check needs a host of two CPUs or more (CI's has two):
# on one CPU, an unpinned thread would be there too.
CPU = max(os.sched_getaffinity(0))


def thread_cpus(pid: int) -> dict[str, str]:
    """Each thread of `pid`: the CPUs it may run on (/proc's Cpus_allowed_list)."""
    allowed: dict[str, str] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except (FileNotFoundError, ProcessLookupError):  # the thread ended meanwhile
            continue
        for line in status.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                allowed[task.name] = line.split(":", 1)[1].strip()
    return allowed


@contextmanager
def serving(arguments: list[str], log: Path) -> Iterator[subprocess.Popen[str]]:
    """`dagpilot serve ARGUMENTS`, which says it is pinned to CPU, until the block ends."""
    with serve_process(arguments, log, deadline_s=120) as (process, line):
        assert f"CPUs [{CPU}]" in line, f"{line!r}; {log.read_text()[-2000:]}"
        yield process


def test_the_scheduler_pinned_to_one_cpu_runs_every_thread_there_and_binds(
        sandbox: SandboxState, tmp_path: Path) -> None:
    api = admin(sandbox)
    name = "dagpilot-pinned"
    with serving(["scheduler", "--kubeconfig", sandbox.kubeconfig, "--models",
                  str(REPO / "models"), "--scheduler-name", name, "--no-leader-elect",
                  "--metrics-port", str(free_ports(1)[0]), "--metrics-address", "127.0.0.1",
                  "--cpus", str(CPU)], tmp_path / "scheduler.log") as process, \
            namespace(api, "pinned") as ns:
        create_pods(api, ns, [pod("p-0", scheduler=name)])
        all_bound(api, ns, 1)  # the loop, the policy thread and a bind thread have run
        threads = thread_cpus(process.pid)
        assert len(threads) > 3 and set(threads.values()) == {str(CPU)}, threads


def test_the_extender_pinned_to_one_cpu_runs_every_thread_there_and_answers(
        sandbox: SandboxState, tmp_path: Path) -> None:
    pki = Layout(Path(sandbox.kubeconfig).parent).pki
    port = free_ports(1)[0]
    with serving(["extender", "--kubeconfig", sandbox.kubeconfig, "--models",
                  str(REPO / "models"), "--port", str(port), "--tls-cert",
                  str(pki / "serving.crt"), "--tls-key", str(pki / "serving.key"),
                  "--client-ca", str(pki / "ca.crt"), "--address", "127.0.0.1",
                  "--cpus", str(CPU)], tmp_path / "extender.log") as process:
        context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        context.load_cert_chain(str(pki / "scheduler-to-extender.crt"),
                                str(pki / "scheduler-to-extender.key"))
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=context,
                                                 timeout=30)
        connection.request("POST", "/filter", body=by_names(["no-such-node"]),
                           headers={"Content-Type": "application/json"})
        reply = connection.getresponse()
        answer = json.loads(reply.read())
        connection.close()
        assert reply.status == 200 and "no-such-node" in answer["FailedNodes"], answer
        threads = thread_cpus(process.pid)  # the watches, the server and its handler
        assert len(threads) > 3 and set(threads.values()) == {str(CPU)}, threads
