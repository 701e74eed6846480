"""Where a cgroup controller lives: cgroup v2 when it has the controller, else v1.

A node may mount v2 alone (/sys/fs/cgroup), v1 alone, or both ("hybrid": v1 controllers under
/sys/fs/cgroup/<name>, an empty v2 under /sys/fs/cgroup/unified). The agent looks at files, not
at its own mount table, so a DaemonSet can pass the host's cgroup tree mounted anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Controller = Literal["memory", "cpu", "io"]

# v1 names of each controller's mount (a combined cpu,cpuacct mount has either name or both)
# and a file that only that controller's hierarchy has.
_V1_DIRS: dict[Controller, tuple[str, ...]] = {
    "memory": ("memory",),
    "cpu": ("cpuacct", "cpu,cpuacct", "cpuacct,cpu"),
    "io": ("blkio",),
}
_V1_MARKERS: dict[Controller, str] = {
    "memory": "memory.usage_in_bytes",
    "cpu": "cpuacct.usage",
    "io": "blkio.throttle.io_service_bytes_recursive",
}


@dataclass(frozen=True, slots=True)
class Hierarchy:
    """One controller's root directory and the cgroup version that serves it."""

    controller: Controller
    version: Literal[1, 2]
    root: Path


def find_hierarchy(cgroup_root: Path, controller: Controller) -> Hierarchy | str:
    """The controller's hierarchy under cgroup_root, or why there is none."""
    for unified in (cgroup_root, cgroup_root / "unified"):
        if controller in _v2_controllers(unified):
            return Hierarchy(controller, 2, unified)
    for name in _V1_DIRS[controller]:
        root = cgroup_root / name
        if (root / _V1_MARKERS[controller]).is_file():
            return Hierarchy(controller, 1, root)
    return (f"no {controller} controller under {cgroup_root}: cgroup v2 does not enable it and "
            f"no v1 hierarchy ({', '.join(_V1_DIRS[controller])}) is mounted")


def _v2_controllers(root: Path) -> set[str]:
    try:
        return set((root / "cgroup.controllers").read_text().split())
    except OSError:
        return set()
