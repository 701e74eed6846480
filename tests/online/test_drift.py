"""The drift trigger on journal records: N slow tasks of one class in a row."""

from __future__ import annotations

from typing import Any

from dagpilot.online.config import Trigger
from dagpilot.online.drift import detect, slowdowns, task_family


def feedback(t: float, task_class: str, runtime_s: float, predicted_s: float,
             uid: str = "") -> dict[str, Any]:
    return {"kind": "feedback", "t": t, "pod_uid": uid, "task_class": task_class,
            "runtime_s": runtime_s, "actual": {"cpu_seconds": runtime_s},
            "predicted": {"runtime_s": predicted_s}}


def test_task_families_drop_the_trailing_index() -> None:
    assert task_family("mProject_00012") == "mProject"
    assert task_family("stage-3-7") == "stage"
    assert task_family("0042") == "0042"


def test_five_slow_tasks_of_one_class_in_a_row_fire() -> None:
    records = [feedback(float(t), "etl", 140.0, 100.0) for t in range(5)]
    drift = detect(slowdowns(records), Trigger())
    assert drift is not None
    assert (drift.task_class, drift.count, drift.ratio) == ("etl", 5, 1.4)
    assert (drift.first_t, drift.last_t) == (0.0, 4.0)


def test_a_task_within_the_ratio_ends_the_streak() -> None:
    records = [feedback(float(t), "etl", 140.0, 100.0) for t in range(4)]
    records += [feedback(4.0, "etl", 120.0, 100.0)]  # 1.2 <= 1.3
    records += [feedback(5.0 + t, "etl", 140.0, 100.0) for t in range(4)]
    assert detect(slowdowns(records), Trigger()) is None


def test_other_classes_do_not_break_a_streak_and_counts_are_configurable() -> None:
    records = []
    for t in range(3):
        records += [feedback(2.0 * t, "etl", 200.0, 100.0),
                    feedback(2.0 * t + 1, "train", 100.0, 100.0)]
    assert detect(slowdowns(records), Trigger(consecutive=3, ratio=1.5)) is not None
    assert detect(slowdowns(records), Trigger(consecutive=4, ratio=1.5)) is None
    assert detect(slowdowns(records), Trigger(consecutive=3, ratio=2.0)) is None


def test_cpu_time_stands_in_when_the_prediction_has_no_runtime_and_since_t_skips() -> None:
    record = feedback(10.0, "etl", 50.0, 0.0)
    record["predicted"] = {"cpu_seconds": 25.0}
    found = slowdowns([record])
    assert [s.ratio for s in found] == [2.0]
    assert slowdowns([record], since_t=10.0) == []


def test_the_class_comes_from_the_decision_when_the_agent_had_none() -> None:
    decision = {"kind": "decision", "t": 0.0, "uid": "u1", "task": "mProject_0003"}
    found = slowdowns([decision, feedback(1.0, "", 150.0, 100.0, uid="u1")])
    assert [(s.task_class, s.ratio) for s in found] == [("mProject", 1.5)]


def test_records_without_a_usable_prediction_are_skipped() -> None:
    broken = [feedback(1.0, "etl", 150.0, 100.0) | {"predicted": None},
              feedback(2.0, "", 150.0, 100.0),  # no class and no decision
              feedback(3.0, "etl", 150.0, 100.0) | {"t": "soon"},
              feedback(4.0, "etl", float("nan"), 100.0)]
    assert slowdowns(broken) == []
