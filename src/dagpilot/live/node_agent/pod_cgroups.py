"""Finding pod cgroups in the kubelet's layout, for the cgroupfs and the systemd drivers.

cgroupfs:  <parent>/pod<uid>                      (Guaranteed)
           <parent>/burstable/pod<uid>            <parent>/besteffort/pod<uid>
systemd:   kubepods.slice/kubepods-pod<uid>.slice (the uid's dashes written as underscores)
           kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice, ...

<parent> is `kubepods` or `kubepods.slice` under each controller's hierarchy by default; any
path relative to the hierarchy can be configured (tests use a cgroup of their own). A parent
ending in `.slice` is read in the systemd layout. Containers are child cgroups of the pod's; the
probes read the pod's hierarchical counters, so they count every container.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .cgroup_hierarchy import Controller, Hierarchy, find_hierarchy
from .reading import ProbeUnavailable

AUTO = "auto"
DEFAULT_PARENTS = ("kubepods.slice", "kubepods")
_QOS_CLASSES = ("burstable", "besteffort")
_UID = r"[0-9A-Za-z_-]+"


@dataclass(frozen=True, slots=True)
class PodCgroup:
    uid: str  # metadata.uid as the API server writes it (dashes)
    qos: str  # guaranteed | burstable | besteffort
    path: Path  # the pod's cgroup directory in one controller's hierarchy


def find_parent(hierarchy_root: Path, kubepods: str) -> Path | str:
    """The directory that holds the pods, or why there is none."""
    names = DEFAULT_PARENTS if kubepods == AUTO else (kubepods,)
    for name in names:
        if (hierarchy_root / name).is_dir():
            return hierarchy_root / name
    return f"no kubepods cgroup under {hierarchy_root} (looked for {', '.join(names)})"


def find_pods(parent: Path) -> list[PodCgroup]:
    """Every pod cgroup under `parent`, sorted by uid."""
    finder = _systemd_pods if parent.name.endswith(".slice") else _cgroupfs_pods
    return sorted(finder(parent), key=lambda pod: pod.uid)


def _cgroupfs_pods(parent: Path) -> Iterator[PodCgroup]:
    pattern = re.compile(rf"pod({_UID})")
    for qos, folder in (("guaranteed", parent), *((q, parent / q) for q in _QOS_CLASSES)):
        for uid, path in _matching_dirs(folder, pattern):
            yield PodCgroup(uid, qos, path)


def _systemd_pods(parent: Path) -> Iterator[PodCgroup]:
    stem = parent.name.removesuffix(".slice")
    folders = [("guaranteed", parent, stem)]
    folders += [(q, parent / f"{stem}-{q}.slice", f"{stem}-{q}") for q in _QOS_CLASSES]
    for qos, folder, prefix in folders:
        pattern = re.compile(rf"{re.escape(prefix)}-pod({_UID})\.slice")
        for uid, path in _matching_dirs(folder, pattern):
            yield PodCgroup(uid.replace("_", "-"), qos, path)


def _matching_dirs(folder: Path, pattern: re.Pattern[str]) -> Iterator[tuple[str, Path]]:
    try:
        entries = list(folder.iterdir())
    except OSError:  # no pod of this QoS class yet, or the folder vanished meanwhile
        return
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match and entry.is_dir():
            yield match.group(1), entry


def hierarchy_pods(cgroup_root: Path, controller: Controller, kubepods: str,
                   probe: str) -> tuple[Hierarchy, list[PodCgroup]]:
    """The controller's hierarchy and its pods; ProbeUnavailable when either is missing."""
    hierarchy = find_hierarchy(cgroup_root, controller)
    if isinstance(hierarchy, str):
        raise ProbeUnavailable(probe, hierarchy)
    parent = find_parent(hierarchy.root, kubepods)
    if isinstance(parent, str):
        raise ProbeUnavailable(probe, parent)
    return hierarchy, find_pods(parent)
