"""Job ids from several sources made distinct: an id two sources share gets its source's tag."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence


def tagged_where_shared(groups: Sequence[Sequence[str]],
                        tag: Callable[[int], str]) -> list[list[str]]:
    """Each group's ids, an id found more than once across all groups as `TAG.ID` with the
    tag of its group's index."""
    counts = Counter(job_id for ids in groups for job_id in ids)
    return [[f"{tag(index)}.{job_id}" if counts[job_id] > 1 else job_id for job_id in ids]
            for index, ids in enumerate(groups)]
