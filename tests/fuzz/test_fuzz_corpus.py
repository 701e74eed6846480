"""The regression corpus: every minimised failure the fuzzer saved (tests/fixtures/fuzz/)
now gives a clean error or is accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz import campaign, corpus
from fuzz.pool import Limits
from fuzz.sources import FUZZ_FIXTURES
from fuzz.targets import TARGETS

SAVED = corpus.load(FUZZ_FIXTURES)


def test_every_saved_case_names_a_known_target() -> None:
    assert SAVED, "the corpus is empty"
    assert {entry.target for entry in SAVED} <= set(TARGETS)


@pytest.mark.parametrize("target", sorted({entry.target for entry in SAVED}))
def test_saved_failures_are_now_clean(target: str, tmp_path: Path) -> None:
    entries = [entry for entry in SAVED if entry.target == target]
    results = campaign.replay(entries, tmp_path, Limits(timeout_s=10.0))
    still = [f"{entry.path.name}: {result.kind} {result.error_type} at {result.where}: "
             f"{result.line} (was {entry.note['triggered']['type']} at "
             f"{entry.note['triggered']['where']})" for entry, result in results if result.failed]
    assert not still, "\n".join(still)
