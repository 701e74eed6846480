"""P(node | pod) -> the protocol's 0-10: only the best nodes get 10, the order is kept."""

from __future__ import annotations

import math

import numpy as np

from dagpilot.serve.extender_scores import integer_score_array


def integer_scores(probabilities: dict[str, float]) -> dict[str, int]:
    """The array form read by node name (as Extender.prioritize reads it)."""
    values = np.array(list(probabilities.values()), dtype=np.float64)
    return dict(zip(probabilities, integer_score_array(values).tolist(), strict=True))


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


def _scalar_rule(probabilities: dict[str, float]) -> dict[str, int]:
    """The rule node by node, as the module's docstring states it."""
    usable = {n: p if math.isfinite(p) and p > 0 else 0.0 for n, p in probabilities.items()}
    best = max(usable.values(), default=0.0)
    if best == 0:
        return dict.fromkeys(usable, 0)
    return {n: 10 if p >= best else min(9, math.floor(10 * p / best)) for n, p in usable.items()}


def test_the_array_form_equals_the_rule_node_by_node() -> None:
    rng = np.random.default_rng(7)
    specials = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-300, 5e-324]
    for size in (1, 2, 3, 10, 1000):
        for _ in range(30):
            values = rng.dirichlet(np.ones(size)).tolist()
            for at in rng.integers(0, size, size // 5).tolist():
                values[at] = specials[at % len(specials)]
            probabilities = {f"n{i}": v for i, v in enumerate(values)}
            assert integer_scores(probabilities) == _scalar_rule(probabilities)
