"""One seed, one trajectory: across runs, and across processes with different hash seeds."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

from dagpilot.core.config import SimSettings
from dagpilot.sim import simulate
from dagpilot.sim.record import RunRecord
from tests.conftest import REPO
from tests.sim.helpers import FirstFit, cluster, job, node, task

SCRIPT = """
import hashlib, dataclasses
from dagpilot.clusters import load_cluster
from dagpilot.core.config import FaultSettings, SimSettings
from dagpilot.sim import simulate
from tests.sim.helpers import FirstFit, job, task
jobs = [job(f"j{i}", task("a", 30 + i, cpu=4, io_intensity=0.5, membw_intensity=0.6,
                          peak_memory=(i % 3 + 1) * 2**33, comm_group="g", comm_share=0.3,
                          instances=3),
            task("b", 20, parents=("a",)), arrival_s=7.0 * i) for i in range(40)]
settings = SimSettings(faults=FaultSettings(rate_per_node_hour=2.0))
record = simulate(jobs, load_cluster("builtin:small"), FirstFit(), settings, 11)
record = dataclasses.replace(record, decision_seconds=0.0, wall_seconds=0.0)
print(hashlib.sha256(repr(record).encode()).hexdigest())
"""


def fingerprint(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, check=True, cwd=REPO)
    return done.stdout.strip()


def test_same_seed_same_record_across_processes() -> None:
    first = fingerprint("1")
    assert len(first) == 64
    assert fingerprint("2") == first


def without_timing(record: RunRecord) -> RunRecord:
    return dataclasses.replace(record, decision_seconds=0.0, wall_seconds=0.0)


def test_same_seed_same_record_and_other_seeds_differ() -> None:
    jobs = [job(f"j{i}", task("a", 10), task("b", 5, parents=("a",)), arrival_s=3.0 * i)
            for i in range(10)]
    nodes = cluster(node("n1", cpu=2), node("n2", cpu=2))
    first = simulate(jobs, nodes, FirstFit(), SimSettings(), seed=5)
    again = simulate(jobs, nodes, FirstFit(), SimSettings(), seed=5)
    other = simulate(jobs, nodes, FirstFit(), SimSettings(), seed=6)
    assert without_timing(first) == without_timing(again)
    assert [p.started_s for p in first.pods] != [p.started_s for p in other.pods]
