"""When jobs arrive: as recorded in the trace, or a Poisson process at a target cluster load.

The Poisson rate is `load x capacity_cores / mean job work (core-seconds)`, so that on average
the cluster is asked for `load` of its cores. Bursts multiply the rate inside time windows
(`17x@3600s+1800s`: 17 times the rate from t = 3600 s for 1800 s); the process is then a
non-homogeneous Poisson process with a piecewise-constant rate, drawn exactly by inverting its
cumulative rate (unit-rate exponential gaps in "operational time").
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dagpilot.core.errors import SpecError
from dagpilot.core.types import Job
from dagpilot.core.units import duration_s

ArrivalKind = Literal["trace", "poisson"]
_BURST = re.compile(r"^\s*(?P<factor>\d+(?:\.\d*)?|\.\d+)x@(?P<start>[^+]+)\+(?P<length>.+?)\s*$",
                    re.ASCII)


@dataclass(frozen=True)
class Burst:
    """The arrival rate is multiplied by `factor` from `start_s` for `duration_s`."""

    factor: float
    start_s: float
    duration_s: float

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s

    @classmethod
    def parse(cls, text: str) -> Burst:
        """`FACTORx@START+DURATION`, times in s, m or h (or Go durations such as 1h30m)."""
        match = _BURST.match(text)
        if match is None:
            raise SpecError(text, "expected a burst such as 17x@3600s+1800s "
                            "(FACTOR x @ START + DURATION)")
        try:
            start, length = duration_s(match["start"]), duration_s(match["length"])
        except ValueError as error:
            raise SpecError(text, f"bad burst time: {error}") from error
        if start < 0 or length <= 0:
            raise SpecError(text, "a burst starts at 0 s or later and lasts longer than 0 s")
        factor = float(match["factor"])  # 400 digits read as infinity
        if not math.isfinite(factor):
            raise SpecError(text, "the burst factor must be a finite number")
        return cls(factor, start, length)

    def __str__(self) -> str:
        return f"{self.factor:g}x@{self.start_s:g}s+{self.duration_s:g}s"


@dataclass(frozen=True)
class ArrivalSpec:
    """How to assign arrival times: `--arrival trace|poisson --load 0.8 --burst ...`."""

    kind: ArrivalKind = "trace"
    load: float = 0.8
    bursts: tuple[Burst, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("trace", "poisson"):
            raise SpecError(str(self.kind), "arrival must be trace or poisson")
        if not (math.isfinite(self.load) and self.load > 0):
            raise SpecError(str(self.load), "the load must be a number above 0")
        if self.bursts and self.kind != "poisson":
            raise SpecError(", ".join(map(str, self.bursts)), "bursts need --arrival poisson")
        check_bursts(self.bursts)

    @classmethod
    def from_options(cls, arrival: str, load: float = 0.8,
                     bursts: Sequence[str] = ()) -> ArrivalSpec:
        """The spec of the command-line options, every text checked."""
        if arrival not in ("trace", "poisson"):
            raise SpecError(arrival, "arrival must be trace or poisson")
        kind: ArrivalKind = "trace" if arrival == "trace" else "poisson"
        return cls(kind, load, tuple(Burst.parse(text) for text in bursts))


def assign_arrivals(jobs: Sequence[Job], spec: ArrivalSpec, capacity_cores: float,
                    rng: np.random.Generator, horizon_s: float | None = None) -> list[Job]:
    """Jobs with arrival times by `spec`, in arrival order."""
    if spec.kind == "trace":
        return trace(jobs)
    return poisson(jobs, spec.load, capacity_cores, rng, bursts=spec.bursts, horizon_s=horizon_s)


def trace(jobs: Sequence[Job]) -> list[Job]:
    """The recorded arrivals, shifted so that the first is at 0, in arrival order (stable)."""
    if not jobs:
        return []
    first = min(job.arrival_s for job in jobs)
    shifted = [dataclasses.replace(job, arrival_s=job.arrival_s - first) for job in jobs]
    return sorted(shifted, key=lambda job: job.arrival_s)


def poisson(jobs: Sequence[Job], load: float, capacity_cores: float, rng: np.random.Generator,
            *, bursts: Sequence[Burst] = (), horizon_s: float | None = None) -> list[Job]:
    """Jobs from the pool, in order, arriving as a Poisson process at `load` of the cluster.

    With a horizon, arrivals continue until it and the pool is cycled; a job's k-th copy
    (k >= 2) gets the id `ID#k`. Without one, each job of the pool arrives once.
    """
    if not jobs:
        return []
    rate = poisson_rate(jobs, load, capacity_cores)
    count = None if horizon_s is not None else len(jobs)
    times = arrival_times(rate, bursts, rng, horizon_s, count)
    return [_copy(jobs, position, at) for position, at in enumerate(times)]


def poisson_rate(jobs: Sequence[Job], load: float, capacity_cores: float) -> float:
    """Jobs per second that ask for `load` of `capacity_cores` on average."""
    mean_work = float(np.mean([job.total_work_core_s for job in jobs]))
    if not (mean_work > 0 and capacity_cores > 0 and load > 0):
        raise SpecError("poisson", f"need positive load ({load}), capacity ({capacity_cores} "
                        f"cores) and mean job work ({mean_work} core-s)")
    return load * capacity_cores / mean_work


def arrival_times(rate: float, bursts: Sequence[Burst], rng: np.random.Generator,
                  horizon_s: float | None = None, count: int | None = None) -> list[float]:
    """Event times of a Poisson process of base `rate` with bursts, until the horizon or count."""
    if horizon_s is None and count is None:
        raise ValueError("arrival_times needs a horizon or a count")
    starts, rates = _rate_pieces(rate, bursts)
    times: list[float] = []
    now, piece = 0.0, 0
    while count is None or len(times) < count:
        need = float(rng.exponential(1.0))  # operational time to the next event
        while True:
            end = starts[piece + 1] if piece + 1 < len(starts) else math.inf
            if rates[piece] > 0 and now + need / rates[piece] <= end:
                now += need / rates[piece]
                break
            need -= (end - now) * rates[piece]
            now, piece = end, piece + 1
        if horizon_s is not None and now >= horizon_s:
            break
        times.append(now)
    return times


def _rate_pieces(rate: float, bursts: Sequence[Burst]) -> tuple[list[float], list[float]]:
    """Piece start times and rates; the last piece (base rate) runs forever."""
    check_bursts(bursts)
    starts, rates = [0.0], [rate]
    for burst in sorted(bursts, key=lambda b: b.start_s):
        if burst.start_s > starts[-1]:  # a base-rate gap before this burst
            starts.append(burst.start_s)
            rates.append(rate)
        rates[-1] = rate * burst.factor
        starts.append(burst.end_s)
        rates.append(rate)
    return starts, rates


def check_bursts(bursts: Sequence[Burst]) -> None:
    """Refuse overlapping bursts: which factor would apply there is not obvious."""
    ordered = sorted(bursts, key=lambda b: b.start_s)
    for before, after in itertools.pairwise(ordered):
        if after.start_s < before.end_s:
            raise SpecError(f"{before} {after}", "bursts must not overlap")


def _copy(pool: Sequence[Job], position: int, arrival_s: float) -> Job:
    job = pool[position % len(pool)]
    round_ = position // len(pool) + 1
    job_id = job.id if round_ == 1 else f"{job.id}#{round_}"
    return dataclasses.replace(job, id=job_id, arrival_s=arrival_s)
