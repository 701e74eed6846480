"""Job pools (`pool:FILE.toml`): several workload specs as one pool, sampled and interleaved.

Poisson arrivals take a pool's jobs in order (workloads/arrivals.py), so specs given one after
another would arrive one family at a time, and an hour of arrivals would see only the first.
A pool file names its members, optionally caps each (jobs with more pods than `max_pods` are
dropped: one Alibaba job of 176,000 instances would be a whole episode; then at most `jobs`
of them, a seeded sample) and interleaves them all in one seeded random order. The training
pool and the held-out evaluation pools of docs/TRAINING.md are such files (configs/pools/).

    shuffle_seed = 0            # the sample and the order; optional, 0
    [[member]]
    spec = "wfformat:../shared/traces/wfinstances/pegasus/montage"   # any spec but a pool
    jobs = 10                   # optional: at most this many of its jobs
    max_pods = 3000             # optional: only jobs of at most this many pods

A member's relative paths are read from the working directory, as on the command line. Job
ids that two members share get the member's number prefixed (`m2.ID`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft
from dagpilot.core.reading.toml_documents import read_toml
from dagpilot.core.shared_ids import tagged_where_shared

MAX_POOL_BYTES = 1 << 16  # a pool file is a few dozen lines
MAX_MEMBERS = 64
KIND = "pool"
MEMBER_KEYS = ("spec", "jobs", "max_pods")

DraftReader = Callable[[str, LoaderSettings], list[JobDraft]]


@dataclass(frozen=True)
class Member:
    spec: str
    jobs: int | None
    max_pods: int | None


def read(argument: str, settings: LoaderSettings, read_member: DraftReader) -> list[JobDraft]:
    """The drafts of the pool file `argument`, sampled and interleaved by its shuffle seed."""
    document = read_toml(argument, MAX_POOL_BYTES, "a job pool")
    seed = _whole(argument, "top level", "shuffle_seed", document.get("shuffle_seed", 0))
    unknown = set(document) - {"shuffle_seed", "member"}
    if unknown:
        raise InvalidInput(argument, "top level", sorted(unknown)[0],
                           "unknown key; known: member, shuffle_seed")
    members = _members(argument, document.get("member"))
    rng = np.random.default_rng((seed, 0x9001))
    drafts = [_sample(member, read_member(member.spec, settings), rng) for member in members]
    return _interleave(_unclashed(drafts), rng)


def _members(file: str, raw: Any) -> list[Member]:
    if not isinstance(raw, list) or not raw:
        raise InvalidInput(file, "top level", "member",
                           "expected one or more [[member]] tables")
    if len(raw) > MAX_MEMBERS:
        raise InvalidInput(file, "top level", "member",
                           f"{len(raw)} members; at most {MAX_MEMBERS}")
    return [_member(file, f"member {index + 1}", entry) for index, entry in enumerate(raw)]


def _member(file: str, record: str, entry: Any) -> Member:
    if not isinstance(entry, dict):
        raise InvalidInput(file, record, "", "expected a table")
    unknown = set(entry) - set(MEMBER_KEYS)
    if unknown:
        raise InvalidInput(file, record, sorted(unknown)[0],
                           f"unknown key; known: {', '.join(MEMBER_KEYS)}")
    spec = entry.get("spec")
    if not isinstance(spec, str) or not spec:
        raise InvalidInput(file, record, "spec", "expected a workload spec such as builtin:mix")
    if spec.startswith(f"{KIND}:"):
        raise InvalidInput(file, record, "spec", "a pool cannot hold a pool")
    jobs, max_pods = (None if entry.get(key) is None else _whole(file, record, key, entry[key],
                                                                  least=1)
                      for key in ("jobs", "max_pods"))
    return Member(spec, jobs, max_pods)


def _whole(file: str, record: str, key: str, value: Any, least: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value < 2**63:
        raise InvalidInput(file, record, key, f"expected a whole number of at least {least}, "
                           f"got {value!r:.40}")
    return value


def _sample(member: Member, drafts: list[JobDraft], rng: np.random.Generator) -> list[JobDraft]:
    """The member's jobs within `max_pods`, then a seeded sample of `jobs` of them (in the
    member's order)."""
    kept = [draft for draft in drafts
            if member.max_pods is None or draft.instances <= member.max_pods]
    if member.jobs is None or member.jobs >= len(kept):
        return kept
    chosen = np.sort(rng.choice(len(kept), size=member.jobs, replace=False))
    return [kept[int(index)] for index in chosen]


def _unclashed(members: list[list[JobDraft]]) -> list[JobDraft]:
    ids = tagged_where_shared([[draft.job_id for draft in drafts] for drafts in members],
                              lambda index: f"m{index + 1}")
    for drafts, new_ids in zip(members, ids, strict=True):
        for draft, job_id in zip(drafts, new_ids, strict=True):
            draft.job_id = job_id
    return [draft for drafts in members for draft in drafts]


def _interleave(drafts: list[JobDraft], rng: np.random.Generator) -> list[JobDraft]:
    return [drafts[int(index)] for index in rng.permutation(len(drafts))]
