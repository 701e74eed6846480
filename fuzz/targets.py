"""The targets: a name, the seed inputs, the parser that runs one input (`fuzz.parsers`), and
whether the format takes gzip. A new parser (the live side's AdmissionReview, extender
arguments, signed submissions) is one more entry in TARGETS and one parser factory.

Seeds are the hand-written fixtures and the real shared traces (read at run time; large ones
cut down by a derivation, see fuzz.sources). Seeds whose file is absent are left out, so the
harness runs from the fixtures alone on a machine without ../shared/traces.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fuzz.inputs import Companions, Seed
from fuzz.sources import FIXTURES, MODELS, path_of


@dataclass(frozen=True)
class Target:
    name: str
    parser: str  # "module:factory", imported in the worker only
    seeds: Callable[[], list[Seed]]
    gzip: bool = False  # the format takes gzipped files: gzip wrapping is one of the mutations


def _present(*seeds: Seed) -> list[Seed]:
    """The seeds whose files (and companions' files) exist here."""
    def exists(source: str) -> bool:
        path = path_of(source)
        return path is None or path.is_file()
    return [seed for seed in seeds
            if exists(seed.source) and all(exists(source) for _, source in seed.companions)]


def _fixtures(folder: str, suffix: str, name: str, syntax: str) -> list[Seed]:
    paths = sorted((FIXTURES / folder).rglob(f"*{suffix}"))
    return [Seed(_fixture_source(path), name, syntax) for path in paths]


WF = "traces:wfinstances"
CWS = "traces:cws-k8s-nextflow"
ALIBABA = "traces:alibaba-v2018-dags"
GPU = "traces:alibaba-gpu-v2023"


def _wfformat() -> list[Seed]:
    real = ("helloworld/helloworld-chain-5-chameleon",
            "helloworld/helloworld-forkjoin-10-chameleon",
            "pegasus/srasearch/srasearch-chameleon-10a-001",
            "makeflow/blast/blast-chameleon-small-001",
            "pegasus/epigenomics/epigenomics-chameleon-hep-1seq-100k-001",
            "pegasus/1000genome/1000genome-chameleon-2ch-100k-001")
    return _present(
        *_fixtures("wfformat", ".json", "instance.json", "json"),
        Seed("fixtures:validate/wf_valid.json", "instance.json", "json"),
        Seed("fixtures:validate/wf_machines.json", "instance.json", "json"),
        *(Seed(f"{WF}/{name}.json.gz", "instance.json", "json") for name in real))


def _argo() -> list[Seed]:
    seeds = []
    for path in sorted((FIXTURES / "argo").rglob("*.yaml")):
        history = path.with_name(path.stem + ".history.json")
        companions: Companions = (
            ((history.name, _fixture_source(history)),) if history.is_file() else ())
        seeds.append(Seed(_fixture_source(path), path.name, "yaml", companions))
    return seeds


def _argo_history() -> list[Seed]:
    return [Seed("fixtures:argo/valid/diamond.history.json", "diamond.history.json", "json",
                 (("diamond.yaml", "fixtures:argo/valid/diamond.yaml"),))]


def _argo_digest() -> list[Seed]:
    digest = "traces:argo-examples-dags/argo_example_dags.json"
    return _present(*(Seed(f"{digest}|json-window={start}+4", "argo_example_dags.json", "json")
                      for start in range(0, 40, 4)))


def _alibaba() -> list[Seed]:
    return _present(
        *_fixtures("alibaba", ".csv", "batch_task.csv", "csv"),
        Seed("fixtures:validate/alibaba/batch_task.csv", "batch_task.csv", "csv"),
        Seed(f"{ALIBABA}/random_50_dags.csv.gz", "batch_task.csv", "csv"),
        Seed(f"{ALIBABA}/set_0_6600_dags.csv.gz|head=200", "batch_task.csv", "csv"),
        Seed(f"{ALIBABA}/straight_chain_7k_dags_minlen4_set1.csv.gz|head=200", "batch_task.csv",
             "csv"))


def _tpch() -> list[Seed]:
    real = "traces:decima-tpch/tpch_decima.json.gz"
    return _present(Seed("fixtures:tpch/small.json", "tpch.json", "json"),
                    *(Seed(f"{real}|json-window={start}+3", "tpch.json", "json")
                      for start in (0, 6, 12, 19)))


def _cws_pair(trace: str, dag: str, name: str) -> tuple[str, str, str, str]:
    return trace, f"traces/{name}.csv", dag, f"process_dags/{name}.json"


def _cws_pairs() -> list[tuple[str, str, str, str]]:
    pairs = [_cws_pair("fixtures:cws/traces/toy.csv", "fixtures:cws/process_dags/toy.json", "toy"),
             _cws_pair("fixtures:validate/cws/traces/tiny.csv",
                       "fixtures:validate/cws/process_dags/tiny.json", "tiny")]
    for pipeline in ("ampliseq", "nanoseq", "rnaseq"):
        pairs.append(_cws_pair(f"{CWS}/traces/{pipeline}.csv.gz|head=300",
                               f"{CWS}/process_dags/{pipeline}.json", pipeline))
    return pairs


def _cws_trace() -> list[Seed]:
    return _present(*(Seed(trace, trace_name, "csv", ((dag_name, dag),))
                      for trace, trace_name, dag, dag_name in _cws_pairs()))


def _cws_dag() -> list[Seed]:
    return _present(*(Seed(dag, dag_name, "json", ((trace_name, trace),))
                      for trace, trace_name, dag, dag_name in _cws_pairs()))


def _validate() -> list[Seed]:
    seeds = []
    folder = FIXTURES / "validate"
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        group = folder / path.relative_to(folder).parts[0] if path.parent != folder else None
        siblings = sorted(p for p in group.rglob("*") if p.is_file() and p != path) if group else []
        base = group or folder
        companions = tuple((p.relative_to(base).as_posix(), _fixture_source(p)) for p in siblings)
        seeds.append(Seed(_fixture_source(path), path.relative_to(base).as_posix(),
                          _syntax(path.name), companions))
    trace, trace_name, dag, dag_name = _cws_pairs()[2]
    return _present(
        *seeds,
        Seed(f"{WF}/helloworld/helloworld-chain-5-chameleon.json.gz", "instance.json", "json"),
        Seed(f"{ALIBABA}/random_50_dags.csv.gz", "batch_task.csv", "csv"),
        Seed(f"{GPU}/openb_node_list_gpu_node.csv|head=40", "nodes.csv", "csv"),
        Seed(f"{GPU}/openb_pod_list_default.csv|head=40", "pods.csv", "csv"),
        Seed(trace, trace_name, "csv", ((dag_name, dag),)),
        Seed("fixtures:argo/valid/diamond.yaml", "diamond.yaml", "yaml"))


def _fixture_source(path: Path) -> str:
    return f"fixtures:{path.relative_to(FIXTURES).as_posix()}"


def _syntax(name: str) -> str:
    for syntax in ("json", "csv", "yaml", "toml"):
        if name.endswith(f".{syntax}"):
            return syntax
    return "text"


def _cluster_yaml() -> list[Seed]:
    return _fixtures("clusters/yaml", ".yaml", "cluster.yaml", "yaml")


def _alibaba_gpu() -> list[Seed]:
    return _present(*_fixtures("clusters/alibaba-gpu", ".csv", "nodes.csv", "csv"),
                    Seed("fixtures:validate/inventory/nodes.csv", "nodes.csv", "csv"),
                    Seed(f"{GPU}/openb_node_list_gpu_node.csv|head=60", "nodes.csv", "csv"),
                    Seed(f"{GPU}/openb_node_list_all_node.csv|head=60", "nodes.csv", "csv"))


def _cws_cluster() -> list[Seed]:
    return _present(*_fixtures("clusters/cws", ".json", "cluster.json", "json"),
                    Seed("fixtures:validate/cws/cluster.json", "cluster.json", "json"),
                    Seed(f"{CWS}/cluster.json", "cluster.json", "json"))


def _settings() -> list[Seed]:
    return [Seed("generated:settings-defaults", "settings.toml", "toml"),
            Seed("repo:configs/train-builtin.toml", "settings.toml", "toml")]


def _pool() -> list[Seed]:
    return _fixtures("pool", ".toml", "pool.toml", "toml")


def _model_files(name: str) -> Callable[[], list[Seed]]:
    def seeds() -> list[Seed]:
        versions = sorted(entry.name for entry in MODELS.iterdir()
                          if entry.is_dir() and not entry.is_symlink())
        current = os.readlink(MODELS / "current")
        ordered = [current, *(version for version in versions if version != current)]
        return _present(*(Seed(f"models:{version}/{name}", name, "json") for version in ordered))
    return seeds


def _extender_args() -> list[Seed]:
    return _fixtures("extender", ".json", "args.json", "json")


def _admission_review() -> list[Seed]:
    return _fixtures("serve/admission", ".json", "review.json", "json")


def _signed_submission() -> list[Seed]:
    return [*_fixtures("argo/valid", ".yaml", "workflow.yaml", "yaml"),
            *_fixtures("argo/invalid", ".yaml", "workflow.yaml", "yaml"),
            *_fixtures("serve/submission", ".json", "workflow.json", "json")]


def _npz() -> list[Seed]:
    return [Seed("generated:normaliser-npz", "normaliser.npz", "zip")]


TARGETS: dict[str, Target] = {target.name: target for target in (
    Target("wfformat", "fuzz.parsers:wfformat", _wfformat, gzip=True),
    Target("argo", "fuzz.parsers:argo", _argo),
    Target("argo-history", "fuzz.parsers:argo_history", _argo_history),
    Target("argo-digest", "fuzz.parsers:argo", _argo_digest),
    Target("alibaba", "fuzz.parsers:alibaba", _alibaba, gzip=True),
    Target("tpch", "fuzz.parsers:tpch", _tpch, gzip=True),
    Target("cws", "fuzz.parsers:cws_trace", _cws_trace, gzip=True),
    Target("cws-dag", "fuzz.parsers:cws_dag", _cws_dag),
    Target("validate", "fuzz.parsers:validate", _validate, gzip=True),
    Target("cluster-yaml", "fuzz.parsers:cluster_yaml", _cluster_yaml),
    Target("alibaba-gpu", "fuzz.parsers:alibaba_gpu", _alibaba_gpu),
    Target("cws-cluster", "fuzz.parsers:cws_cluster", _cws_cluster),
    Target("settings", "fuzz.parsers:settings", _settings),
    Target("pool", "fuzz.parsers:pool", _pool),
    Target("registry-config", "fuzz.parsers:registry_config", _model_files("config.json")),
    Target("registry-normaliser", "fuzz.parsers:registry_normaliser",
           _model_files("normaliser.json")),
    Target("registry-metadata", "fuzz.parsers:registry_metadata", _model_files("metadata.json")),
    Target("registry-npz", "fuzz.parsers:registry_npz", _npz),
    Target("admission-review", "fuzz.serve_parsers:admission_review", _admission_review),
    Target("signed-submission", "fuzz.serve_parsers:signed_submission", _signed_submission),
    Target("extender-args", "fuzz.parsers:extender_args", _extender_args),
)}
