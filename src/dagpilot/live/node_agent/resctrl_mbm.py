"""DRAM traffic from resctrl's Memory Bandwidth Monitoring (Intel RDT MBM, AMD QoS, Arm MPAM).

With resctrl mounted, every monitoring group has mon_data/mon_L3_<domain>/mbm_total_bytes, a
byte counter per L3 domain. The root group and the top-level control groups partition the
node's tasks, so their counters summed are the node's traffic (monitor-only groups under
mon_groups/ are subsets of their parent and are not added).
"""

from __future__ import annotations

from pathlib import Path

from dagpilot.core.errors import InvalidInput

NAME = "resctrl_mbm"
FEATURE = "mbm_total_bytes"


def unavailable_reason(sys_root: Path, proc_root: Path) -> str | None:
    """Why MBM cannot be read here, or None when it can."""
    mount = sys_root / "fs" / "resctrl"
    if not (mount / "info").is_dir():
        try:
            known = "resctrl" in (proc_root / "filesystems").read_text().split()
        except OSError:
            known = False
        if not known:
            return "resctrl: the kernel has no resctrl file system"
        return f"resctrl: not mounted at {mount} (mount -t resctrl resctrl {mount})"
    features = mount / "info" / "L3_MON" / "mon_features"
    if not features.is_file() or FEATURE not in features.read_text().split():
        return f"resctrl: no {FEATURE} monitoring (the CPU has no memory bandwidth monitoring)"
    return None


class ResctrlMbmCounter:
    """The node's DRAM bytes so far, summed over groups and L3 domains."""

    name = NAME

    def __init__(self, sys_root: Path) -> None:
        self._mount = sys_root / "fs" / "resctrl"

    def bytes_total(self) -> float:
        groups = [self._mount] + [path for path in self._mount.iterdir()
                                  if path.name != "info" and (path / "mon_data").is_dir()]
        return float(sum(_read_counter(counter) for group in groups
                         for counter in (group / "mon_data").glob(f"mon_L3_*/{FEATURE}")))

    def close(self) -> None:
        """Nothing to release: files are opened per read."""


def _read_counter(path: Path) -> int:
    text = path.read_text().strip()
    if not text.isdigit():  # "Unavailable" when the hardware has no counter for the group
        raise InvalidInput(str(path), "", FEATURE, f"the counter reads {text!r}")
    return int(text)
