"""Which of a node's free GPUs a pod gets: device choice, not scheduling.

kube-scheduler never picks devices: it binds a pod to a node, and the node's kubelet (its
device manager and the device plugin) picks the GPUs. dagpilot's placements name them for now
because the simulator has no kubelet of its own; the issue that makes the simulated edge
honest moves this choice to the simulated kubelet, and the scheduler's placements will then
name a node only.
"""

from __future__ import annotations

from dagpilot.core.types import NodeSpec


def choose_gpus(spec: NodeSpec, free: tuple[int, ...], wanted: int,
                model: str | None) -> tuple[int, ...]:
    """`wanted` free GPUs on one PCIe root complex (a pod spanning complexes gets a fifth of
    the bandwidth): the complex with the fewest free GPUs that still has enough, keeping
    larger free groups for larger pods. () when no complex has enough: the node picks."""
    if wanted < 1:
        return ()
    groups: dict[int, list[int]] = {}
    for index in free:
        gpu = spec.gpus[index]
        if model is None or gpu.model == model:
            groups.setdefault(gpu.root_complex, []).append(index)
    fitting = [group for group in groups.values() if len(group) >= wanted]
    if not fitting:
        return ()
    return tuple(min(fitting, key=len)[:wanted])
