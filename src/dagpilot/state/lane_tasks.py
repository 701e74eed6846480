"""The candidates' task rows of several decisions at once: lock-step rollouts' lanes.

Per decision, the task rows that move (`task_features`) are some twenty numpy calls on a few
candidates' figures. They are element-wise per candidate, so the lanes' candidates are
gathered per decision (their jobs and fixed columns) and the moving columns computed once
over all of them, then cut back into lanes: each lane's block is what `task_features` gives
its decision alone, bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import PodRef
from dagpilot.state.schema import TASK, FixedColumns
from dagpilot.state.task_features import JobNow, TaskInputs, moving_columns, task_inputs

F32 = npt.NDArray[np.float32]
Decision = tuple[Sequence[PodRef], Mapping[str, JobNow], float]
"""One lane's candidates, their jobs (by id) and the view's clock."""


def lane_task_features(decisions: Sequence[Decision]) -> list[F32]:
    """Each decision's (candidates, TASK.dim) raw rows; every decision has a candidate."""
    if any(not candidates for candidates, _, _ in decisions):
        raise ValueError("lane task features need at least one candidate per decision")
    lanes = [task_inputs(candidates, jobs) for candidates, jobs, _ in decisions]
    counts = [len(candidates) for candidates, _, _ in decisions]
    now_s = np.repeat(np.array([now for _, _, now in decisions], dtype=np.float64), counts)
    inputs = TaskInputs(
        candidates=[pod for lane in lanes for pod in lane.candidates],
        per_job=[job for lane in lanes for job in lane.per_job],
        tasks=np.concatenate([lane.tasks for lane in lanes]),
        fixed=FixedColumns(lanes[0].fixed.names,
                           np.concatenate([lane.fixed.array for lane in lanes])))
    rows = TASK.stack(moving_columns(inputs, now_s), len(now_s), inputs.fixed)
    return np.split(rows, np.cumsum(counts)[:-1])
