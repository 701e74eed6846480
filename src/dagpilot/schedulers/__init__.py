"""Every baseline scheduler, one module each, registered here by name.

A scheduler implements `core.scheduler.Scheduler`; build a fresh one per run with
`SCHEDULERS[name]()` and call `reset(cluster, rng)` before the first decision.
"""

from __future__ import annotations

from collections.abc import Callable

from dagpilot.core.errors import SpecError
from dagpilot.core.scheduler import Scheduler
from dagpilot.schedulers import (
    cws,
    fifo,
    heft,
    kube_default,
    load_aware,
    physics_rules,
    random_pick,
    sjf_cp,
    tetris,
)
from dagpilot.schedulers.cws import cws_strategy

SCHEDULERS: dict[str, Callable[[], Scheduler]] = {
    "kube-default": kube_default.build,
    "fifo": fifo.build,
    "random": random_pick.build,
    "sjf-cp": sjf_cp.build,
    "heft": heft.build,
    "tetris": tetris.build,
    "load-aware": load_aware.build,
    "physics-rules": physics_rules.build,
    **cws.SCHEDULERS,
}


def build(name: str) -> Scheduler:
    """A fresh scheduler by name; a clear error naming the known ones otherwise."""
    if name not in SCHEDULERS:
        raise SpecError(name, f"unknown scheduler; known: {', '.join(sorted(SCHEDULERS))}")
    return SCHEDULERS[name]()


__all__ = ["SCHEDULERS", "Scheduler", "build", "cws_strategy"]
