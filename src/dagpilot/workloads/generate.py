"""Built-in workloads (`builtin:NAME[:N]`): synthetic jobs modelled on real pipelines.

They need no external data and are deterministic for a given `settings.seed`; the first k jobs
of `NAME:N` do not depend on N. Every archetype is a function `(job_id, rng) -> JobDraft`.

Durations and sizes are log-normal around a median (`_around`): task durations of scientific and
data-processing pipelines are right-skewed, and a log-normal with sigma 0.2-0.5 matches the
spread of the nf-core and WfInstances traces. The figures per task:

- genomics (nf-core sarek-like, per sample FastQC -> BWA-MEM -> GATK HaplotypeCaller -> VEP, then
  one MultiQC report): FastQC keeps about 92 % of its cores busy with a ~1.2 GB JVM peak; BWA-MEM
  is CPU and memory-bandwidth bound (~6.5 GB resident for the hg38 index); HaplotypeCaller peaks
  at ~28 GB once its page cache is counted, above its 16 GiB request, and waits on I/O about half
  of its runtime; VEP is moderate. Runtimes scale with each sample's FASTQ size.
- spark-etl: scan stages (one pod per 128 MiB partition) joined pairwise through shuffle stages,
  then a shuffle aggregation; each shuffle stage is one communication group.
- ml-training: I/O-heavy data preparation, then distributed training (2-4 workers x 2 GPUs or one
  pod with 4-8 GPUs) in one all-reduce group that spends 30-50 % of its time communicating, then
  a one-GPU evaluation. GPU pods tolerate the `nvidia.com/gpu` taint; some pin a GPU model.
- mlflow: prepare -> 1-3 training trials (each train -> evaluate) -> register the best model.
- batch (not in the mix): Alibaba-2018-like CPU-heavy batch jobs for the burst at scale: the
  trace's shape (a chain of 1-5 map/reduce stages of 1-40 instances each, CPU-bound, about
  2 GiB per core), with the instances' requests widened from the trace's 0.5-1 core to 1-16
  cores and their runtimes to a 10-minute median, so that where a pod goes leaves room for the
  next or fragments a node (docs/BENCHMARKS.md, "The 17x burst at 1,000 nodes").
- mix (alias default): a weighted mix of the four pipelines above.
- wfcommons-RECIPE: scientific workflows from the optional wfcommons package
  (see wfcommons_recipes).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dagpilot.core.config import LoaderSettings
from dagpilot.core.echo import shown
from dagpilot.core.errors import SpecError
from dagpilot.core.job_draft import JobDraft
from dagpilot.core.numbers import ascii_whole
from dagpilot.core.types import Resources, TaintEffect, Task, TaskClass, Toleration, labels
from dagpilot.workloads import wfcommons_recipes

GB = 10**9
GIB = 2**30
MIB = 2**20
ARCHETYPE_LABEL = "dagpilot.io/archetype"
GPU_TOLERATION = Toleration("nvidia.com/gpu", "Exists", effect=TaintEffect.NO_SCHEDULE)
DEFAULT_JOBS = 50
MAX_JOBS = 100_000

Archetype = Callable[[str, np.random.Generator], JobDraft]


def read(argument: str, settings: LoaderSettings) -> list[JobDraft]:
    """The drafts of `NAME[:N]`: N jobs (default 50, 10 for wfcommons) of the named workload."""
    name, count = _parse(argument)
    rng = np.random.default_rng(settings.seed)
    if name.startswith(wfcommons_recipes.PREFIX):
        recipe = name.removeprefix(wfcommons_recipes.PREFIX)
        return wfcommons_recipes.generate(recipe, count or wfcommons_recipes.DEFAULT_JOBS, rng,
                                          settings, f"builtin:{argument}")
    if name in ("mix", "default"):
        return mix(count or DEFAULT_JOBS, rng)
    if name not in ARCHETYPES:
        raise SpecError(f"builtin:{argument}", f"unknown built-in workload {shown(name)}; known: "
                        + ", ".join(known_names()))
    archetype = ARCHETYPES[name]
    return [archetype(f"{name}-{index:04d}", rng) for index in range(count or DEFAULT_JOBS)]


def known_names() -> list[str]:
    return [*ARCHETYPES, "mix", "default",
            *(wfcommons_recipes.PREFIX + recipe for recipe in wfcommons_recipes.RECIPES)]


def mix(count: int, rng: np.random.Generator) -> list[JobDraft]:
    """Jobs whose archetype is drawn per job with MIX_WEIGHTS."""
    names = list(MIX_WEIGHTS)
    weights = np.array(list(MIX_WEIGHTS.values()))
    drafts = []
    for index in range(count):
        name = names[int(rng.choice(len(names), p=weights / weights.sum()))]
        drafts.append(ARCHETYPES[name](f"{name}-{index:04d}", rng))
    return drafts


def _parse(argument: str) -> tuple[str, int | None]:
    name, sep, count_text = argument.partition(":")
    if not sep:
        return name, None
    count = ascii_whole(count_text)  # not str.isdigit: "²" passes it, and int() refuses it
    if count is None or not 1 <= count <= MAX_JOBS:
        raise SpecError(f"builtin:{argument}", f"job count must be a whole number from 1 to "
                        f"{MAX_JOBS}, got {shown(count_text)}")
    return name, count


def _around(rng: np.random.Generator, median: float, sigma: float) -> float:
    """A log-normal draw with the given median and log-space standard deviation."""
    return float(median * np.exp(sigma * rng.standard_normal()))


def _draft(archetype: str, job_id: str, tasks: list[Task]) -> JobDraft:
    draft = JobDraft(f"builtin:{archetype}", job_id,
                     labels=labels({ARCHETYPE_LABEL: archetype}))
    for task in tasks:
        draft.add(task, f"task {task.id}")
    return draft


def genomics(job_id: str, rng: np.random.Generator) -> JobDraft:
    """A cohort of 4-16 samples, each FastQC -> BWA -> GATK -> VEP, then one report."""
    tasks: list[Task] = []
    samples = int(rng.integers(4, 17))
    for sample in range(samples):
        tasks.extend(_genomics_sample(f"s{sample:02d}", rng))
    tasks.append(Task(
        "multiqc-report", "multiqc-report", _around(rng, 120, 0.3), Resources(1, 2 * GIB),
        parents=tuple(t.id for t in tasks if t.name in ("fastqc", "vep")),
        peak_memory=int(_around(rng, 1.0 * GB, 0.2)), read_bytes=int(samples * 50 * MIB),
        written_bytes=20 * MIB, cpu_intensity=0.6, io_intensity=0.3, task_class=TaskClass.IO))
    return _draft("genomics", job_id, tasks)


def _genomics_sample(sample: str, rng: np.random.Generator) -> list[Task]:
    size = _around(rng, 1.0, 0.5)  # this sample's FASTQ size relative to a 12 GB median
    fastq = int(12 * GB * size)
    bam = int(0.7 * fastq)
    fastqc = Task(
        f"fastqc-{sample}", "fastqc", _around(rng, 240 * size, 0.15), Resources(2, 2 * GIB),
        peak_memory=int(_around(rng, 1.2 * GB, 0.05)), read_bytes=fastq, written_bytes=2 * MIB,
        cpu_intensity=0.92, membw_intensity=0.05, io_intensity=0.05, task_class=TaskClass.CPU)
    bwa = Task(
        f"bwa-{sample}", "bwa", _around(rng, 2400 * size, 0.2), Resources(8, 8 * GIB),
        parents=(fastqc.id,), peak_memory=int(_around(rng, 6.5 * GB, 0.05)),
        read_bytes=fastq + 5 * GB, written_bytes=bam,
        cpu_intensity=0.9, membw_intensity=0.5, io_intensity=0.05, task_class=TaskClass.MEMORY)
    gatk = Task(
        f"gatk-{sample}", "gatk", _around(rng, 3600 * size, 0.25), Resources(4, 16 * GIB),
        parents=(bwa.id,), peak_memory=int(_around(rng, 28 * GB, 0.05)),
        read_bytes=bam + 3 * GB, written_bytes=int(0.05 * fastq),
        cpu_intensity=0.45, membw_intensity=0.1, io_intensity=0.5, task_class=TaskClass.IO)
    vep = Task(
        f"vep-{sample}", "vep", _around(rng, 900, 0.3), Resources(4, 8 * GIB),
        parents=(gatk.id,), peak_memory=int(_around(rng, 6 * GB, 0.1)),
        read_bytes=int(0.05 * fastq) + 15 * GB, written_bytes=int(0.02 * fastq),
        cpu_intensity=0.7, membw_intensity=0.15, io_intensity=0.2, task_class=TaskClass.CPU)
    return [fastqc, bwa, gatk, vep]


def spark_etl(job_id: str, rng: np.random.Generator) -> JobDraft:
    """2-4 scan stages joined pairwise by shuffle stages, then a shuffle aggregation."""
    scans = [_spark_scan(f"scan-{k}", rng) for k in range(int(rng.integers(2, 5)))]
    tasks = list(scans)
    left = scans[0]
    for k, right in enumerate(scans[1:], start=1):
        left = _spark_shuffle(f"join-{k}", (left.id, right.id), job_id, int(rng.integers(16, 65)),
                              rng)
        tasks.append(left)
    tasks.append(_spark_shuffle("aggregate", (left.id,), job_id, int(rng.integers(4, 17)), rng))
    return _draft("spark-etl", job_id, tasks)


def _instance_runtimes(rng: np.random.Generator, median: float, instances: int) -> tuple[
        float, ...]:
    """Per-instance runtimes of a stage: a stage median, then skew and stragglers around it."""
    stage = _around(rng, median, 0.3)
    return tuple(float(x) for x in stage * np.exp(0.25 * rng.standard_normal(instances)))


def _spark_scan(stage: str, rng: np.random.Generator) -> Task:
    instances = int(rng.integers(8, 65))
    runtimes = _instance_runtimes(rng, 45, instances)
    return Task(
        stage, "scan", float(np.mean(runtimes)), Resources(1, 4 * GIB), instances=instances,
        instance_runtimes_s=runtimes, peak_memory=int(_around(rng, 2.5 * GB, 0.2)),
        read_bytes=128 * MIB, written_bytes=int(_around(rng, 48 * MIB, 0.4)),
        cpu_intensity=0.75, membw_intensity=0.2, io_intensity=0.35, task_class=TaskClass.IO)


def _spark_shuffle(stage: str, parents: tuple[str, ...], job_id: str, instances: int,
                   rng: np.random.Generator) -> Task:
    runtimes = _instance_runtimes(rng, 60, instances)
    return Task(
        stage, stage.partition("-")[0], float(np.mean(runtimes)), Resources(1, 4 * GIB),
        parents=parents, instances=instances, instance_runtimes_s=runtimes,
        peak_memory=int(_around(rng, 3.5 * GB, 0.2)),
        read_bytes=int(_around(rng, 96 * MIB, 0.4)), written_bytes=int(_around(rng, 32 * MIB, 0.4)),
        cpu_intensity=0.7, membw_intensity=0.3, io_intensity=0.1,
        comm_group=f"{job_id}/shuffle-{stage}", comm_share=float(rng.uniform(0.3, 0.5)),
        task_class=TaskClass.NETWORK)


def ml_training(job_id: str, rng: np.random.Generator) -> JobDraft:
    """Data prep -> distributed multi-GPU training in one all-reduce group -> evaluation."""
    model = _gpu_model(rng)
    dataset = int(_around(rng, 100 * GB, 0.6))
    prep = Task(
        "data-prep", "data-prep", _around(rng, 1200, 0.4), Resources(8, 32 * GIB),
        peak_memory=int(_around(rng, 40 * GB, 0.1)), read_bytes=dataset,
        written_bytes=dataset // 2, cpu_intensity=0.6, membw_intensity=0.1, io_intensity=0.5,
        task_class=TaskClass.IO)
    if rng.random() < 0.5:
        workers, gpus = int(rng.choice([2, 4])), 2
    else:
        workers, gpus = 1, int(rng.choice([4, 8]))
    runtime = _around(rng, 3 * 3600, 0.5)
    share = float(rng.uniform(0.3, 0.5))
    trainers = [Task(
        f"train-{rank}", "train", runtime * _around(rng, 1.0, 0.03),
        Resources(4 * gpus, 24 * GIB * gpus, gpus, model), parents=(prep.id,),
        peak_memory=int(_around(rng, 20 * GB * gpus, 0.1)), read_bytes=dataset // 2 // workers,
        written_bytes=int(_around(rng, 2 * GB, 0.5)), cpu_intensity=0.5, membw_intensity=0.15,
        io_intensity=0.05, comm_group=f"{job_id}/allreduce", comm_share=share,
        task_class=TaskClass.GPU, tolerations=(GPU_TOLERATION,)) for rank in range(workers)]
    evaluate = Task(
        "evaluate", "evaluate", _around(rng, 600, 0.3), Resources(4, 16 * GIB, 1, model),
        parents=tuple(t.id for t in trainers), peak_memory=int(_around(rng, 12 * GB, 0.1)),
        read_bytes=dataset // 10, written_bytes=10 * MIB, cpu_intensity=0.4,
        io_intensity=0.15, task_class=TaskClass.GPU, tolerations=(GPU_TOLERATION,))
    return _draft("ml-training", job_id, [prep, *trainers, evaluate])


def _gpu_model(rng: np.random.Generator) -> str | None:
    """The GPU model a job pins, or None (any model) for 40 % of jobs."""
    return [None, "A100", "V100"][int(rng.choice(3, p=[0.4, 0.35, 0.25]))]


def mlflow(job_id: str, rng: np.random.Generator) -> JobDraft:
    """prepare -> 1-3 trials (train -> evaluate) -> register the best model."""
    prepare = Task(
        "prepare", "prepare", _around(rng, 300, 0.4), Resources(4, 8 * GIB),
        peak_memory=int(_around(rng, 9 * GB, 0.15)), read_bytes=int(_around(rng, 10 * GB, 0.5)),
        written_bytes=int(_around(rng, 3 * GB, 0.5)), cpu_intensity=0.6, membw_intensity=0.1,
        io_intensity=0.3, task_class=TaskClass.IO)
    tasks = [prepare]
    for trial in range(int(rng.integers(1, 4))):
        train = _mlflow_train(f"train-{trial}", prepare.id, rng)
        evaluate = Task(
            f"evaluate-{trial}", "evaluate", _around(rng, 180, 0.3), Resources(2, 4 * GIB),
            parents=(train.id,), peak_memory=int(_around(rng, 3 * GB, 0.15)),
            read_bytes=int(_around(rng, 1 * GB, 0.4)), written_bytes=5 * MIB,
            cpu_intensity=0.8, membw_intensity=0.1, io_intensity=0.1)
        tasks += [train, evaluate]
    tasks.append(Task(
        "register", "register", _around(rng, 30, 0.3), Resources(0.5, 512 * MIB),
        parents=tuple(t.id for t in tasks if t.name == "evaluate"),
        peak_memory=int(_around(rng, 300 * MIB, 0.1)), read_bytes=int(_around(rng, 500 * MIB, 0.5)),
        written_bytes=int(_around(rng, 500 * MIB, 0.5)), cpu_intensity=0.2, io_intensity=0.3,
        task_class=TaskClass.NETWORK))
    return _draft("mlflow", job_id, tasks)


def _mlflow_train(task_id: str, parent: str, rng: np.random.Generator) -> Task:
    """Half the trials train on one GPU (deep model), half on CPUs (gradient boosting)."""
    if rng.random() < 0.5:
        return Task(
            task_id, "train", _around(rng, 1800, 0.4), Resources(4, 16 * GIB, 1, _gpu_model(rng)),
            parents=(parent,), peak_memory=int(_around(rng, 14 * GB, 0.15)),
            read_bytes=int(_around(rng, 3 * GB, 0.5)),
            written_bytes=int(_around(rng, 500 * MIB, 0.5)),
            cpu_intensity=0.5, membw_intensity=0.1, io_intensity=0.05, task_class=TaskClass.GPU,
            tolerations=(GPU_TOLERATION,))
    return Task(
        task_id, "train", _around(rng, 1200, 0.4), Resources(8, 16 * GIB), parents=(parent,),
        peak_memory=int(_around(rng, 12 * GB, 0.15)), read_bytes=int(_around(rng, 3 * GB, 0.5)),
        written_bytes=int(_around(rng, 200 * MIB, 0.5)), cpu_intensity=0.95,
        membw_intensity=0.35, io_intensity=0.05, task_class=TaskClass.CPU)


BATCH_CORES = (1, 2, 4, 8, 12, 16)
BATCH_CORE_SHARES = (0.3, 0.2, 0.2, 0.15, 0.08, 0.07)


def batch(job_id: str, rng: np.random.Generator) -> JobDraft:
    """A chain of 1-5 stages (M1 -> R2 -> ...), each 1-40 instances of one CPU-heavy size."""
    tasks: list[Task] = []
    for stage in range(int(rng.integers(1, 6))):
        instances = round(float(np.exp(rng.uniform(0.0, np.log(40.0)))))
        cores = BATCH_CORES[int(rng.choice(len(BATCH_CORES), p=BATCH_CORE_SHARES))]
        runtimes = _instance_runtimes(rng, 600, instances)
        kind = "M" if stage == 0 else "R"
        tasks.append(Task(
            f"{kind}{stage + 1}", kind, float(np.mean(runtimes)), Resources(cores, 2 * cores * GIB),
            parents=(tasks[-1].id,) if tasks else (), instances=instances,
            instance_runtimes_s=runtimes, peak_memory=int(_around(rng, 1.6 * cores * GB, 0.1)),
            read_bytes=int(_around(rng, 256 * MIB, 0.5)), written_bytes=int(_around(
                rng, 64 * MIB, 0.5)),
            cpu_intensity=0.95, membw_intensity=0.1, io_intensity=0.02, task_class=TaskClass.CPU))
    return _draft("batch", job_id, tasks)


ARCHETYPES: dict[str, Archetype] = {
    "batch": batch,
    "genomics": genomics,
    "spark-etl": spark_etl,
    "ml-training": ml_training,
    "mlflow": mlflow,
}

# Shares of the main built-in workload: batch ETL and bioinformatics dominate, as in shared
# research clusters; GPU training is rarer but long.
MIX_WEIGHTS: dict[str, float] = {
    "genomics": 0.3,
    "spark-etl": 0.35,
    "ml-training": 0.15,
    "mlflow": 0.2,
}
