"""The kubelet's device allocation: which of a node's free GPUs a bound pod gets.

kube-scheduler binds a pod to a node and never picks devices; the node's kubelet does, its
device manager asking the device plugin for a preferred allocation (GetPreferredAllocation).
NVIDIA's plugin prefers GPUs that talk best to each other, which on the PCIe-only nodes
simulated here means one root complex. So every scheduler's pod gets the same device choice,
and a scheduler can differ only in the node it chooses:

- some root complex has enough free GPUs: the one with the fewest free that still has enough
  (best fit: larger free groups stay whole for larger pods), ties to the complex whose first
  free GPU comes first, its lowest-numbered GPUs;
- none has: the fewest complexes, taking the complexes with the most free GPUs first (ties in
  the same order), all of each but the last, the lowest-numbered of that one.

Deterministic, and ported as is to the native core (csrc/cluster.c: preferred_gpus). No
scheduler here allocates devices through DRA ResourceClaims, so no DRA allocator is modelled.
"""

from __future__ import annotations

from dagpilot.core.types import NodeSpec


def preferred_gpus(spec: NodeSpec, free: tuple[int, ...], wanted: int,
                   model: str | None) -> tuple[int, ...]:
    """`wanted` of the node's `free` GPUs (of `model`, any when None), in index order; () when
    the pod asks for none or the node has too few (the caller says which)."""
    groups: dict[int, list[int]] = {}  # root complex -> free GPUs, in order of first free GPU
    for index in free:
        gpu = spec.gpus[index]
        if model is None or gpu.model == model:
            groups.setdefault(gpu.root_complex, []).append(index)
    if wanted < 1 or sum(len(group) for group in groups.values()) < wanted:
        return ()
    fitting = [group for group in groups.values() if len(group) >= wanted]
    if fitting:
        return tuple(min(fitting, key=len)[:wanted])
    chosen: list[int] = []
    for group in sorted(groups.values(), key=len, reverse=True):  # stable: ties keep order
        chosen.extend(group[:wanted - len(chosen)])
        if len(chosen) == wanted:
            break
    return tuple(sorted(chosen))
