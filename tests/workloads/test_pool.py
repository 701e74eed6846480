"""Job pools (`pool:FILE`): members sampled, capped and interleaved by a seed; bad files named."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput, SpecError
from dagpilot.workloads import load, read_drafts

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO.parent / "shared" / "traces"


def pool_file(tmp_path: Path, text: str, name: str = "pool.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


TWO_MEMBERS = """
shuffle_seed = {seed}
[[member]]
spec = "builtin:genomics:6"
[[member]]
spec = "builtin:mlflow:6"
"""


def test_members_are_interleaved_by_the_seed_and_keep_every_job(tmp_path: Path) -> None:
    first = [job.id for job in load(f"pool:{pool_file(tmp_path, TWO_MEMBERS.format(seed=0))}")]
    again = [job.id for job in load(f"pool:{pool_file(tmp_path, TWO_MEMBERS.format(seed=0))}")]
    other = [job.id for job in load(f"pool:{pool_file(tmp_path, TWO_MEMBERS.format(seed=5))}")]
    alone = [job.id for job in load("builtin:genomics:6") + load("builtin:mlflow:6")]
    assert first == again and sorted(first) == sorted(alone) and first != other
    assert first != alone  # not one member after the other


def test_jobs_samples_and_max_pods_drops(tmp_path: Path) -> None:
    sizes = {draft.job_id: draft.instances for draft in read_drafts("builtin:spark-etl:20")}
    limit = sorted(sizes.values())[10]
    text = f'[[member]]\nspec = "builtin:spark-etl:20"\nmax_pods = {limit}\n'
    capped = load(f"pool:{pool_file(tmp_path, text)}")
    assert {job.id for job in capped} == {i for i, n in sizes.items() if n <= limit}
    sampled = load("pool:" + pool_file(tmp_path, text + "jobs = 4\n"))
    assert len(sampled) == 4 and {job.id for job in sampled} <= {job.id for job in capped}


def test_ids_two_members_share_get_the_member_number(tmp_path: Path) -> None:
    text = '[[member]]\nspec = "builtin:mlflow:2"\n[[member]]\nspec = "builtin:mlflow:3"\n'
    ids = Counter(job.id for job in load(f"pool:{pool_file(tmp_path, text)}"))
    assert len(ids) == 5 and set(ids.values()) == {1}
    assert sum(i.startswith("m1.") for i in ids) == 2 and sum(i.startswith("m2.") for i in ids) == 2


def test_builtin_members_take_the_loader_seed(tmp_path: Path) -> None:
    text = '[[member]]\nspec = "builtin:mix:4"\n'
    path = pool_file(tmp_path, text)
    seeded = load(f"pool:{path}", LoaderSettings(seed=1))
    assert [j.total_work_core_s for j in seeded] != [j.total_work_core_s
                                                      for j in load(f"pool:{path}")]
    assert sorted(j.total_work_core_s for j in seeded) == sorted(
        j.total_work_core_s for j in load("builtin:mix:4", LoaderSettings(seed=1)))


@pytest.mark.parametrize(("text", "record", "field", "says"), [
    ("shuffle_seed = 0\n", "top level", "member", "[[member]]"),
    ("colour = 1\n[[member]]\nspec = 'builtin:mix:1'\n", "top level", "colour", "unknown key"),
    ("[[member]]\nspec = 'builtin:mix:1'\nweight = 2\n", "member 1", "weight", "unknown key"),
    ("[[member]]\njobs = 2\n", "member 1", "spec", "workload spec"),
    ("[[member]]\nspec = 'pool:other.toml'\n", "member 1", "spec", "cannot hold a pool"),
    ("[[member]]\nspec = 'builtin:mix:1'\njobs = 0\n", "member 1", "jobs", "at least 1"),
    ("[[member]]\nspec = 'builtin:mix:1'\nmax_pods = 2.5\n", "member 1", "max_pods", "whole"),
    ("[[member]]\nspec = 'builtin:mix:1'\njobs = true\n", "member 1", "jobs", "whole"),
    ("shuffle_seed = -1\n[[member]]\nspec = 'builtin:mix:1'\n", "top level", "shuffle_seed",
     "whole"),
    ("member = [1]\n", "member 1", "", "a table"),
])
def test_a_bad_pool_file_is_refused_with_its_place(tmp_path: Path, text: str, record: str,
                                                   field: str, says: str) -> None:
    path = pool_file(tmp_path, text)
    with pytest.raises(InvalidInput) as caught:
        load(f"pool:{path}")
    assert (caught.value.file, caught.value.record, caught.value.field) == (path, record, field)
    assert says in str(caught.value)


def test_not_toml_and_too_many_members_are_refused(tmp_path: Path) -> None:
    path = pool_file(tmp_path, "[[member]\n")
    with pytest.raises(InvalidInput, match="not valid TOML") as caught:
        load(f"pool:{path}")
    assert caught.value.file == path
    many = pool_file(tmp_path, "[[member]]\nspec = 'builtin:mix:1'\n" * 65, "many.toml")
    with pytest.raises(InvalidInput, match="65 members"):
        load(f"pool:{many}")


def test_a_member_error_names_the_member_file(tmp_path: Path) -> None:
    missing = tmp_path / "absent.json"
    path = pool_file(tmp_path, f"[[member]]\nspec = 'wfformat:{missing}'\n")
    with pytest.raises(InvalidInput) as caught:
        load(f"pool:{path}")
    assert str(missing) in str(caught.value)
    with pytest.raises(SpecError, match="unknown kind"):
        load("pool:" + pool_file(tmp_path, "[[member]]\nspec = 'nope:x'\n"))


@pytest.mark.skipif(not TRACES.is_dir(), reason="needs ../shared/traces")
def test_the_shipped_pools_hold_no_job_and_no_family_in_common(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the pools' paths are read from the repository root
    train = load("pool:configs/pools/train-real.toml", LoaderSettings(seed=1))
    unseen = load("pool:configs/pools/unseen-real.toml")
    assert not {job.id for job in train} & {job.id for job in unseen}
    families = {job.id.split("-chameleon")[0].split("/")[0] for job in train}
    assert not families & {job.id.split("-chameleon")[0].split("/")[0] for job in unseen}
    assert not any(job.id.startswith("tpch/") for job in train)
