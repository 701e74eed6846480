"""Waste ratios, recommendations and the predictions file, by hand-computed figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.live.node_agent.predictions import PredictionFile, parse_predictions
from dagpilot.live.node_agent.right_sizing import MIB, Usage, recommend, waste_ratios


def test_waste_ratio_per_resource_skips_what_was_not_predicted() -> None:
    actual = Usage(cpu_seconds=3.0, peak_memory_bytes=50.0, io_bytes=7.0)
    predicted = Usage(cpu_seconds=2.0, peak_memory_bytes=100.0, io_bytes=0.0)
    assert waste_ratios(actual, predicted) == {"cpu": 0.5, "memory": -0.5}


def test_recommendation_is_the_largest_recent_use_with_headroom_rounded_up() -> None:
    recent = [(Usage(2.0, 100 * MIB, 0), 4.0),   # 0.5 cores
              (Usage(3.0, 80 * MIB, 0), 4.0)]    # 0.75 cores
    advice = recommend(recent)
    assert advice is not None
    assert advice.cpu_cores == 0.863  # 0.75 x 1.15 = 0.8625, up to a millicore
    assert advice.memory_bytes == 115 * MIB  # 100 MiB x 1.15
    assert advice.based_on == 2
    assert recommend([]) is None


@pytest.mark.parametrize(("line", "field"), [
    ('{"task_class": "a"}', "pod_uid"),
    ('{"pod_uid": "u", "cpu_seconds": -1}', "cpu_seconds"),
    ('{"pod_uid": "u", "peak_memory_bytes": true}', "peak_memory_bytes"),
    ('{"pod_uid": "u", "task_class": 3}', "task_class"),
    ("[1]", ""),
    ("{", ""),
])
def test_bad_prediction_lines_name_line_and_field(line: str, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_predictions(Path("p.jsonl"), '{"pod_uid": "ok"}\n' + line + "\n")
    assert (caught.value.file, caught.value.record, caught.value.field) == \
        ("p.jsonl", "line 2", field)


def test_prediction_file_is_reread_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    file = PredictionFile(path)
    assert file.current() == {}  # not written yet
    path.write_text('{"pod_uid": "u1", "task_class": "etl", "cpu_seconds": 2}\n')
    assert file.current()["u1"].usage.cpu_seconds == 2.0
    path.write_text('{"pod_uid": "u1", "task_class": "etl", "cpu_seconds": 30}\n')
    assert file.current()["u1"].usage.cpu_seconds == 30.0
