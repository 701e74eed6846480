"""Bad input to the native core (csrc/inputs.c, csrc/run.c) is an error naming the table,
column and row, or the callback, never a crash or a run that reads outside its arrays: mispacked
columns, indices from one table into another out of range, malformed callback results."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

from dagpilot.clusters import load_cluster
from dagpilot.core.config import FaultSettings, SimSettings, StorageQosSettings
from dagpilot.native import _core, pack
from dagpilot.native.kube_statics import kube_statics
from dagpilot.workloads import load

# Faults and storage changes on, so that the core asks for outages and IOPS changes.
SETTINGS = dataclasses.replace(SimSettings(horizon_s=3600.0),
                               faults=FaultSettings(rate_per_node_hour=0.5),
                               storage=StorageQosSettings(collapse_rate_per_hour=2.0))
Packed = tuple[dict[str, float], dict[str, Any], dict[str, np.ndarray]]


@pytest.fixture(scope="module")
def packed() -> Packed:
    jobs, cluster = load("builtin:mix:6"), load_cluster("builtin:scale-10")
    classes, statics = kube_statics(jobs, cluster)
    tables = pack.tables(jobs, cluster, SETTINGS, classes, np.zeros(len(jobs)))
    return pack.params(SETTINGS), tables, statics


def zero_normals() -> list[float]:
    return [0.0] * 64


def no_outage(after_s: float) -> tuple[float, float] | None:
    return None


def no_iops_change(now_s: float, nominal: float, collapsed: int) -> None:
    return None


def run_core(params: dict[str, float], tables: dict[str, Any], statics: dict[str, np.ndarray],
             *, normals: Callable[[], Any] = zero_normals,
             outage: Callable[[float], Any] = no_outage,
             iops: Callable[[float, float, int], Any] = no_iops_change) -> dict[str, Any]:
    return _core.run(params, tables, statics, normals, outage, iops, np.random.default_rng(0),
                     None)


def changed(packed: Packed, table: str, column: str, row: int | None, value: Any) -> Packed:
    """A copy of the packed inputs with tables[table][column][row] = value (every row: None)."""
    params, tables, statics = copy.deepcopy(packed)
    values = tables[table][column].copy()
    values[slice(None) if row is None else row] = value
    tables[table][column] = values
    return params, tables, statics


def test_the_unchanged_inputs_run(packed: Packed) -> None:
    out = run_core(*packed)
    assert out["done"] and len(out["record_uid"]) > 0  # the errors below come from the changes


class Bad(NamedTuple):
    """tables[table][column][row] = value (every row: None), and the error it must give."""

    table: str
    column: str
    row: int | None
    value: int
    message: str


@pytest.mark.parametrize("bad", [Bad(*case) for case in [
    ("tasks", "job", 0, 10**6, r"tasks\.job row 0: 1000000 is not a row of jobs"),
    ("tasks", "job", 0, 1, r"tasks\.job row 0: 1, but the row is in the tasks of job 0"),
    ("tasks", "children", 0, 10**6, r"tasks\.children row 0: offset 1000000"),
    ("tasks", "child_count", 0, 10**6, r"tasks\.children row 0: .* child_count 1000000"),
    ("tasks", "runtimes", 0, 10**6, r"tasks\.runtimes row 0: offset 1000000"),
    ("tasks", "comm_group", 0, 10**6, r"tasks\.comm_group row 0: 1000000"),
    ("tasks", "gpus", 0, -1, r"tasks\.gpus row 0: -1"),
    ("tasks", "instances", 0, 0, r"tasks\.instances row 0: 0 is below 1"),
    ("tasks", "parents", 0, 5, r"tasks\.parents row 0: 5, but \d+ tasks list it as a child"),
    ("tasks", "klass", 0, 10**6, r"tasks\.klass row 0: 1000000"),
    ("tasks", "cpu_m", 0, 2**62, r"tasks\.cpu_m row 0: 4611686018427387904"),
    ("nodes", "pool", 0, 10**6, r"nodes\.pool row 0: 1000000 is not a row of pools"),
    ("nodes", "zone", 0, -1, r"nodes\.zone row 0: -1"),
    ("nodes", "rack", 0, 10**6, r"nodes\.rack row 0: 1000000"),
    ("nodes", "gpus", 0, 65, r"nodes\.gpus row 0: 65"),
    ("nodes", "root_complexes", 0, 10**6, r"nodes\.root_complexes row 0: offset 1000000"),
    ("jobs", "first_task", 1, 10**6, r"jobs\.first_task row 1: first_task 1000000"),
    ("jobs", "task_count", 0, -1, r"jobs\.first_task row 0: .* task_count -1"),
    ("pools", "nodes", 0, 10**6, r"pools\.nodes row 0: offset 1000000"),
    ("pools", "node_count", 0, 10**6, r"pools\.nodes row 0: .* node_count 1000000"),
    ("arrays", "children", None, 10**6, r"arrays\.children row 0: child 1000000"),
    ("arrays", "pool_nodes", None, 10**6, r"arrays\.pool_nodes row 0: 1000000 is not a node"),
]], ids=lambda bad: f"{bad.table}.{bad.column}={bad.value}")
def test_an_index_out_of_range_names_its_table_column_and_row(packed: Packed, bad: Bad) -> None:
    with pytest.raises(ValueError, match=bad.message):
        run_core(*changed(packed, bad.table, bad.column, bad.row, bad.value))


def test_a_child_of_another_job_is_refused(packed: Packed) -> None:
    last_task = len(packed[1]["tasks"]["job"]) - 1  # of the last job, a child of no task before
    with pytest.raises(ValueError, match=rf"arrays\.children row 0: child {last_task} of task"):
        run_core(*changed(packed, "arrays", "children", None, last_task))


def test_more_instances_than_an_int32_holds_are_refused(packed: Packed) -> None:
    row = int(np.flatnonzero(packed[1]["tasks"]["runtimes"] == pack.NONE)[0])
    with pytest.raises(ValueError, match=r"tasks\.instances row \d+: the run's instances pass"):
        run_core(*changed(packed, "tasks", "instances", row, 2**31 - 1))


def mispacked(cpu: np.ndarray, how: str) -> Any:
    """The column packed wrong: another dtype, length or byte order, strided, or a list."""
    return {"float32": cpu.astype(np.float32), "short": cpu[:-1].copy(),
            "byte-swapped": cpu.astype(">f8"), "strided": np.repeat(cpu, 2)[::2],
            "list": cpu.tolist()}[how]


@pytest.mark.parametrize("how", ["float32", "short", "byte-swapped", "strided", "list"])
def test_a_mispacked_column_names_it(packed: Packed, how: str) -> None:
    params, tables, statics = copy.deepcopy(packed)
    tables["tasks"]["cpu"] = mispacked(tables["tasks"]["cpu"], how)
    with pytest.raises(TypeError, match=r"column tasks\.cpu"):
        run_core(params, tables, statics)


@pytest.mark.parametrize(("path", "message"), [
    (("tasks", "iops"), r"tasks has no column iops"),
    (("arrays", "pool_nodes"), r"arrays has no column pool_nodes"),
    (("counts", "racks"), r"counts has no racks"),
    (("pools",), r"tables has no pools"),
])
def test_a_missing_key_is_named(packed: Packed, path: tuple[str, ...], message: str) -> None:
    params, tables, statics = copy.deepcopy(packed)
    holder = tables[path[0]] if len(path) > 1 else tables
    del holder[path[-1]]
    with pytest.raises(KeyError, match=message):
        run_core(params, tables, statics)


def test_a_table_that_is_not_a_dict_is_named(packed: Packed) -> None:
    params, tables, statics = copy.deepcopy(packed)
    tables["nodes"] = list(tables["nodes"].values())
    with pytest.raises(TypeError, match=r"tables\.nodes is a list"):
        run_core(params, tables, statics)


@pytest.mark.parametrize("value", [float("nan"), -1.0, 2.5, 1e30])
def test_a_count_must_be_a_whole_number_in_range(packed: Packed, value: float) -> None:
    params, tables, statics = copy.deepcopy(packed)
    tables["counts"]["zones"] = value
    with pytest.raises(ValueError, match=r"counts\.zones is .*, expected a whole number"):
        run_core(params, tables, statics)


def test_a_count_too_small_for_the_indices_is_refused(packed: Packed) -> None:
    params, tables, statics = copy.deepcopy(packed)
    tables["counts"]["racks"] = 0.0
    with pytest.raises(ValueError, match=r"nodes\.rack row 0: 0 is not below counts\.racks"):
        run_core(params, tables, statics)


@pytest.mark.parametrize(("name", "value"), [("startup_slots", -1.0),
                                             ("oom_retry_limit", float("nan"))])
def test_an_integer_setting_out_of_range_is_named(packed: Packed, name: str,
                                                  value: float) -> None:
    params, tables, statics = copy.deepcopy(packed)
    params[name] = value
    with pytest.raises(ValueError, match=rf"params\.{name} is"):
        run_core(params, tables, statics)


@pytest.mark.parametrize(("block", "message"), [
    ((0.1, 0.2), r"normals\(\) must return a non-empty list of floats, not tuple"),
    ([], r"normals\(\) must return a non-empty list"),
    ([0.5, None], r"normals\(\) must return a list of floats; item 1 is a NoneType"),
])
def test_malformed_normals_are_an_error(packed: Packed, block: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        run_core(*packed, normals=lambda: block)


@pytest.mark.parametrize("outage", [
    lambda after_s: [after_s + 10.0, after_s + 20.0],
    lambda after_s: (after_s + 10.0, "later"),
    lambda after_s: (after_s + 10.0, after_s + 20.0, "cause"),
], ids=["list", "string", "three"])
def test_a_malformed_outage_is_an_error_naming_the_callback(
        packed: Packed, outage: Callable[[float], Any]) -> None:
    with pytest.raises(TypeError, match=r"next_outage\(after_s\) must return None or a tuple"):
        run_core(*packed, outage=outage)


@pytest.mark.parametrize("outage", [
    lambda after_s: (after_s + 10.0, float("nan")),
    lambda after_s: (after_s + 10.0, after_s + 5.0),
    lambda after_s: (after_s - 100.0, after_s - 50.0),
], ids=["nan", "ends-before-it-starts", "past"])
def test_an_outage_that_would_run_back_in_time_is_an_error(
        packed: Packed, outage: Callable[[float], Any]) -> None:
    with pytest.raises(ValueError, match=r"next_outage\(after_s\) returned .*: an outage must "
                       r"start at or after after_s"):
        run_core(*packed, outage=outage)


def test_a_malformed_iops_change_is_an_error_naming_the_callback(packed: Packed) -> None:
    with pytest.raises(TypeError, match=r"next_iops\(now_s, nominal, collapsed\) must return"):
        run_core(*packed, iops=lambda now_s, nominal, collapsed: (now_s + 1.0, 100.0))


# --- floats (issue 14, defect 5): every float the core is given is a number in its range ------

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(("table", "column", "row", "value"), [
    ("tasks", "runtime_s", 0, NAN), ("tasks", "runtime_s", 0, -1.0),
    ("tasks", "cpu", 0, INF), ("tasks", "membw_share", 0, 2.0), ("tasks", "iops", 0, NAN),
    ("jobs", "arrival_s", 1, NAN), ("jobs", "arrival_s", 1, -5.0), ("jobs", "arrival_s", 1, INF),
    ("jobs", "phase_s", 0, NAN), ("nodes", "cpu", 0, NAN), ("nodes", "speed", 0, 0.0),
    ("nodes", "membw_capacity", 0, -1.0), ("pools", "nominal_iops", 0, INF),
    ("pools", "service_ms", 0, NAN),
], ids=str)
def test_a_float_of_the_tables_out_of_range_names_its_table_column_and_row(
        packed: Packed, table: str, column: str, row: int, value: float) -> None:
    shown = {"nan": "nan", "inf": "inf"}.get(str(value), r"-?\d+")
    with pytest.raises(ValueError, match=rf"native run: {table}\.{column} row {row}: "
                                         rf"{shown} is not a number"):
        run_core(*changed(packed, table, column, row, value))


def with_statics(packed: Packed, name: str, value: float) -> Packed:
    """A copy of the packed inputs with the first item of statics[name] set to value."""
    params, tables, statics = copy.deepcopy(packed)
    values = statics[name].copy()
    values.flat[0] = value
    statics[name] = values
    return params, tables, statics


@pytest.mark.parametrize(("name", "value", "rule"), [
    ("capacity_milli", NAN, "a whole number from 0"), ("capacity_milli", INF, "a whole number"),
    ("capacity_milli", 0.5, "a whole number"), ("request_least", NAN, "a whole number"),
    ("request_least", -1e308, "a whole number from 0"), ("request_balanced", NAN, "a whole"),
    ("need", NAN, "or -inf"), ("static_raw", INF, "a whole number"),
    ("static_weight", NAN, "a number"), ("static_constant", INF, "or NaN \\(none\\)"),
    ("separable_constant", -INF, "or NaN \\(none\\)"),
])
def test_a_float_of_the_kube_statics_out_of_its_rule_is_named(
        packed: Packed, name: str, value: float, rule: str) -> None:
    with pytest.raises(ValueError, match=rf"kube statics\.{name} row 0: .* is not .*{rule}"):
        run_core(*with_statics(packed, name, value))


def test_a_capacity_of_zero_must_agree_with_capacity_positive(packed: Packed) -> None:
    with pytest.raises(ValueError, match=r"capacity_positive is 1, but not every capacity_milli"):
        run_core(*with_statics(packed, "capacity_milli", 0.0))
    params, tables, statics = with_statics(packed, "capacity_milli", 0.0)
    statics["capacity_positive"] = np.zeros(1, dtype=np.uint8)
    assert run_core(params, tables, statics)["done"]  # the scores' zero-capacity path


@pytest.mark.parametrize(("name", "value"), [
    ("poll_interval_s", NAN), ("poll_interval_s", -1.0), ("sample_interval_s", 0.0),
    ("sample_interval_s", 1e-9), ("sample_interval_s", NAN), ("submit_latency_s", -100.0),
    ("startup_sigma", NAN), ("startup_median_s", INF), ("horizon_s", NAN), ("horizon_s", 0.0),
    ("retry_backoff_s", INF), ("rtt_same_rack_ms", 0.0), ("membw_knee", NAN),
    ("engine_queue_size", -1.0), ("max_samples", 0.0),
])
def test_a_setting_out_of_range_is_named(packed: Packed, name: str, value: float) -> None:
    params, tables, statics = copy.deepcopy(packed)
    params[name] = value
    with pytest.raises(ValueError, match=rf"params\.{name} is"):
        run_core(params, tables, statics)


def test_an_unlimited_horizon_is_a_setting_in_range(packed: Packed) -> None:
    params, tables, statics = copy.deepcopy(packed)
    params["horizon_s"] = INF
    assert run_core(params, tables, statics)["done"]


class Bounded:
    """A callback that gives `result(args)`, and raises after `calls` calls: a loop that the
    core should have refused fails the test instead of hanging it."""

    def __init__(self, result: Callable[..., Any], calls: int = 1000) -> None:
        self._result = result
        self._left = calls

    def __call__(self, *args: Any) -> Any:
        self._left -= 1
        if self._left < 0:
            raise RuntimeError("the core kept calling: it would not have ended")
        return self._result(*args)


@pytest.mark.parametrize("iops", [
    lambda now_s, nominal, collapsed: (now_s, nominal, False),
    lambda now_s, nominal, collapsed: (now_s - 1.0, nominal, False),
    lambda now_s, nominal, collapsed: (NAN, nominal, False),
    lambda now_s, nominal, collapsed: (now_s + 5.0, NAN, False),
    lambda now_s, nominal, collapsed: (now_s + 5.0, -1.0, False),
], ids=["now", "past", "nan-time", "nan-iops", "negative-iops"])
def test_an_iops_change_that_would_hold_time_is_an_error(
        packed: Packed, iops: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match=r"next_iops\(now_s, nominal, collapsed\) returned .*: "
                                         r"a change must come after now_s"):
        run_core(*packed, iops=Bounded(iops))


@pytest.mark.parametrize("outage", [
    lambda after_s: (after_s, after_s), lambda after_s: (NAN, after_s + 10.0),
], ids=["zero-length-at-once", "nan-start"])
def test_an_outage_that_would_hold_time_is_an_error(packed: Packed,
                                                    outage: Callable[[float], Any]) -> None:
    with pytest.raises(ValueError, match=r"next_outage\(after_s\) returned"):
        run_core(*packed, outage=Bounded(outage))


def test_an_outage_that_never_comes_is_none(packed: Packed) -> None:
    assert run_core(*packed, outage=lambda after_s: (INF, INF))["done"]


@pytest.mark.parametrize("bad", [NAN, INF])
def test_normals_must_be_finite(packed: Packed, bad: float) -> None:
    with pytest.raises(ValueError, match=r"normals\(\) must return finite floats; item 1 is"):
        run_core(*packed, normals=lambda: [0.5, bad])


class FreshBits:
    """A generator whose bit_generator is made afresh on every access: nothing else holds it."""

    @property
    def bit_generator(self) -> np.random.BitGenerator:
        return np.random.PCG64(5)


def test_a_bit_generator_that_nothing_else_holds_is_kept_alive_while_drawn_from(
        packed: Packed) -> None:
    params, tables, statics = packed
    out = _core.run(params, tables, statics, zero_normals, no_outage, no_iops_change,
                    FreshBits(), None)
    assert out["done"]
    expected = np.random.Generator(np.random.PCG64(5))
    assert [_core.draw_below(FreshBits(), 1000) for _ in range(3)] == \
        [int(expected.integers(1000))] * 3  # each draw from a fresh PCG64(5)


@pytest.mark.parametrize(("generator", "error"), [
    (object(), AttributeError), (type("NoCapsule", (), {"bit_generator": 1})(), AttributeError),
    (type("NotACapsule", (), {"bit_generator": type("B", (), {"capsule": 1})()})(), ValueError),
])
def test_a_generator_without_a_bit_generator_is_an_error(generator: object,
                                                         error: type[Exception]) -> None:
    with pytest.raises(error):
        _core.draw_below(generator, 10)


def test_the_tie_break_draw_takes_no_bits_for_fewer_than_two() -> None:
    ours, theirs = np.random.default_rng(3), np.random.default_rng(3)
    assert _core.top_of(np.array([1.0]), ours) == (0, 1.0)
    assert _core.top_of(np.array([], dtype=np.float64), ours)[0] is None
    assert ours.random() == theirs.random()
