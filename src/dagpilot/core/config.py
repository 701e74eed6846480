"""Grouped, frozen settings: loaded once (defaults, or a TOML file) and passed down as arguments."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.toml_documents import read_toml
from dagpilot.core.setting_ranges import check_all

GIB = 2**30


@dataclass(frozen=True)
class LoaderSettings:
    """Defaults for what a trace does not record."""

    default_cpu: float = 1.0
    default_memory: int = 1 * GIB
    default_runtime_s: float = 60.0
    # Alibaba 2018 normalises plan_mem to 0..100 of a machine's memory; its machines had 96 cores.
    alibaba_machine_memory: int = 512 * GIB
    seed: int = 0  # seeds built-in workloads and cluster sampling, so a spec names one result


@dataclass(frozen=True)
class ValidatorSettings:
    max_gap_s: float = 30.0  # a longer gap between metric samples breaks time continuity


@dataclass(frozen=True)
class PhysicsSwitches:
    """Which physical effects the simulator applies; `enabled = false` turns them all off."""

    enabled: bool = True
    memory_bandwidth: bool = True
    storage_io: bool = True
    network: bool = True
    gpu_pcie: bool = True
    memory: bool = True  # page cache on top of the working set, and OOM kills
    faults: bool = True  # NotReady periods of nodes

    def effective(self) -> PhysicsSwitches:
        """Each switch ANDed with the master switch."""
        if self.enabled:
            return self
        return PhysicsSwitches(False, False, False, False, False, False, False)


@dataclass(frozen=True)
class PhysicsParameters:
    """The parameters of the physical effects (docs/SIMULATOR.md gives each formula)."""

    # Memory bandwidth: what one busy core of fully memory-bound work streams, and the knee.
    membw_per_core_bytes_s: float = 8e9
    membw_knee: float = 0.75  # channel utilisation where memory-bound work starts to slow
    membw_saturation_mbpi: float = 0.85  # MBPI where the cache-miss factor is reached
    membw_cache_miss_factor: float = 3.2
    # Storage: IOPS of one pod, service times per disk kind, await levels and their slowdowns.
    io_block_bytes: int = 256 * 2**10
    io_pod_iops: float = 1_000.0  # a fully I/O-bound pod whose bytes were not recorded
    io_service_ms_nvme: float = 0.1
    io_service_ms_ssd: float = 0.5
    io_service_ms_network: float = 2.0
    io_service_ms_hdd: float = 8.0
    io_level1_ms: float = 10.0
    io_level2_ms: float = 50.0
    io_level3_ms: float = 200.0
    io_level1_factor: float = 1.5
    io_level2_factor: float = 3.0
    io_level3_factor: float = 6.0
    # Network: round-trip times by topology, and how much of communication time is latency-bound.
    rtt_same_node_ms: float = 0.05
    rtt_same_rack_ms: float = 0.1
    rtt_cross_rack_ms: float = 0.8
    rtt_cross_zone_ms: float = 2.0
    network_latency_sensitivity: float = 0.1
    # GPU PCIe: a multi-GPU pod across root complexes gets 1/this of the bandwidth.
    pcie_cross_complex_factor: float = 5.0
    # Memory: page cache per byte of working set of a fully I/O-bound task; OOM threshold.
    page_cache_ratio: float = 0.8
    memory_capacity_factor: float = 1.0  # the kernel OOM-kills anonymous memory past this
    # How many times slower I/O-bound work runs per share of its page cache reclaimed under
    # memory pressure, on top of 1 (reads it would have found cached go to the disk).
    page_cache_miss_factor: float = 1.0


@dataclass(frozen=True)
class StorageQosSettings:
    """The IOPS process of each shared storage pool: slow drift, and rare collapses."""

    drift_interval_s: float = 300.0
    drift_sigma: float = 0.1  # log-space standard deviation of the drift around nominal
    collapse_rate_per_hour: float = 0.25
    collapse_mean_s: float = 600.0
    collapse_min_iops: float = 1_000.0
    collapse_max_iops: float = 2_000.0


@dataclass(frozen=True)
class FaultSettings:
    """NotReady periods of nodes: a Poisson process per node, exponential durations."""

    # Google's figures for a cluster's first year (J. Dean, 2008): 1,000 machine failures, 20
    # rack failures of 40-80 machines, one PDU failure of 500-1,000 machines; about 2,950
    # node outages a year over an assumed 2,000 machines (docs/SIMULATOR.md).
    rate_per_node_hour: float = 1.7e-4
    mean_duration_s: float = 300.0  # assumed
    # The engine retries a lost pod only once Kubernetes evicts it: node-monitor-grace-period
    # (50 s) for the node to turn NotReady, then the not-ready toleration's 300 s.
    eviction_delay_s: float = 350.0


@dataclass(frozen=True)
class SimSettings:
    """The simulator: physics switches and parameters, overheads, sampling, limits, reward."""

    physics: PhysicsSwitches = field(default_factory=PhysicsSwitches)
    effects: PhysicsParameters = field(default_factory=PhysicsParameters)
    storage: StorageQosSettings = field(default_factory=StorageQosSettings)
    faults: FaultSettings = field(default_factory=FaultSettings)
    # Overheads, to be fitted to real runs: the engine notices finished tasks and creates pods
    # on a polling grid (a random phase per job), then the API adds a latency; bound pods take
    # a log-normal start-up time (image pull, container start) before they run.
    poll_interval_s: float = 5.0
    submit_latency_s: float = 0.5
    startup_median_s: float = 3.0
    startup_sigma: float = 0.4
    engine_queue_size: int = 0  # pods of one job in flight at once (Nextflow queueSize); 0: any
    # Pods a node starts at once (its kubelet and container runtime); 0: any number. With k > 0
    # a bound pod waits for one of the node's k start-up slots and holds it for its start-up
    # delay, so start-ups on a busy node queue (the CWS cluster started one at a time).
    startup_slots_per_node: int = 0
    # A finished pod keeps its requests until its engine's next poll: the engine deletes it when
    # it notices the end (Nextflow), and kube-scheduler frees a pod's requests only when it is
    # deleted. Off: freed the instant the pod ends.
    release_at_poll: bool = False
    # Metrics scrape interval (Prometheus): schedulers see node signals this stale.
    sample_interval_s: float = 15.0
    horizon_s: float = math.inf  # stop the run here
    # A killed pod is retried after a back-off that doubles per attempt up to a cap (Argo's
    # retryStrategy, Kubernetes' CrashLoopBackOff: 10 s doubling to 5 min).
    retry_backoff_s: float = 10.0
    retry_backoff_max_s: float = 300.0
    oom_retry_limit: int = 5  # an instance OOM-killed more often fails its job
    reward_oom_penalty: float = 600.0  # job-seconds of reward lost per OOM kill

    def without_physics(self) -> SimSettings:
        """The ideal run: every physical effect off (`--physics off`)."""
        return dataclasses.replace(self, physics=dataclasses.replace(self.physics, enabled=False))


@dataclass(frozen=True)
class Settings:
    loaders: LoaderSettings = field(default_factory=LoaderSettings)
    validator: ValidatorSettings = field(default_factory=ValidatorSettings)
    sim: SimSettings = field(default_factory=SimSettings)


MAX_SETTINGS_BYTES = 1 << 20  # a settings file is a few hundred bytes


def load_settings(path: Path | None = None) -> Settings:
    """Defaults, overridden group by group by a TOML file such as `[loaders] default_cpu = 2`;
    every value type- and range-checked (core/setting_ranges.py), with an InvalidInput naming
    the file, the [section] and the section.key."""
    if path is None:
        return Settings()
    raw = read_toml(path, MAX_SETTINGS_BYTES, "settings")  # capped, named on failure
    merged: Settings = _merge(Settings(), raw, str(path), "")
    check_all(merged, "", str(path))
    return merged


def _merge(current: Any, raw: dict[str, Any], file: str, prefix: str) -> Any:
    fields = {f.name: f for f in dataclasses.fields(current)}
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if key not in fields:
            raise InvalidInput(file, f"[{prefix.rstrip('.')}]" if prefix else "top level", name,
                               f"unknown setting; known: {', '.join(sorted(fields))}")
        old = getattr(current, key)
        if dataclasses.is_dataclass(old):
            if not isinstance(value, dict):
                raise InvalidInput(file, "top level", name, "expected a table")
            changes[key] = _merge(old, value, file, f"{name}.")
        elif isinstance(old, bool) != isinstance(value, bool) or not isinstance(
                value, type(old) if not isinstance(old, float) else (int, float)):
            raise InvalidInput(file, f"[{prefix.rstrip('.')}]", name,
                               f"expected {type(old).__name__}, got {value!r}")
        else:
            changes[key] = _converted(type(old), value, file, f"[{prefix.rstrip('.')}]", name)
    return dataclasses.replace(current, **changes)


def _converted(kind: type, value: Any, file: str, section: str, name: str) -> Any:
    try:
        return kind(value)
    except OverflowError:  # an integer of hundreds of digits for a float setting
        raise InvalidInput(file, section, name, f"a number of {len(str(value))} digits is too "
                           "large for this setting") from None
