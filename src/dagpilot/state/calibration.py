"""What the encoder must know about one environment (a cloud, a simulated cluster).

The semantic bands (bands.py) are ratios, so that clusters with different absolute latencies
map alike; these figures are what the ratios are taken against. The defaults are typical
device figures, and equal the simulator's own (a test checks it), so a policy trained in the
simulator reads a live cluster the same way once its calibration is set.
"""

from __future__ import annotations

from dataclasses import dataclass

from dagpilot.core.types import DiskKind


@dataclass(frozen=True, slots=True)
class Calibration:
    # Nominal (idle) await of one I/O per disk kind, ms: an NVMe 4 KiB read takes ~0.1 ms,
    # a SATA SSD ~0.5 ms, cloud network block storage (EBS gp3, PD-SSD, Azure Premium) 1-2 ms,
    # a 7,200 rpm disk ~8 ms (seek plus half a rotation).
    await_nvme_ms: float = 0.1
    await_ssd_ms: float = 0.5
    await_network_ms: float = 2.0
    await_hdd_ms: float = 8.0
    # RTT between two nodes of one rack, ms: the unit of the distance bands.
    same_rack_rtt_ms: float = 0.1
    # Metrics scrape interval (Prometheus), s: the unit of signal age.
    scrape_interval_s: float = 15.0

    def nominal_await_ms(self, kind: DiskKind) -> float:
        return {DiskKind.NVME: self.await_nvme_ms, DiskKind.SSD: self.await_ssd_ms,
                DiskKind.NETWORK: self.await_network_ms, DiskKind.HDD: self.await_hdd_ms}[kind]
