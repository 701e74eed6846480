"""The agent: masked choices with explanations, the `dagpilot` scheduler, and a model that comes
back from the registry giving the very same outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from dagpilot.agent import Agent, DagpilotScheduler, load_scheduler
from dagpilot.bench.harness import BenchConfig, run_benchmark
from dagpilot.bench.runner import scheduler_registry
from dagpilot.clusters import load_cluster
from dagpilot.core.errors import IntegrityError
from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.types import Cluster, Taint
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import filters
from dagpilot.policy import PolicyConfig, PolicyNet, collate
from dagpilot.sim import SimEnv, simulate
from dagpilot.state import Normaliser, observe
from dagpilot.train.export import export_model, publish_model
from dagpilot.workloads import load
from tests.sim.helpers import cluster, job, node, settings, task
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]  # autouse: torch on one thread here too

SMALL = PolicyConfig(d_model=32, heads=4, layers=1, feedforward=64, pair_rank=16)


def agent(seed: int = 0, normaliser: Normaliser | None = None) -> Agent:
    return Agent(PolicyNet.create(SMALL, seed).eval(), normaliser or Normaliser.fresh())


def filtered_cluster() -> Cluster:
    """Three nodes where a 2-core pod fits, and three that the filters reject."""
    return cluster(
        node("cordoned", 8.0, unschedulable=True), node("tiny", 1.0),
        node("fit-a", 8.0), node("fit-b", 16.0), node("fit-c", 4.0),
        node("tainted", 8.0, taints=(Taint("dedicated", "ml"),)))


def first_view(jobs: list[object], where: Cluster) -> tuple[SimEnv, ClusterView]:
    env = SimEnv(jobs, where, settings())  # type: ignore[arg-type]
    return env, env.reset(0)


def test_a_placement_explains_the_top_three_nodes_and_why_the_others_were_filtered() -> None:
    _, view = first_view([job("j", task("t", 30.0, cpu=2.0))], filtered_cluster())
    decision = agent().act(view, greedy=True)
    placement = decision.placement
    assert placement is not None
    top = placement.alternatives
    assert [name for name, _ in top] == sorted(
        ["fit-a", "fit-b", "fit-c"], key=lambda n: -dict(top)[n])
    assert placement.node == top[0][0]  # greedy takes the best-scored node
    assert placement.score == top[0][1]
    assert sum(score for _, score in top) == pytest.approx(1.0)  # P(node | pod): 3 feasible
    reasons = dict(placement.rejected)
    assert set(reasons) == {"cordoned", "tiny", "tainted"}
    assert "NodeUnschedulable" in reasons["cordoned"]
    assert "Insufficient cpu" in reasons["tiny"]
    assert "TaintToleration" in reasons["tainted"] and "dedicated" in reasons["tainted"]


def test_the_explanation_lists_at_most_three_nodes_and_only_feasible_ones() -> None:
    where = cluster(*(node(f"n{i}", 8.0) for i in range(6)), node("full", 1.0))
    _, view = first_view([job("j", task("t", 30.0, cpu=2.0))], where)
    placement = agent(1).act(view, greedy=True).placement
    assert placement is not None
    assert len(placement.alternatives) == 3
    assert "full" not in dict(placement.alternatives)
    assert dict(placement.rejected).keys() == {"full"}


def test_an_agent_without_explanations_places_the_same_pod_on_the_same_node() -> None:
    _, view = first_view([job("j", task("t", 30.0, cpu=2.0))], filtered_cluster())
    explained = agent().act(view, greedy=True).placement
    plain = Agent(PolicyNet.create(SMALL, 0).eval(), Normaliser.fresh(), explain=False)
    bare = plain.act(view, greedy=True).placement
    assert explained is not None and bare is not None
    assert (bare.pod, bare.node, bare.score) == (explained.pod, explained.node, explained.score)
    assert bare.alternatives == () and bare.rejected == ()


def test_nothing_feasible_means_no_placement_and_nothing_to_learn() -> None:
    where = Cluster("one", (node("n", 4.0),))
    big = job("big", task("t", 10.0, cpu=16.0))
    view = ClusterSnapshot.of(where, (PodRef(0, big, big.tasks[0], 0, 0.0),))
    decision = agent().act(view, greedy=False, generator=torch.Generator().manual_seed(0))
    assert decision.placement is None and decision.policy_input is None


def test_sampling_repeats_with_the_same_generator_seed_and_records_what_it_chose() -> None:
    jobs = load("builtin:mlflow:2")
    _, view = first_view(jobs, load_cluster("builtin:small"))
    first, again = (agent().act(view, greedy=False, generator=torch.Generator().manual_seed(5))
                    for _ in range(2))
    assert first.placement == again.placement
    assert first.policy_input is not None
    candidate, node_index = divmod(first.action, first.policy_input.shape[1])
    assert first.policy_input.feasible[candidate, node_index]
    assert first.placement is not None
    assert first.placement.node == view.cluster.nodes[node_index].name
    assert first.log_prob <= 0.0


def test_every_placement_of_a_sampled_episode_passes_every_filter() -> None:
    jobs = load("builtin:ml-training:2") + load("builtin:mlflow:2")
    where = load_cluster("builtin:small")
    env, view = first_view(jobs, where)
    sampler, checks = agent(2), Feasibility(filters())
    generator = torch.Generator().manual_seed(0)
    done, placed = False, 0
    while not done:
        decision = sampler.act(view, greedy=False, generator=generator)
        if decision.placement is not None:
            state = view.nodes[[n.name for n in where.nodes].index(decision.placement.node)]
            assert checks.statuses(decision.placement.pod.task, state) == ()
            placed += 1
        view, _, done, _ = env.step(decision.placement)
    assert placed >= sum(j.instances for j in jobs)


def test_the_dagpilot_scheduler_runs_a_whole_simulation() -> None:
    jobs = load("builtin:mlflow:2")
    record = simulate(jobs, load_cluster("builtin:small"), DagpilotScheduler(agent()),
                      settings(), seed=0)
    assert record.scheduler == "dagpilot"
    assert all(j.finish_s is not None for j in record.jobs)


def trained_normaliser(view: ClusterView, pods: tuple[PodRef, ...]) -> Normaliser:
    return Normaliser.fresh().update(observe(view, pods))


def test_a_model_published_and_loaded_back_gives_identical_outputs(tmp_path: Path) -> None:
    jobs = load("builtin:mlflow:2") + load("builtin:spark-etl:1")
    _, view = first_view(jobs, load_cluster("builtin:small"))
    original = agent(7, trained_normaliser(view, tuple(view.pending)[:5]))
    folder = export_model(tmp_path / "out", original.model, original.normaliser, {"seed": 7})
    publish_model(folder, tmp_path / "models", "v1", {"note": "test"})
    loaded = load_scheduler(tmp_path / "models").agent
    assert loaded.config == original.config
    assert loaded.normaliser.to_json() == original.normaliser.to_json()
    mine, theirs = original.act(view, greedy=True), loaded.act(view, greedy=True)
    assert mine.placement == theirs.placement
    assert (mine.log_prob, mine.value) == (theirs.log_prob, theirs.value)
    assert mine.policy_input is not None
    with torch.no_grad():
        batch = collate([mine.policy_input])
        assert torch.equal(original.model(batch).logits, loaded.model(batch).logits)
        assert torch.equal(original.model(batch).values, loaded.model(batch).values)
    config = json.loads((tmp_path / "models" / "v1" / "config.json").read_text())
    assert config["policy"] == SMALL.to_dict()
    built = json.loads((folder / "metadata.json").read_text())["built_with"]
    assert built["torch"] == torch.__version__ and built["machine"] and built["cpu"]


def test_a_tampered_model_is_refused_at_load(tmp_path: Path) -> None:
    folder = export_model(tmp_path / "out", PolicyNet.create(SMALL, 0), Normaliser.fresh(), {})
    publish_model(folder, tmp_path / "models", "v1")
    weights = tmp_path / "models" / "v1" / "weights.pt"
    weights.chmod(0o644)
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte inside the archive
    weights.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match="checksum mismatch"):
        load_scheduler(tmp_path / "models")


def test_dagpilot_runs_in_a_benchmark_by_name(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    folder = export_model(tmp_path / "out", PolicyNet.create(SMALL, 0), Normaliser.fresh(), {})
    publish_model(folder, tmp_path / "models", "v1")
    monkeypatch.chdir(tmp_path)  # `dagpilot` loads ./models, as `dagpilot bench` run in a repo
    assert "dagpilot" in scheduler_registry()
    summary = run_benchmark(BenchConfig(
        workloads=("builtin:mlflow:2",), cluster="builtin:small",
        schedulers=("dagpilot", "fifo"), seeds=(0,), out_dir=tmp_path / "bench", plots=False))
    assert set(summary.document["schedulers"]) == {"dagpilot", "fifo"}
    assert summary.document["schedulers"]["dagpilot"]["avg_jct_s"] > 0


def test_every_candidate_row_of_a_decision_has_a_feasible_node() -> None:
    _, view = first_view(load("builtin:mlflow:2"), load_cluster("builtin:small"))
    decision = agent().act(view, greedy=True)
    assert decision.policy_input is not None
    assert decision.policy_input.feasible.any(axis=1).all()
    assert np.isfinite(decision.value)

