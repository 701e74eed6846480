"""The fine-tune in a process of its own, on CPUs disjoint from the serving process's.

    result = run_isolated(job, cpus={1}, budget_s=90)

The child pins itself to `cpus` (os.sched_setaffinity) and one torch thread, loads the serving
version from the registry (checked as serving loads it), builds the recalibrated scenarios,
fine-tunes until the deadline and writes the merged weights to a scratch folder; the parent
reads them back with `torch.load(weights_only=True)`, with the CPUs the child ran on. A child
that fails leaves its reason in the scratch folder for the parent's error. A child still running
at the budget
(plus a grace for its start-up) is killed: the fine-tune failed. Spawned, not forked: the
parent may hold threads and torch state that a fork would copy half-way.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from collections.abc import Set
from dataclasses import dataclass
from pathlib import Path

import torch

from dagpilot.core.config import SimSettings
from dagpilot.core.errors import DagpilotError
from dagpilot.online.config import AdapterSettings
from dagpilot.online.drift import Drift
from dagpilot.online.finetune import FineTuneResult, fine_tune
from dagpilot.online.recalibration import Recalibration
from dagpilot.online.world import serving_model, world
from dagpilot.policy.process import set_torch_threads

START_GRACE_S = 30.0  # spawning and importing torch on a loaded machine
WEIGHTS = "weights.pt"
REASON = "reason.txt"  # why the child failed, for the parent's FineTuneFailed


class FineTuneFailed(Exception):
    """The fine-tune produced no weights (it crashed, or ran past its budget)."""


@dataclass(frozen=True)
class FineTuneJob:
    """What the child needs: plain data, picklable."""

    models: Path
    version: str  # the serving version the adapters start from
    drift: Drift
    settings: AdapterSettings
    seed: int = 0
    sim: SimSettings | None = None
    recalibration: Recalibration | None = None  # the feedback's estimate (online.recalibration)


def run_isolated(job: FineTuneJob, cpus: Set[int]) -> FineTuneResult:
    budget_s = job.settings.budget_s
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="dagpilot-online-") as scratch:
        out = Path(scratch)
        started = time.time()
        child = context.Process(target=_child, args=(job, sorted(cpus), started + budget_s,
                                                      out), daemon=True)
        child.start()
        child.join(timeout=budget_s + START_GRACE_S)
        if child.is_alive():
            child.kill()
            child.join()
            raise FineTuneFailed(f"the fine-tune ran past its budget of {budget_s:g} s")
        if child.exitcode != 0 or not (out / WEIGHTS).is_file():
            raise FineTuneFailed(f"the fine-tune process exited with {child.exitcode}"
                                 f"{_reason(out)}")
        saved = torch.load(out / WEIGHTS, weights_only=True)
        return FineTuneResult(saved["state"], int(saved["iterations"]),
                              int(saved["env_steps"]), time.time() - started,
                              tuple(int(cpu) for cpu in saved["cpus"]))


def _reason(out: Path) -> str:
    reason = out / REASON
    return f": {reason.read_text()[:500]}" if reason.is_file() else ""


def _child(job: FineTuneJob, cpus: list[int], deadline: float, out: Path) -> None:
    try:
        os.sched_setaffinity(0, cpus)
        set_torch_threads(1)
        result = fine_tune_in_process(job, deadline)
    except (DagpilotError, OSError) as error:  # expected: the reason, not a traceback
        (out / REASON).write_text(str(error))
        raise SystemExit(1) from None
    except Exception as error:  # a bug: the reason for the parent, the traceback for the log
        (out / REASON).write_text(f"{type(error).__name__}: {error}")
        raise
    torch.save({"state": result.state, "iterations": result.iterations,
                "env_steps": result.env_steps, "cpus": sorted(os.sched_getaffinity(0))},
               out / WEIGHTS)


def fine_tune_in_process(job: FineTuneJob, deadline: float) -> FineTuneResult:
    """The fine-tune of `job.version` in this process (the child's work)."""
    model, normaliser = serving_model(job.models, job.version)
    scene = world(job.settings.workload, job.settings.cluster, job.drift, job.sim,
                  job.recalibration)
    return fine_tune(model, normaliser, scene.jobs, scene.cluster, sim=scene.sim,
                     settings=job.settings, seed=job.seed, deadline=deadline)
