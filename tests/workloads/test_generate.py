from __future__ import annotations

import random
import sys
from collections import Counter

import numpy as np
import pytest

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import SpecError
from dagpilot.core.job_draft import build, check
from dagpilot.core.types import Job, Taint, TaskClass
from dagpilot.workloads import generate

GB = 10**9
GPU_TAINT = Taint("nvidia.com/gpu", "present")


def jobs(argument: str, seed: int = 0) -> list[Job]:
    return [build(draft) for draft in generate.read(argument, LoaderSettings(seed=seed))]


@pytest.mark.parametrize("name", ["genomics", "spark-etl", "ml-training", "mlflow", "mix",
                                  "batch"])
def test_every_builtin_job_passes_the_draft_rules_without_warnings(name: str) -> None:
    drafts = generate.read(f"{name}:40", LoaderSettings())
    assert len(drafts) == 40
    for draft in drafts:
        assert check(draft) == []
        job = build(draft)
        assert job.critical_path_s > 0 and job.total_work_core_s > 0
        for task in job.tasks:
            assert 0 <= task.cpu_intensity <= 1 and 0 <= task.membw_intensity <= 1
            assert 0 <= task.io_intensity <= 1 and 0 <= task.comm_share <= 1
            assert task.peak_memory is not None and task.peak_memory > 0
            assert task.read_bytes > 0 and task.written_bytes > 0


def test_the_default_workload_is_the_mix_of_all_archetypes() -> None:
    mixed = jobs("mix:200")
    assert [job.id for job in mixed] == [job.id for job in jobs("default:200")]
    archetypes = Counter(job.label(generate.ARCHETYPE_LABEL) for job in mixed)
    assert set(archetypes) == {"genomics", "spark-etl", "ml-training", "mlflow"}
    assert all(count >= 15 for count in archetypes.values())
    assert len(jobs("mix")) == generate.DEFAULT_JOBS


def test_genomics_fastqc_bwa_gatk_vep_per_sample_then_one_report() -> None:
    for job in jobs("genomics:20"):
        samples = [t.id.removeprefix("fastqc-") for t in job.tasks if t.name == "fastqc"]
        assert 4 <= len(samples) <= 16
        for sample in samples:
            assert job.task(f"bwa-{sample}").parents == (f"fastqc-{sample}",)
            assert job.task(f"gatk-{sample}").parents == (f"bwa-{sample}",)
            assert job.task(f"vep-{sample}").parents == (f"gatk-{sample}",)
        report = job.task("multiqc-report")
        assert {f"vep-{s}" for s in samples} <= set(report.parents)
        assert job.tasks[-1].id == "multiqc-report"


def test_genomics_task_figures() -> None:
    tasks = [task for job in jobs("genomics:20") for task in job.tasks]
    fastqc = [t for t in tasks if t.name == "fastqc"]
    assert all(t.cpu_intensity == pytest.approx(0.92) for t in fastqc)
    assert all(t.task_class is TaskClass.CPU for t in fastqc)
    assert np.median([t.peak_memory for t in fastqc]) == pytest.approx(1.2 * GB, rel=0.05)
    bwa = [t for t in tasks if t.name == "bwa"]
    assert all(t.cpu_intensity >= 0.85 and t.membw_intensity >= 0.4 for t in bwa)
    gatk = [t for t in tasks if t.name == "gatk"]
    assert np.median([t.peak_memory for t in gatk]) == pytest.approx(28 * GB, rel=0.05)
    for task in gatk:
        assert task.task_class is TaskClass.IO and task.io_intensity >= 0.4
        assert task.peak_memory is not None and task.peak_memory > task.requests.memory
    vep = [t for t in tasks if t.name == "vep"]
    assert all(0.1 <= t.io_intensity < 0.4 and t.cpu_intensity < 0.92 for t in vep)


def test_spark_stages_have_instances_and_one_comm_group_per_shuffle() -> None:
    for job in jobs("spark-etl:20"):
        scans = [t for t in job.tasks if t.name == "scan"]
        shuffles = [t for t in job.tasks if t.name in ("join", "aggregate")]
        assert 2 <= len(scans) <= 4 and len(shuffles) == len(scans)
        assert all(t.instances > 1 and len(t.instance_runtimes_s) == t.instances
                   for t in job.tasks)
        assert all(t.comm_group is None for t in scans)
        groups = [t.comm_group for t in shuffles]
        assert None not in groups and len(set(groups)) == len(groups)
        assert all(0.3 <= t.comm_share <= 0.5 for t in shuffles)
        assert job.tasks[-1].name == "aggregate" and job.tasks[-1].children == ()


