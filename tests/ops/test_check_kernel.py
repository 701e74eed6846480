"""`dagpilot ops check-kernel`: for real on this machine, and on hand-made host trees where a
needed item is missing (kernel config from /boot, /proc/config.gz or nowhere)."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dagpilot.live.node_agent.ebpf_loader import default_build_dir
from dagpilot.ops.check_kernel import Roots, check_kernel, failed_needs
from dagpilot.ops.kernel_config import read_kernel_config

from ..live.feedback.conftest import ebpf_build  # noqa: F401 (the fixture)

CLI = (sys.executable, "-m", "dagpilot.cli", "ops", "check-kernel")
CONFIG = "CONFIG_BPF=y\nCONFIG_BPF_SYSCALL=y\n# CONFIG_KPROBES is not set\nCONFIG_HZ=250\n"


def test_config_from_boot_then_proc_then_nowhere(tmp_path: Path) -> None:
    boot, proc = tmp_path / "boot", tmp_path / "proc"
    boot.mkdir()
    proc.mkdir()
    assert read_kernel_config(boot, proc, "6.1.0").state("CONFIG_BPF") is None
    with gzip.open(proc / "config.gz", "wt") as packed:
        packed.write(CONFIG.replace("CONFIG_BPF_SYSCALL=y", "CONFIG_BPF_SYSCALL=m"))
    from_proc = read_kernel_config(boot, proc, "6.1.0")
    assert from_proc.source.endswith("config.gz")
    assert (from_proc.state("CONFIG_BPF_SYSCALL"), from_proc.state("CONFIG_KPROBES")) == ("m", "n")
    (boot / "config-6.1.0").write_text(CONFIG)
    from_boot = read_kernel_config(boot, proc, "6.1.0")
    assert from_boot.source.endswith("config-6.1.0")
    assert from_boot.state("CONFIG_BPF_SYSCALL") == "y"
    assert from_boot.state("CONFIG_HZ") == "250"


def test_a_host_without_bpf_syscall_or_btf_fails(tmp_path: Path) -> None:
    proc, boot, sys_root, cgroup = (tmp_path / name for name in ("proc", "boot", "sys", "cg"))
    for folder in (proc, boot, sys_root, cgroup):
        folder.mkdir()
    (boot / "config-test").write_text(CONFIG.replace("CONFIG_BPF_SYSCALL=y\n", ""))
    (proc / "mounts").write_text("tracefs /sys/kernel/tracing tracefs rw 0 0\n")
    checks = check_kernel(Roots(proc, sys_root, boot, cgroup), tmp_path / "no-btf",
                          tmp_path / "no-build", release="test")
    verdicts = {check.item: check.verdict for check in checks}
    assert verdicts["CONFIG_BPF"] == "PASS"
    assert verdicts["CONFIG_BPF_SYSCALL"] == "FAIL"
    assert verdicts["BTF"] == "FAIL" and verdicts["tracefs"] == "PASS"
    assert verdicts["bpffs"] == "FAIL" and verdicts["cgroup cpu"] == "FAIL"
    failed = {check.item for check in failed_needs(checks)}
    assert failed == {"CONFIG_BPF_SYSCALL", "BTF", "cgroup cpu", "cgroup memory",
                      "load+attach+detach tp_btf/sched_switch"}
    lines = [check.line() for check in checks]
    assert any("fix: a kernel built with CONFIG_BPF_SYSCALL=y" in line for line in lines)
    assert any("make -C ebpf" in line for line in lines)


def test_the_cli_on_this_machine(ebpf_build: Path) -> None:  # noqa: F811
    if os.geteuid() != 0:
        pytest.skip("loading BPF needs root")
    done = subprocess.run([*CLI, "--ebpf-dir", str(ebpf_build)], capture_output=True,
                          text=True, timeout=120, check=False)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    by_item = {line.split()[1].rstrip(":"): line.split()[0] for line in lines if line[:4] in
               ("PASS", "FAIL", "UNKN")}
    assert {"CONFIG_BPF", "CONFIG_BPF_SYSCALL", "BTF", "tracefs", "bpffs", "kprobes",
            "load+attach+detach"} <= set(by_item)
    assert by_item["BTF"] == by_item["load+attach+detach"] == "PASS"
    assert any(line.startswith("PASS    load+attach+detach") and "detached" in line
               for line in lines)


def test_the_cli_exits_non_zero_without_btf(tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "--btf", str(tmp_path / "missing"), "--ebpf-dir",
                           str(default_build_dir())], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"FAIL    BTF: no BTF at {tmp_path / 'missing'}" in done.stdout
    assert "needed item(s) missing" in done.stdout
