"""Errors cross process boundaries whole: the benchmark runs in worker processes."""

from __future__ import annotations

import pickle

import pytest

from dagpilot.bench.feasibility import EmptyCluster, NeverFits
from dagpilot.core.errors import DagpilotError, IntegrityError, InvalidInput, SpecError
from dagpilot.core.types import Cluster, Job, NodeSpec, Resources, Task
from dagpilot.registry.errors import SchemaMismatch


def errors() -> list[DagpilotError]:
    task = Task("t", "t", 10.0, Resources(64.0, 2**30))
    cluster = Cluster("small", (NodeSpec("n1", Resources(4.0, 2**33)),))
    return [InvalidInput("trace.json", "task 3", "runtime", "negative"),
            SpecError("builtin:nope", "unknown workload"),
            IntegrityError("models/current/policy.pt", "checksum mismatch"),
            SchemaMismatch("models/x", "schema 1, serving builds 2"),
            NeverFits(Job("j", (task,)), task, cluster), EmptyCluster(Cluster("none", ()))]


@pytest.mark.parametrize("error", errors(), ids=lambda error: type(error).__name__)
def test_an_error_survives_pickling_with_its_message_and_fields(error: DagpilotError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert vars(copy) == vars(error)
