from __future__ import annotations

import pytest

from dagpilot.core.types import (
    Cluster,
    Gpu,
    NodeSpec,
    Requirement,
    Resources,
    Taint,
    TaintEffect,
    Task,
    Toleration,
)

GIB = 2**30


def test_resources_arithmetic_and_fit() -> None:
    a = Resources(2.0, 4 * GIB, 1, "A100")
    b = Resources(1.5, GIB, 0)
    assert a + b == Resources(3.5, 5 * GIB, 1, "A100")
    assert a - b == Resources(0.5, 3 * GIB, 1, "A100")
    assert b.fits_in(a)
    assert not a.fits_in(b)
    assert Resources(2.0, 4 * GIB, 2).fits_in(a) is False


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        (Toleration("gpu", "Equal", "yes"), Taint("gpu", "yes"), True),
        (Toleration("gpu", "Equal", "no"), Taint("gpu", "yes"), False),
        (Toleration("gpu", "Exists"), Taint("gpu", "anything"), True),
        (Toleration("", "Exists"), Taint("other", "x", TaintEffect.NO_EXECUTE), True),
        (Toleration("gpu", "Exists", effect=TaintEffect.NO_EXECUTE), Taint("gpu"), False),
        (Toleration("disk", "Exists"), Taint("gpu"), False),
    ],
)
def test_toleration_table(toleration: Toleration, taint: Taint, expected: bool) -> None:
    assert toleration.tolerates(taint) is expected


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        (Requirement("zone", "In", ("a", "b")), True),
        (Requirement("zone", "NotIn", ("a",)), False),
        (Requirement("zone", "Exists"), True),
        (Requirement("gpu", "DoesNotExist"), True),
        (Requirement("cores", "Gt", ("32",)), True),
        (Requirement("cores", "Lt", ("32",)), False),
        (Requirement("zone", "Gt", ("1",)), False),  # not an integer label
        (Requirement("missing", "Lt", ("9",)), False),
    ],
)
def test_requirement_table(requirement: Requirement, expected: bool) -> None:
    assert requirement.matches({"zone": "a", "cores": "64"}) is expected


def test_task_work_counts_every_instance() -> None:
    task = Task("t", "t", 10.0, Resources(2.0), instances=3)
    assert task.work_core_s == 60.0
    measured = Task("m", "m", 10.0, Resources(0.5), instances=3,
                    instance_runtimes_s=(4.0, 6.0, 20.0))
    assert measured.work_core_s == 15.0
    assert measured.longest_runtime_s == 20.0


def test_cluster_capacity_and_root_complexes() -> None:
    gpus = tuple(Gpu(i, "A100", i // 4) for i in range(8))
    big = NodeSpec("big", Resources(64, 256 * GIB, 8, "A100"), gpus=gpus)
    small = NodeSpec("small", Resources(8, 32 * GIB))
    cluster = Cluster("c", (small, big))
    assert cluster.capacity == Resources(72, 288 * GIB, 8)
    assert cluster.largest_node is big
    assert [len(group) for group in big.root_complexes.values()] == [4, 4]
    assert cluster.node("small") is small
