"""P(node | pod) -> the protocol's 0-10: only the best nodes get 10, the order is kept."""

from __future__ import annotations

import math

from dagpilot.serve.extender_scores import integer_scores


def test_the_best_node_alone_gets_ten_and_the_others_scale_below_it() -> None:
    assert integer_scores({"a": 0.2, "b": 0.5, "c": 0.3, "d": 0.0}) == \
        {"a": 4, "b": 10, "c": 6, "d": 0}


def test_a_close_second_is_not_a_tie() -> None:
    assert integer_scores({"a": 0.5, "b": 0.4999}) == {"a": 10, "b": 9}


def test_equal_best_nodes_all_get_ten() -> None:
    assert integer_scores({"a": 0.5, "b": 0.5}) == {"a": 10, "b": 10}


def test_nothing_usable_scores_zero() -> None:
    assert integer_scores({}) == {}
    assert integer_scores({"a": 0.0, "b": math.nan, "c": -1.0}) == {"a": 0, "b": 0, "c": 0}
    assert integer_scores({"a": math.nan, "b": 0.1}) == {"a": 0, "b": 10}
