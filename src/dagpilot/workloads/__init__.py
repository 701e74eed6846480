"""Workload loaders: trace files and built-in generators -> Jobs. Parsing only.

Each format is one module with `read(argument, settings) -> list[JobDraft]`, registered in
READERS. `load` turns a spec (DESIGN.md section 7) into validated Jobs.
"""

from __future__ import annotations

from collections.abc import Callable

from dagpilot.core.config import LoaderSettings
from dagpilot.core.job_draft import JobDraft, build
from dagpilot.core.spec import split_spec
from dagpilot.core.types import Job
from dagpilot.workloads import alibaba, argo, cws, generate, pool, tpch, wfformat

Reader = Callable[[str, LoaderSettings], list[JobDraft]]

READERS: dict[str, Reader] = {
    "wfformat": wfformat.read,
    "argo": argo.read,
    "alibaba": alibaba.read,
    "tpch": tpch.read,
    "cws": cws.read,
    "builtin": generate.read,
}
# a pool's members are specs themselves, read with these readers (workloads/pool.py)
READERS[pool.KIND] = lambda argument, settings: pool.read(argument, settings, read_drafts)


def read_drafts(spec: str, settings: LoaderSettings | None = None) -> list[JobDraft]:
    """The drafts of a spec, before the DAG and field rules are enforced (for the validator)."""
    kind, argument = split_spec(spec, READERS)
    return READERS[kind](argument, settings or LoaderSettings())


def load(spec: str, settings: LoaderSettings | None = None) -> list[Job]:
    """The Jobs of a workload spec such as `wfformat:traces/wfinstances` or `builtin:mix`."""
    return [build(draft) for draft in read_drafts(spec, settings)]
