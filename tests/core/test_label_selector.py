"""Label selectors as kubectl reads them: each operator, the empty selector, aliases for short
keys, the canonical text, and a clear error for what does not parse."""

from __future__ import annotations

import pytest

from dagpilot.core.errors import SpecError
from dagpilot.core.label_selector import parse

LABELS = {"topology.kubernetes.io/zone": "zone-a", "topology.dagpilot.io/rack": "rack-1",
          "gpu": "a100"}
ALIASES = {"zone": "topology.kubernetes.io/zone", "rack": "topology.dagpilot.io/rack"}


@pytest.mark.parametrize(("text", "matches"), [
    ("", True),
    ("zone=zone-a", True), ("zone==zone-a", True), ("zone=zone-b", False),
    ("zone!=zone-b", True), ("zone!=zone-a", False),
    ("rack in (rack-0, rack-1)", True), ("rack in (rack-2,rack-3)", False),
    ("rack notin (rack-2)", True), ("rack notin (rack-1,rack-2)", False),
    ("gpu", True), ("!gpu", False), ("!missing", True), ("missing", False),
    ("missing!=x", True), ("missing in (x)", False),
    ("zone=zone-a,rack in (rack-0,rack-1),gpu", True), ("zone=zone-a,rack=rack-0", False),
])
def test_each_operator_matches_as_kubernetes_does(text: str, matches: bool) -> None:
    assert parse(text, ALIASES).matches(LABELS) is matches


def test_the_text_carries_full_keys_and_parses_back_to_the_same_selector() -> None:
    selector = parse("zone=zone-a, rack in (rack-2,rack-0)", ALIASES)
    text = selector.text()
    assert text == ("topology.kubernetes.io/zone=zone-a,"
                    "topology.dagpilot.io/rack in (rack-0,rack-2)")
    assert parse(text) == selector


@pytest.mark.parametrize("text", ["zone in (a", "zone in a)", "zone=a,,rack=b", "zone in ()",
                                  "zone=bad value", "bad key=x", "zone = a b", "-x=y"])
def test_what_does_not_parse_is_a_clear_error(text: str) -> None:
    with pytest.raises(SpecError):
        parse(text, ALIASES)
