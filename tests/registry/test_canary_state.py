"""ROOT/canary.json: written as the next revision under the lock (a stale writer is refused),
read back equal, every bad field named, and never taken for an unlisted file by verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.registry import publish, verify
from dagpilot.registry.canary import (
    CanaryState,
    Gate,
    Stage,
    canary_path,
    read_canary,
    write_canary,
)

SHIPPED = Path(__file__).resolve().parents[2] / "models" / "current"


def state() -> CanaryState:
    return CanaryState(stable="v1", canary="v2",
                       stages=(Stage("topology.kubernetes.io/zone=zone-a", 24), Stage("", 48)),
                       gate=Gate(window_s=60.0, min_decisions=5, max_regret_increase=None),
                       stage_started_t=1.5, revision=0,
                       history=({"t": 1.5, "action": "plan", "stage": 0, "detail": "x"},))


def test_a_written_state_reads_back_equal_as_the_next_revision(tmp_path: Path) -> None:
    assert read_canary(tmp_path) is None
    written = write_canary(tmp_path, state(), None)
    assert written.revision == 1 and read_canary(tmp_path) == written
    again = write_canary(tmp_path, written, 1)
    assert again.revision == 2 and read_canary(tmp_path) == again


def test_a_writer_that_read_an_older_revision_is_refused(tmp_path: Path) -> None:
    write_canary(tmp_path, state(), None)
    with pytest.raises(InvalidInput, match="revision"):
        write_canary(tmp_path, state(), None)
    assert read_canary(tmp_path).revision == 1  # type: ignore[union-attr]


@pytest.mark.parametrize(("change", "field"), [
    ({"version": 2}, "version"), ({"canary": "../x"}, "canary"), ({"stages": []}, "stages"),
    ({"stage": 5}, "stage"), ({"status": "paused"}, "status"),
    ({"stages": [{"selector": "zone in (a"}]}, "stages[0].selector"),
    ({"gate": {"window_s": "long"}}, "gate.window_s"), ({"revision": True}, "revision"),
])
def test_each_bad_field_is_named(tmp_path: Path, change: dict[str, object],
                                 field: str) -> None:
    document = {**state().document(), **change}
    canary_path(tmp_path).write_text(json.dumps(document))
    with pytest.raises(InvalidInput) as error:
        read_canary(tmp_path)
    assert error.value.field == field and error.value.file == str(canary_path(tmp_path))


def test_verify_does_not_count_the_canary_state_as_an_unlisted_file(tmp_path: Path) -> None:
    root = tmp_path / "models"
    publish(root, "v1", SHIPPED.resolve())
    write_canary(root, state(), None)
    assert verify(root) == []
