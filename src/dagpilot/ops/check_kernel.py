"""`dagpilot ops check-kernel`: can this node run the node agent's eBPF task feedback?

One Check per item, PASS or FAIL with the fix (UNKNOWN where the kernel config is nowhere to
be found: the load test then decides). `needed` items are what the agent's eBPF path needs
(docs/LIVE.md, "Per-task feedback"); the others are reported for the operator (kprobes are not
used; tracefs and bpffs are not needed by BTF tracepoints). Without a needed item the agent still
runs, on cgroup figures alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dagpilot.live.node_agent.cgroup_hierarchy import Controller, find_hierarchy
from dagpilot.live.node_agent.ebpf_loader import btf_problem, check_attach

from .kernel_config import KernelConfig, read_kernel_config

Verdict = Literal["PASS", "FAIL", "UNKNOWN"]


@dataclass(frozen=True, slots=True)
class Check:
    item: str
    verdict: Verdict
    detail: str
    fix: str  # "" when it passes
    needed: bool

    def line(self) -> str:
        need = "" if self.needed else " (optional)"
        fix = f"  fix: {self.fix}" if self.verdict != "PASS" and self.fix else ""
        return f"{self.verdict:7} {self.item}{need}: {self.detail}{fix}"


@dataclass(frozen=True, slots=True)
class Roots:
    """Where the host's files are (tests point these at folders of their own)."""

    proc: Path = Path("/proc")
    sys: Path = Path("/sys")
    boot: Path = Path("/boot")
    cgroup: Path = Path("/sys/fs/cgroup")


def check_kernel(roots: Roots, btf: Path, ebpf_dir: Path, release: str | None = None
                 ) -> list[Check]:
    config = read_kernel_config(roots.boot, roots.proc, release)
    mounts = _mount_types(roots.proc / "mounts")
    return [_config_option(config, "CONFIG_BPF", "the BPF subsystem"),
            _config_option(config, "CONFIG_BPF_SYSCALL", "the bpf() system call"),
            _btf(btf), _tracefs(mounts), _bpffs(mounts), *_cgroups(roots.cgroup),
            _kprobes(config, roots.sys), _load_attach(ebpf_dir, btf)]


def failed_needs(checks: Sequence[Check]) -> list[Check]:
    return [check for check in checks if check.needed and check.verdict == "FAIL"]


def _config_option(config: KernelConfig, option: str, what: str) -> Check:
    state = config.state(option)
    if state is None:
        return Check(option, "UNKNOWN", "no kernel config in /boot or /proc/config.gz",
                     "install the kernel's config as /boot/config-$(uname -r)", needed=True)
    if state == "y":
        return Check(option, "PASS", f"{what}: y in {config.source}", "", needed=True)
    return Check(option, "FAIL", f"{what}: {state} in {config.source}",
                 f"a kernel built with {option}=y", needed=True)


def _btf(btf: Path) -> Check:
    problem = btf_problem(btf)
    if problem:
        return Check("BTF", "FAIL", problem, "a kernel built with CONFIG_DEBUG_INFO_BTF=y",
                     needed=True)
    return Check("BTF", "PASS", f"{btf} ({btf.stat().st_size} bytes)", "", needed=True)


def _tracefs(mounts: dict[str, list[str]]) -> Check:
    where = mounts.get("tracefs", [])
    if where:
        return Check("tracefs", "PASS", f"mounted at {', '.join(where)}", "", needed=False)
    return Check("tracefs", "FAIL", "not mounted (BTF tracepoints do not need it)",
                 "mount -t tracefs nodev /sys/kernel/tracing", needed=False)


def _bpffs(mounts: dict[str, list[str]]) -> Check:
    where = mounts.get("bpf", [])
    if where:
        return Check("bpffs", "PASS", f"mounted at {', '.join(where)}", "", needed=False)
    return Check("bpffs", "FAIL", "not mounted (the agent pins nothing)",
                 "mount -t bpf bpf /sys/fs/bpf", needed=False)


def _cgroups(cgroup_root: Path) -> list[Check]:
    checks = []
    wanted: tuple[tuple[Controller, bool], ...] = (("cpu", True), ("memory", True), ("io", False))
    for controller, needed in wanted:
        found = find_hierarchy(cgroup_root, controller)
        item = f"cgroup {controller}"
        if isinstance(found, str):
            checks.append(Check(item, "FAIL", found, f"enable the {controller} controller "
                                "(cgroup v2 cgroup.subtree_control, or mount its v1 hierarchy)",
                                needed=needed))
        else:
            checks.append(Check(item, "PASS", f"cgroup v{found.version} at {found.root}", "",
                                needed=needed))
    return checks


def _kprobes(config: KernelConfig, sys_root: Path) -> Check:
    pmu = sys_root / "bus" / "event_source" / "devices" / "kprobe"
    if pmu.exists():
        return Check("kprobes", "PASS", f"{pmu} present (the agent does not use them)", "",
                     needed=False)
    state = config.state("CONFIG_KPROBES")
    said = "no kernel config" if state is None else f"CONFIG_KPROBES={state}"
    return Check("kprobes", "FAIL", f"absent ({said}); the agent uses tracepoints only",
                 "none needed; a kernel with CONFIG_KPROBES=y for kprobe tools", needed=False)


def _load_attach(ebpf_dir: Path, btf: Path) -> Check:
    worked, what = check_attach(ebpf_dir, btf)
    item = "load+attach+detach tp_btf/sched_switch"
    if worked:
        return Check(item, "PASS", what, "", needed=True)
    return Check(item, "FAIL", what, "run as root (CAP_BPF, CAP_PERFMON) with the objects "
                 "built: make -C ebpf", needed=True)


def _mount_types(mounts: Path) -> dict[str, list[str]]:
    """filesystem type -> mount points, from /proc/mounts."""
    found: dict[str, list[str]] = {}
    try:
        lines = mounts.read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split()
        if len(fields) >= 3:
            found.setdefault(fields[2], []).append(fields[1])
    return found
