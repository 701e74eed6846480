"""`dagpilot bench` end to end through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dagpilot.cli import app
from dagpilot.core.errors import SpecError
from dagpilot.schedulers import SCHEDULERS
from tests.bench.builders import StopAfter

CONTRACT = {"avg_jct_s", "p95_jct_s", "makespan_s", "avg_slowdown", "oom_kills", "peak_backlog",
            "drain_s", "decisions_per_s"}


def bench(tmp_path: Path, *extra: str) -> list[str]:
    return ["bench", "--workload", "builtin:mix:3", "--workload", "builtin:spark-etl:2",
            "--cluster", "builtin:small", "--seeds", "2", "--out", str(tmp_path),
            "--arrival", "poisson", "--burst", "5x@600s+300s", *extra]


def test_bench_writes_the_summary_the_plots_and_a_table(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, bench(tmp_path, "--schedulers", "kube-default,tetris"))
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "summary.json").read_text())
    assert document["version"] == 1
    assert document["workloads"] == ["builtin:mix:3", "builtin:spark-etl:2"]
    assert document["cluster"] == "builtin:small"
    assert document["seeds"] == [0, 1]
    assert document["physics"] == "on"
    assert set(document["schedulers"]) == {"kube-default", "tetris"}
    assert set(document["schedulers"]["tetris"]) >= CONTRACT
    assert set(document["lower_bound"]) == {"avg_jct_s", "makespan_s"}
    assert set(document["ratios"]["tetris/kube-default"]) == {"avg_jct", "makespan"}
    assert len(document["per_seed"]) == 4
    for name in ("jct_cdf.png", "backlog.png", "utilisation.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    assert "tetris" in result.output and "lower bound" in result.output


def test_physics_off_is_recorded(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, bench(tmp_path, "--schedulers", "fifo", "--seeds", "1",
                                           "--physics", "off"))
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "summary.json").read_text())
    assert document["physics"] == "off"
    assert document["schedulers"]["fifo"]["oom_kills"] == 0


def test_bad_options_are_clear_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    for extra in (("--schedulers", "kube-default,bogus"), ("--physics", "maybe"),
                  ("--horizon", "soon"), ("--burst", "17x")):
        result = runner.invoke(app, bench(tmp_path, *extra))
        assert isinstance(result.exception, SpecError), (extra, result.output)
    assert not (tmp_path / "summary.json").exists()


def test_ctrl_c_prints_what_finished_and_exits_130(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SCHEDULERS, "stopper", lambda: StopAfter(5))
    result = CliRunner().invoke(app, bench(tmp_path, "--schedulers", "kube-default,stopper",
                                           "--seeds", "1"))
    assert result.exit_code == 130, result.output
    assert "(interrupted)" in result.output
    assert json.loads((tmp_path / "summary.json").read_text())["interrupted"] is True