def test_ml_training_is_one_all_reduce_group_of_multi_gpu_tasks() -> None:
    layouts = set()
    for job in jobs("ml-training:30"):
        trainers = [t for t in job.tasks if t.name == "train"]
        assert len({t.comm_group for t in trainers}) == 1 and trainers[0].comm_group
        assert all(t.comm_share >= 0.3 for t in trainers)
        assert all(t.requests.gpus >= 2 for t in trainers)
        assert len({t.requests.gpu_model for t in trainers}) == 1
        layouts.add((len(trainers), trainers[0].requests.gpus))
        assert job.task("data-prep").task_class is TaskClass.IO
        assert set(job.task("evaluate").parents) == {t.id for t in trainers}
        for task in job.tasks:
            if task.requests.gpus:
                assert any(tol.tolerates(GPU_TAINT) for tol in task.tolerations)
                assert task.task_class is TaskClass.GPU
    assert layouts == {(2, 2), (4, 2), (1, 4), (1, 8)}
    models = {t.requests.gpu_model for job in jobs("ml-training:30") for t in job.tasks
              if t.requests.gpus}
    assert models == {None, "A100", "V100"}


def test_mlflow_prepares_trains_evaluates_and_registers() -> None:
    for job in jobs("mlflow:20"):
        assert job.tasks[0].id == "prepare" and job.tasks[-1].id == "register"
        trials = [t for t in job.tasks if t.name == "train"]
        assert 1 <= len(trials) <= 3
        for train in trials:
            assert train.parents == ("prepare",)
            (evaluate,) = train.children
            assert job.task(evaluate).children == ("register",)


def test_batch_is_a_chain_of_cpu_heavy_stages_of_whole_core_sizes() -> None:
    batch = jobs("batch:300")
    assert not any(job.label(generate.ARCHETYPE_LABEL) != "batch" for job in batch)
    for job in batch:
        assert 1 <= len(job.tasks) <= 5
        for before, after in zip(job.tasks, job.tasks[1:], strict=False):
            assert after.parents == (before.id,)  # a chain: M1 -> R2 -> ...
        for task in job.tasks:
            assert task.requests.cpu in generate.BATCH_CORES and 1 <= task.instances <= 40
            assert task.requests.memory == 2 * task.requests.cpu * 2**30
            assert task.task_class is TaskClass.CPU and task.cpu_intensity >= 0.9
    cores = Counter(task.requests.cpu for job in batch for task in job.tasks)
    assert cores[16] > 0 and cores[1] > cores[16]  # large pods are rarer, but there
    runtimes = [t.runtime_s for job in batch for t in job.tasks]
    assert 400 < float(np.median(runtimes)) < 900  # a 10-minute median


def test_same_seed_same_jobs_and_a_prefix_does_not_depend_on_the_count() -> None:
    first, again = jobs("mix:30", seed=3), jobs("mix:30", seed=3)
    assert [job.tasks for job in first] == [job.tasks for job in again]
    assert [job.tasks for job in jobs("mix:10", seed=3)] == [job.tasks for job in first[:10]]
    assert [job.tasks for job in jobs("mix:30", seed=4)] != [job.tasks for job in first]


@pytest.mark.parametrize("argument", ["nope", "genomics:0", "genomics:x", "mix:", "mix:-3",
                                      "wfcommons-nope:2"])
def test_bad_names_and_counts_are_spec_errors(argument: str) -> None:
    with pytest.raises(SpecError):
        generate.read(argument, LoaderSettings())


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(SpecError, match="genomics, spark-etl, ml-training, mlflow, mix"):
        generate.read("unknown", LoaderSettings())


def test_wfcommons_without_the_package_says_how_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wfcommons.wfchef", None)
    with pytest.raises(SpecError, match=r"pip install dagpilot\[gen\]"):
        generate.read("wfcommons-montage:1", LoaderSettings())


def test_wfcommons_recipes_give_valid_seeded_jobs_and_leave_global_random_alone() -> None:
    pytest.importorskip("wfcommons")
    random.seed(11)
    np.random.seed(11)
    before = (random.random(), np.random.random())
    random.seed(11)
    np.random.seed(11)
    first = jobs("wfcommons-rnaseq:2", seed=5)
    assert (random.random(), np.random.random()) == before
    assert len(first) == 2
    assert all(20 <= len(job.tasks) <= 320 for job in first)  # recipes stop below the bound
    assert all(job.total_work_core_s > 0 and len(job.depths) == len(job.tasks)
               for job in first)
    assert [job.tasks for job in jobs("wfcommons-rnaseq:2", seed=5)] == [
        job.tasks for job in first]
