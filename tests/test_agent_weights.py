"""Policy weights change only by loading a new state (through the registry): the network's
caches, which watch the parameters of fixed layers, notice a `load_state_dict`, and nothing an
agent does to act, rank or explain writes a weight."""

from __future__ import annotations

from pathlib import Path

import torch

from dagpilot.agent import Agent, DagpilotScheduler, load_scheduler
from dagpilot.policy import PolicyNet, collate
from dagpilot.registry import load_current
from dagpilot.state import FEATURE_SCHEMA_VERSION, Normaliser
from dagpilot.train.export import export_model, publish_model
from tests.state.sim_views import sim_env
from tests.test_agent import SMALL
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]  # autouse: torch on one thread here too


def published(root: Path, seed: int) -> Path:
    folder = export_model(root / f"out-{seed}", PolicyNet.create(SMALL, seed),
                          Normaliser.fresh(), {"seed": seed})
    publish_model(folder, root / "models", f"v{seed}")
    return root / "models"


def test_a_state_loaded_through_the_registry_is_noticed_by_every_cache(tmp_path: Path) -> None:
    _, view = sim_env("builtin:mix:6", "builtin:default")
    serving = Agent(PolicyNet.create(SMALL, 0).eval(), Normaliser.fresh())
    serving.act(view, greedy=True)  # fills the node memory and the graph summaries
    memory, summaries = serving.model.node_memory, serving.model.graphs.summary_cache
    assert memory is not None and summaries is not None
    passes, misses = memory.full_passes, summaries.misses
    loaded = load_current(published(tmp_path, 1), FEATURE_SCHEMA_VERSION)
    serving.model.load_state_dict(dict(loaded.state_dict))
    after = serving.act(view, greedy=True)
    assert memory.full_passes == passes + 1 and summaries.misses > misses  # recomputed
    fresh = load_scheduler(tmp_path / "models").agent.act(view, greedy=True)
    assert after.placement == fresh.placement
    assert (after.action, after.log_prob, after.value) == (fresh.action, fresh.log_prob,
                                                           fresh.value)


def test_the_caches_watch_the_models_own_parameters_of_the_layers_they_keep() -> None:
    net = PolicyNet.create(SMALL, 2)
    own = {id(p) for p in net.parameters()}
    node_layers = [*net.nodes.parameters(), *net.pairs.key.parameters()]
    summary_layers = [*net.graphs.tokens.parameters(), *net.graphs.positions.parameters(),
                      *net.graphs.transformer.parameters()]
    for watched, layers in ((net._node_parameters(), node_layers),
                            (net.graphs._summary_parameters(), summary_layers)):
        assert {id(p) for p in watched} == {id(p) for p in layers}
        assert {id(p) for p in watched} <= own


def test_acting_ranking_and_explaining_never_write_a_weight() -> None:
    env, view = sim_env("builtin:mix:8", "builtin:default")
    agent = Agent(PolicyNet.create(SMALL, 3).eval(), Normaliser.fresh())
    before = {name: (p, p._version, p.data_ptr(), p.detach().clone())
              for name, p in agent.model.named_parameters()}
    scheduler, generator = DagpilotScheduler(agent), torch.Generator().manual_seed(0)
    for step in range(40):
        if view.pending:
            agent.rank(view, view.pending[0])
        decision = (agent.act(view, greedy=False, generator=generator) if step % 2
                    else agent.act(view, greedy=True))
        scheduler.decide(view)
        if decision.policy_input is not None:
            with torch.inference_mode():
                agent.model(collate([decision.policy_input]))
        view, _, done, _ = env.step(decision.placement)
        if done:
            break
    after = dict(agent.model.named_parameters())
    assert after.keys() == before.keys()
    for name, (parameter, version, pointer, values) in before.items():
        now = after[name]
        assert now is parameter and now._version == version and now.data_ptr() == pointer, name
        assert torch.equal(now.detach(), values), name
