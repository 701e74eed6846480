"""Binning of step functions for the plots, and the files written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dagpilot.bench.bounds import LowerBound
from dagpilot.bench.plots import binned_max, binned_mean, write_plots
from dagpilot.bench.results import RunResult
from dagpilot.sim.record import JobRecord
from tests.bench.builders import record

TIMES = np.array([0.0, 5.0, 12.0])
VALUES = np.array([1.0, 4.0, 2.0])
EDGES = np.array([0.0, 10.0, 20.0])


def test_binned_max_keeps_spikes_and_the_value_carried_in() -> None:
    assert binned_max(TIMES, VALUES, EDGES).tolist() == [4.0, 4.0]


def test_binned_mean_is_time_weighted() -> None:
    means = binned_mean(TIMES, VALUES, EDGES)
    assert means == pytest.approx([(1 * 5 + 4 * 5) / 10, (4 * 2 + 2 * 8) / 10])


def test_three_pngs_are_written(tmp_path: Path) -> None:
    jobs = [JobRecord("a", 0.0, 50.0, 10.0, 1.0), JobRecord("b", 5.0, None, 10.0, 1.0)]
    runs = [RunResult.measure(name, record(name, jobs=jobs, backlog=[(0.0, 1), (30.0, 0)]),
                              LowerBound(10.0, 10.0), [(10.0, 20.0)])
            for name in ("kube-default", "fifo")]
    paths = write_plots(runs, ("kube-default", "fifo"), [(10.0, 20.0)], tmp_path)
    assert [path.name for path in paths] == ["jct_cdf.png", "backlog.png", "utilisation.png"]
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert write_plots([], ("fifo",), [], tmp_path / "none") == []
