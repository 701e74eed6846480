"""A GPU's PCIe root complex, from the device ID the kubelet reports.

Device plugins name GPUs by PCI address (`0000:3b:00.0`, AMD's plugin) or by UUID (`GPU-…`,
NVIDIA's). A PCI address resolves through /sys/bus/pci/devices/<address>, a link into
/sys/devices/pci<domain>:<bus>/…: that first component is the host bridge, the root complex.
An NVIDIA UUID is first mapped to its PCI address through the driver's
/proc/driver/nvidia/gpus/<address>/information ("GPU UUID: GPU-…"). Anything else (MIG slices,
other plugins) has root complex "unknown": it is not guessed.
"""

from __future__ import annotations

import re
from pathlib import Path

UNKNOWN = "unknown"
_PCI_ADDRESS = re.compile(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")
_HOST_BRIDGE = re.compile(r"pci[0-9a-fA-F]{4}:[0-9a-fA-F]{2}")


class RootComplexes:
    """Resolves device IDs, remembering each (a GPU does not change slot while the node runs)."""

    def __init__(self, sys_root: Path, proc_root: Path) -> None:
        self._sys_root = sys_root
        self._proc_root = proc_root
        self._known: dict[str, str] = {}

    def of(self, device_id: str) -> str:
        if device_id not in self._known:
            address = device_id if _PCI_ADDRESS.fullmatch(device_id) else self._nvidia_address(
                device_id)
            self._known[device_id] = self._host_bridge(address) if address else UNKNOWN
        return self._known[device_id]

    def _host_bridge(self, address: str) -> str:
        link = self._sys_root / "bus" / "pci" / "devices" / address.lower()
        try:
            target = link.resolve(strict=True)
        except OSError:
            return UNKNOWN
        return next((part for part in target.parts if _HOST_BRIDGE.fullmatch(part)), UNKNOWN)

    def _nvidia_address(self, uuid: str) -> str | None:
        for information in sorted((self._proc_root / "driver" / "nvidia" / "gpus").glob(
                "*/information")):
            for line in information.read_text(errors="replace").splitlines():
                key, _, value = line.partition(":")
                if key.strip() == "GPU UUID" and value.strip() == uuid:
                    return information.parent.name
        return None
