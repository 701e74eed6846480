"""Every target, a small fixed budget of mutations (seed 0): zero failures.

A failure here is a real defect of a parser; rerun it long with
`bench/fuzz.py --target NAME --mutations N --save-fixtures` to get it minimised as a fixture.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz import campaign
from fuzz.pool import Limits
from fuzz.targets import TARGETS

# Cases per target, sized so the whole file runs in about a minute on 2 cores: the registry and
# settings targets cost a few hundred ms a case (a model load, a small benchmark).
SLOW = {"settings": 8, "registry-config": 8, "registry-normaliser": 8, "registry-metadata": 8,
        "registry-npz": 8, "extender-args": 8, "tpch": 15}
BUDGET = 25
LIMITS = Limits(timeout_s=10.0, memory_cap_bytes=1 << 30)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_no_failures_within_the_budget(name: str, tmp_path: Path) -> None:
    tally = campaign.fuzz(TARGETS[name], SLOW.get(name, BUDGET), 0, tmp_path, LIMITS)
    assert tally.seeds["accepted"] > 0, "no seed of this target is accepted: nothing to mutate"
    found = "\n".join(
        f"{f.result.kind} {f.result.error_type} at {f.result.where}: {f.result.line} "
        f"({f.result.message[:200]}) x{f.count}; {f.found}" for f in tally.findings.values())
    assert tally.failures == 0, found
