"""Time continuity of metric series: gaps, order, units of the time column."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.workloads.validation.continuity import (
    csv_violations,
    prometheus_violations,
    series_violations,
    time_column,
)


def rules(times: list[float], max_gap_s: float = 30.0) -> list[str]:
    found = series_violations("f", "s", np.array(times, dtype=float), lambda i: f"sample {i}",
                              max_gap_s)
    return [v.rule for v in found]


@pytest.mark.parametrize(("times", "expected"), [
    ([0, 15, 30, 45], []),
    ([0, 15, 60, 75], ["time.gap"]),  # 45 s without a sample
    ([0, 30, 60], []),  # exactly the limit is allowed
    ([0, 31], ["time.gap"]),
    ([0, 40, 80, 120], ["time.gap", "time.gap", "time.gap"]),  # one line per gap
    ([0, 15, 10, 20], ["time.order"]),  # backwards
    ([0, 15, 15, 30], ["time.order"]),  # a repeated timestamp
    ([30, 20, 10, 0], ["time.order"]),  # one line per series, with a count
    ([], []),
    ([5], []),
])
def test_series_rules(times: list[float], expected: list[str]) -> None:
    assert rules(times) == expected


def test_a_gap_names_series_start_length_and_the_sample_after_it() -> None:
    [gap] = series_violations("m.csv", "{node='a'}", np.array([0.0, 15.0, 60.0]),
                              lambda i: f"line {i + 2}", 30.0)
    assert gap.record == "line 4"
    assert gap.message == ("series {node='a'}: no sample for 45 s from t=15 s to t=60 s "
                           "(at most 30 s allowed)")


def test_the_limit_comes_from_the_settings() -> None:
    assert rules([0, 45], max_gap_s=60.0) == []
    assert rules([0, 45], max_gap_s=10.0) == ["time.gap"]


@pytest.mark.parametrize(("columns", "expected"), [
    (["timestamp", "node", "value"], "timestamp"),
    (["node", "Time", "value"], "Time"),
    (["time_ms", "value"], "time_ms"),
    (["created", "value"], None),
])
def test_time_column(columns: list[str], expected: str | None) -> None:
    assert time_column(columns) == expected


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_fixture_csv_has_one_45_s_gap_on_one_node(fixtures: Path) -> None:
    [gap] = csv_violations(fixtures / "validate" / "metrics" / "node_cpu_gap.csv", 30.0)
    assert (gap.rule, gap.record) == ("time.gap", "line 10")
    assert "{node='node-a'}" in gap.message
    assert "no sample for 45 s from t=30 s to t=75 s" in gap.message


def test_epoch_milliseconds_are_detected(tmp_path: Path) -> None:
    path = write(tmp_path, "ms.csv", "timestamp,value\n1700000000000,1\n1700000015000,2\n"
                 "1700000060000,3\n")
    [gap] = csv_violations(path, 30.0)
    assert "no sample for 45 s from t=1700000015 s" in gap.message


def test_a_ms_suffix_means_milliseconds_even_for_small_values(tmp_path: Path) -> None:
    path = write(tmp_path, "ms.csv", "time_ms,value\n0,1\n15000,2\n30000,3\n")
    assert csv_violations(path, 30.0) == []


def test_iso_timestamps(tmp_path: Path) -> None:
    path = write(tmp_path, "iso.csv", "timestamp,pod,value\n2024-01-01T00:00:00Z,p,1\n"
                 "2024-01-01T00:00:15Z,p,1\n2024-01-01T00:01:00Z,p,1\n")
    [gap] = csv_violations(path, 30.0)
    assert "no sample for 45 s" in gap.message


def test_missing_timestamps_are_reported_not_skipped(tmp_path: Path) -> None:
    path = write(tmp_path, "holes.csv", "timestamp,value\n0,1\n,2\n15,3\n")
    [missing] = csv_violations(path, 30.0)
    assert (missing.rule, missing.record) == ("time.missing", "line 3")


def test_a_csv_without_a_time_column_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as caught:
        csv_violations(write(tmp_path, "x.csv", "a,b\n1,2\n"), 30.0)
    assert caught.value.field == "timestamp"


def test_prometheus_fixture_gap_is_on_the_second_series(fixtures: Path) -> None:
    path = fixtures / "validate" / "metrics" / "prometheus_gap.json"
    [gap] = prometheus_violations(str(path), json.loads(path.read_text()), 30.0)
    assert (gap.rule, gap.record) == ("time.gap", "data.result[1].values[2]")
    assert "instance='node-b:9100'" in gap.message
    assert "no sample for 60 s from t=1700000015 s" in gap.message


def test_a_prometheus_vector_has_no_series_to_check() -> None:
    document = {"status": "success", "data": {"resultType": "vector", "result": []}}
    assert prometheus_violations("p.json", document, 30.0) == []


@pytest.mark.parametrize(("document", "record"), [
    ({"status": "error", "error": "bad query"}, "status"),
    ({"status": "success", "data": {"resultType": "matrix", "result": {}}}, "data.result"),
    ({"status": "success", "data": {"resultType": "matrix", "result": [{"values": [["x"]]}]}},
     "data.result[0]"),
    ({"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}}]}},
     "data.result[0]"),
])
def test_broken_prometheus_responses_are_invalid_input(document: dict[str, object],
                                                       record: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        prometheus_violations("p.json", document, 30.0)
    assert caught.value.record == record
