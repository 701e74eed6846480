"""Components that fail to start are named, with their log file; stop is by pid only."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from dagpilot.sandbox import launcher, process, state
from dagpilot.sandbox.errors import SandboxError
from dagpilot.sandbox.layout import free_ports, port_taken


def _component(name: str, code: str, ready: bool = False) -> process.Component:
    return process.Component(name, [sys.executable, "-c", code], lambda: ready, 0)


def test_a_component_that_exits_is_named_with_its_log(tmp_path: Path) -> None:
    component = _component("etcd", "import sys; print('boom'); sys.exit(3)")
    running = process.start(component, tmp_path)
    with pytest.raises(SandboxError, match=r"^etcd: exited during start-up; see .*etcd\.log"):
        process.wait_ready(component, running, deadline_s=30)
    assert "boom" in (tmp_path / "etcd.log").read_text()


def test_a_taken_port_is_named_in_the_error(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert port_taken(port)
        code = (f"import socket; s=socket.socket(); "
                f"print('bind: address already in use') if s.connect_ex(('127.0.0.1', {port})) "
                f"== 0 else None")
        component = _component("kube-apiserver", code)
        running = process.start(component, tmp_path)
        with pytest.raises(SandboxError, match=r"kube-apiserver: .*address already in use"):
            process.wait_ready(component, running, deadline_s=30)


def test_stop_ends_the_process_and_spares_a_pid_that_is_not_ours(tmp_path: Path) -> None:
    component = _component("kwok", "import time; time.sleep(60)")
    running = process.start(component, tmp_path)
    assert process.alive(running)
    stranger = process.Running("kwok", running.pid, 0, tmp_path / "x.log", "/bin/not-kwok")
    assert not process.alive(stranger)  # a recycled pid running another program
    process.stop([running])
    assert not process.alive(running)


def test_free_ports_are_distinct() -> None:
    ports = free_ports(9)
    assert len(set(ports)) == 9


def test_a_missing_debian_package_is_one_clear_line(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxError, match=r"^prometheus: prometheus is not installed "
                                           r"\(Debian package prometheus"):
        launcher.up("builtin:small", tmp_path / "sbx", twin=False)
    assert not (tmp_path / "sbx" / "sandbox.json").exists()


def test_status_without_a_sandbox_and_a_damaged_state_file(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="no sandbox in"):
        launcher.status(tmp_path)
    (tmp_path / "sandbox.json").write_text('{"version": 1, "components": {"etcd": {}}}')
    with pytest.raises(Exception, match="damaged sandbox state"):
        state.read(tmp_path / "sandbox.json")
    assert launcher.down(tmp_path / "nothing-here") == []
