"""The curriculum: jobs per episode and the pool share grow stage by stage."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.train.config import CurriculumSettings
from dagpilot.train.curriculum import Curriculum, Stage
from tests.sim.helpers import job, task


def test_stages_grow_geometrically_in_jobs_and_linearly_in_pool_share() -> None:
    plan = Curriculum.of(CurriculumSettings(min_jobs=2, max_jobs=16, stages=4), iterations=8)
    assert [s.jobs for s in plan.stages] == [2, 4, 8, 16]
    assert [s.pool_share for s in plan.stages] == [0.25, 0.5, 0.75, 1.0]
    assert [plan.stage(i).index for i in range(8)] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert plan.stage(100).index == 3  # past the plan: the full size


def test_one_stage_trains_at_full_size_from_the_start() -> None:
    plan = Curriculum.of(CurriculumSettings(min_jobs=3, max_jobs=12, stages=1), iterations=5)
    assert plan.stages == (Stage(0, 12, 1.0),)


POOL = [job(f"j{size}", task("t", 10.0 * size)) for size in (5, 1, 4, 2, 8, 3, 7, 6)]


def test_early_stages_draw_the_smallest_jobs() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        drawn = Curriculum.draw(POOL, Stage(0, 2, 0.25), rng)
        assert sorted(j.id for j in drawn) == ["j1", "j2"]


@pytest.mark.parametrize("seed", range(5))
def test_a_draw_is_distinct_jobs_in_pool_order(seed: int) -> None:
    drawn = Curriculum.draw(POOL, Stage(2, 5, 1.0), np.random.default_rng(seed))
    ids = [j.id for j in drawn]
    assert len(set(ids)) == 5
    assert ids == [j.id for j in POOL if j.id in ids]


def test_a_stage_larger_than_its_share_takes_the_whole_share() -> None:
    drawn = Curriculum.draw(POOL, Stage(0, 6, 0.5), np.random.default_rng(0))
    assert sorted(j.id for j in drawn) == ["j1", "j2", "j3", "j4"]
