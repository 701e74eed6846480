"""Decima TPC-H loader: stage DAGs, executor-count choice, real profiles, bad input."""

from __future__ import annotations

import gzip
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dagpilot.core.config import GIB, LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import build
from dagpilot.core.types import Job
from dagpilot.workloads import tpch

SETTINGS = LoaderSettings(default_cpu=1.0, default_memory=2 * GIB)


def located(error: InvalidInput) -> tuple[str, str, str]:
    """Where an error says the problem is: file, record, field."""
    return error.file, error.record, error.field


def load(path: Path) -> dict[str, Job]:
    return {job.id: job for job in (build(d) for d in tpch.read(str(path), SETTINGS))}


@pytest.fixture(scope="module")
def small(fixtures: Path) -> dict[str, Job]:
    return load(fixtures / "tpch" / "small.json")


def test_one_job_per_size_and_query(small: dict[str, Job]) -> None:
    assert list(small) == ["tpch/2g/1", "tpch/10g/1"]  # `_meta` is not a size
    assert small["tpch/2g/1"].labels == (("tpch.query", "1"), ("tpch.size", "2g"))
    assert small["tpch/2g/1"].arrival_s == 0.0


@pytest.mark.parametrize(("job", "task", "parents", "instances", "runtimes_s"), [
    # the run with 2 executors records all 3 tasks: first wave (fresh ones included) + rest wave
    ("tpch/2g/1", "stage-0", (), 3, (1.0, 3.0, 2.0)),
    ("tpch/2g/1", "stage-1", (), 1, (0.5,)),
    # with 2 executors only 1 of 2 tasks was recorded: the 5-executor run is used
    ("tpch/2g/1", "stage-7", ("stage-0", "stage-1"), 2, (0.7, 0.9)),
    # node 0 is Spark stage 4 and node 1 stage 3; the edge [1, 0] runs stage 3 before stage 4
    ("tpch/10g/1", "stage-3", (), 2, (1.5, 1.5)),
    ("tpch/10g/1", "stage-4", ("stage-3",), 1, (2.5,)),
])
def test_stages(small: dict[str, Job], *, job: str, task: str, parents: tuple[str, ...],
                instances: int, runtimes_s: tuple[float, ...]) -> None:
    stage = small[job].task(task)
    assert stage.parents == parents
    assert stage.instances == instances
    assert stage.instance_runtimes_s == pytest.approx(runtimes_s)
    assert stage.runtime_s == pytest.approx(sum(runtimes_s) / len(runtimes_s))
    assert (stage.requests.cpu, stage.requests.memory) == (1.0, 2 * GIB)


def test_critical_path(small: dict[str, Job]) -> None:
    assert small["tpch/2g/1"].critical_path_s == pytest.approx(3.0 + 0.9)
    assert small["tpch/10g/1"].critical_path_s == pytest.approx(1.5 + 2.5)


def test_gzipped_file_reads_the_same(tmp_path: Path, fixtures: Path,
                                     small: dict[str, Job]) -> None:
    path = tmp_path / "tpch.json.gz"
    path.write_bytes(gzip.compress((fixtures / "tpch" / "small.json").read_bytes()))
    again = load(path)
    assert [j.tasks for j in again.values()] == [j.tasks for j in small.values()]


Change = Callable[[dict[str, Any]], None]


def _set(path: list[str | int], value: Any) -> Change:
    def change(document: dict[str, Any]) -> None:
        target: Any = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


QUERY = ["2g", "1"]
STAGE_0 = [*QUERY, "stages", 0]


@pytest.mark.parametrize(("change", "record", "field"), [
    (_set([*STAGE_0, "num_tasks"], "3"), "$.2g.1.stages[0]", "num_tasks"),
    (_set([*QUERY, "edges"], [[0, 5]]), "$.2g.1.edges[0]", "edges"),
    (_set([*QUERY, "edges"], "0->2"), "$.2g.1", "edges"),
    (_set([*QUERY, "stage_id_to_node_idx"], {"0": 0, "1": 0, "7": 2}), "$.2g.1",
     "stage_id_to_node_idx"),
    (_set([*QUERY, "num_stages"], 4), "$.2g.1", "num_stages"),
    (_set([*QUERY, "stages"], None), "$.2g.1", "stages"),
    (_set([*STAGE_0, "num_tasks"], 7), "$.2g.1.stages[0]", "first_wave"),
    (_set([*STAGE_0, "rest_wave"], {"2": "2000"}), "$.2g.1.stages[0].rest_wave", "rest_wave"),
    (_set([*STAGE_0, "first_wave", "2"], [1000, "x"]), "$.2g.1.stages[0].first_wave.2[1]",
     "first_wave"),
    (_set(["2g"], []), "$.2g", ""),
])
def test_malformed_structure(tmp_path: Path, fixtures: Path, change: Change, record: str,
                             field: str) -> None:
    document = json.loads((fixtures / "tpch" / "small.json").read_text())
    change(document)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InvalidInput) as caught:
        tpch.read(str(path), SETTINGS)
    assert located(caught.value) == (str(path), record, field)


def test_negative_duration_is_refused_by_the_job_rules(tmp_path: Path, fixtures: Path) -> None:
    document = json.loads((fixtures / "tpch" / "small.json").read_text())
    document["2g"]["1"]["stages"][1]["first_wave"]["2"] = [-500]
    path = tmp_path / "negative.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InvalidInput) as caught:
        load(path)
    assert (caught.value.record, caught.value.field) == ("$.2g.1.stages[1]", "runtime")


def test_bad_json_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"2g": {\n  "1": {"num_stages": 2,,}\n}}')
    with pytest.raises(InvalidInput) as caught:
        tpch.read(str(path), SETTINGS)
    assert caught.value.file == str(path)
    assert caught.value.record.startswith("line 2 ")


def test_truncated_gzip(tmp_path: Path, fixtures: Path) -> None:
    packed = gzip.compress((fixtures / "tpch" / "small.json").read_bytes())
    path = tmp_path / "cut.json.gz"
    path.write_bytes(packed[:-20])
    with pytest.raises(InvalidInput, match="gzip") as caught:
        tpch.read(str(path), SETTINGS)
    assert caught.value.file == str(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        tpch.read(str(tmp_path / "absent.json"), SETTINGS)


@pytest.fixture(scope="module")
def real(traces: Path) -> list[Job]:
    path = traces / "decima-tpch" / "tpch_decima.json.gz"
    return [build(d) for d in tpch.read(str(path), LoaderSettings())]


def test_real_profiles(real: list[Job]) -> None:
    """Counts from the traces README: 154 jobs, 2-18 stages, 13-3,717 tasks (median 1,018)."""
    assert len(real) == 154
    assert {job.label("tpch.size") for job in real} == {"2g", "5g", "10g", "20g", "50g", "80g",
                                                        "100g"}
    stages = [len(job.tasks) for job in real]
    assert (min(stages), max(stages)) == (2, 18)
    instances = [job.instances for job in real]
    assert (min(instances), max(instances)) == (13, 3_717)
    assert statistics.median(instances) == 1_018
    for job in real:
        assert sum(1 for t in job.tasks if not t.parents) >= 1
        for task in job.tasks:
            assert len(task.instance_runtimes_s) == task.instances
            assert task.runtime_s > 0
