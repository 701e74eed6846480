"""The pod's side of kube-scheduler's resource scores: its request in milli-CPU and bytes."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from dagpilot.core.types import Resources
from dagpilot.decide.node_arrays import Floats

DEFAULT_MILLI_CPU_REQUEST = 100.0  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200.0 * 1024 * 1024  # schedutil.DefaultMemoryRequest


@lru_cache(maxsize=4096)
def pod_request(requests: Resources, non_zero: bool) -> Floats:
    """The pod's milli-CPU and memory request; with `non_zero`, a missing request counts at
    kube-scheduler's defaults (100m, 200 MiB), as LeastAllocated does. Shared: do not modify."""
    cpu = float(np.rint(requests.cpu * 1000.0))
    memory = float(requests.memory)
    if non_zero:
        cpu = cpu or DEFAULT_MILLI_CPU_REQUEST
        memory = memory or DEFAULT_MEMORY_REQUEST
    request = np.array([cpu, memory])
    request.flags.writeable = False
    return request


@lru_cache(maxsize=4096)
def pod_request_pair(requests: Resources, non_zero: bool) -> tuple[float, float]:
    """`pod_request` as Python floats."""
    cpu, memory = pod_request(requests, non_zero).tolist()
    return cpu, memory
