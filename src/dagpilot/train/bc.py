"""Behaviour cloning: a warm start that imitates the best heuristic before PPO.

The teacher (a baseline scheduler) drives the simulator; at each of its placements the agent
observes the view with the teacher's pod among its candidates, and the (pod, node) pair the
teacher chose becomes the label. The network learns it by cross-entropy over the feasible
pairs, and its critic learns the teacher's Monte-Carlo returns, so that PPO starts from a
policy as good as the teacher's and a value that fits it. The teacher is the scheduler with the
lowest mean average JCT over a few trial episodes, unless one is named.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from dagpilot.agent import Agent
from dagpilot.core.config import SimSettings
from dagpilot.core.scheduler import Placement, Scheduler
from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView
from dagpilot.native import simulate
from dagpilot.policy import PolicyInput, PolicyNet, collate, greedy
from dagpilot.schedulers import build
from dagpilot.sim import SimEnv
from dagpilot.sim.streams import stream
from dagpilot.state import Normaliser
from dagpilot.train.config import BCSettings
from dagpilot.train.evaluation import censored_avg_jct
from dagpilot.train.rollout import EpisodeSummary
from dagpilot.train.scenarios import EpisodeTask


@dataclass
class Demonstrations:
    """A teacher's labelled decisions; `inputs` hold raw (not normalised) observations."""

    inputs: list[PolicyInput] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    statistics: Normaliser = field(default_factory=Normaliser.fresh)
    summary: EpisodeSummary | None = None

    def returns(self, scale: float, gamma: float = 1.0) -> np.ndarray:
        """Monte-Carlo returns (discounted by `gamma`, as PPO's critic sees them) / `scale`."""
        out = np.zeros(len(self.rewards))
        running = 0.0
        for t in range(len(self.rewards) - 1, -1, -1):
            running = self.rewards[t] / scale + gamma * running
            out[t] = running
        return out


@dataclass(frozen=True)
class TeacherChoice:
    name: str
    avg_jct_s: dict[str, float]  # of every scheduler tried


def choose_teacher(settings: BCSettings, trials: Sequence[EpisodeTask], cluster: Cluster,
                   sim: SimSettings) -> TeacherChoice:
    """The named teacher, or the one with the lowest mean average JCT over the trial episodes.
    Unfinished jobs count until the end of their episode (censored), so a scheduler that
    sometimes fails jobs pays for it without being ruled out by one bad episode."""
    names = settings.teachers if settings.teacher == "auto" else (settings.teacher,)
    scores = {name: float(np.mean([
        censored_avg_jct(simulate(trial.jobs, cluster, build(name), sim, trial.sim_seed))
        for trial in trials])) for name in names}
    return TeacherChoice(min(names, key=lambda name: scores[name]), scores)


def demonstrate(teacher: Scheduler, agent: Agent, cluster: Cluster, settings: SimSettings,
                task: EpisodeTask) -> Demonstrations:
    """One episode driven by the teacher, with its placements as labels. A placement the
    agent cannot express (its node outside the filters' mask) is followed but not labelled."""
    started = time.perf_counter()
    env = SimEnv(task.jobs, cluster, settings, teacher.name)
    teacher.reset(cluster, stream(task.sim_seed, "scheduler"))
    agent.reset()
    node_index = {spec.name: i for i, spec in enumerate(cluster.nodes)}
    demos = Demonstrations()
    view = env.reset(task.sim_seed)
    done, steps = env.done, 0
    while not done:
        placement = teacher.decide(view)
        label = _label(agent, view, placement, node_index) if placement is not None else None
        view, reward, done, _ = env.step(placement)
        steps += 1
        if label is None:
            if demos.rewards:
                demos.rewards[-1] += reward
            continue
        demos.statistics = demos.statistics.update(label[0].observation)
        demos.inputs.append(label[0])
        demos.actions.append(label[1])
        demos.rewards.append(reward)
    demos.summary = EpisodeSummary.of(env.close(), steps, time.perf_counter() - started)
    return demos


def _label(agent: Agent, view: ClusterView, placement: Placement,
           node_index: dict[str, int]) -> tuple[PolicyInput, int] | None:
    """The raw policy input with the teacher's pod as candidate 0, and the teacher's action."""
    observed = agent.observe(view, include=placement.pod)
    node = node_index[placement.node]
    if observed is None or observed.candidates.pods[0] is not placement.pod or not (
            observed.candidates.feasible[0, node]):
        return None
    # candidate 0 is the teacher's pod, so the action is the node's index
    return PolicyInput(observed.raw, observed.candidates.feasible, observed.bias), node


@dataclass(frozen=True)
class BCStats:
    first_loss: float  # mean imitation loss (cross-entropy) of the first epoch
    last_loss: float  # ... of the last epoch
    value_loss: float  # critic's mean squared error in the last epoch
    accuracy: float  # share of labels the greedy policy now reproduces


class BehaviourCloning:
    def __init__(self, model: PolicyNet, settings: BCSettings, value_coef: float) -> None:
        self.model = model
        self.settings = settings
        self.value_coef = value_coef
        self.optimizer = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)

    def fit(self, inputs: Sequence[PolicyInput], actions: Sequence[int],
            returns: Sequence[float], generator: torch.Generator) -> BCStats:
        """`epochs` passes of cross-entropy (+ value regression) over normalised inputs."""
        self.model.train()
        epoch_losses: list[tuple[float, float]] = []
        for _ in range(self.settings.epochs):
            order = torch.randperm(len(inputs), generator=generator).tolist()
            losses = [self._step(inputs, actions, returns, order[s:s + self.settings.minibatch])
                      for s in range(0, len(order), self.settings.minibatch)]
            imitation, value = np.mean(losses, axis=0).tolist()
            epoch_losses.append((imitation, value))
        return BCStats(epoch_losses[0][0], epoch_losses[-1][0], epoch_losses[-1][1],
                       accuracy(self.model, inputs, actions, self.settings.minibatch))

    def _step(self, inputs: Sequence[PolicyInput], actions: Sequence[int],
              returns: Sequence[float], rows: list[int]) -> tuple[float, float]:
        evaluation = self.model.evaluate([inputs[i] for i in rows], [actions[i] for i in rows])
        imitation = -evaluation.log_probs.mean()
        target = torch.tensor([returns[i] for i in rows], dtype=torch.float32)
        value = (evaluation.values - target).pow(2).mean()
        self.optimizer.zero_grad()
        (imitation + self.value_coef * value).backward()  # type: ignore[no-untyped-call]
        self.optimizer.step()
        return float(imitation.detach()), float(value.detach())


def accuracy(model: PolicyNet, inputs: Sequence[PolicyInput], actions: Sequence[int],
             batch: int) -> float:
    """Share of `actions` that the greedy policy picks."""
    if not inputs:
        return float("nan")
    hits = 0
    with torch.no_grad():
        for start in range(0, len(inputs), batch):
            chunk = inputs[start:start + batch]
            output = model(collate(chunk))
            picks = greedy(output.logits).tolist()
            for pick, item, action in zip(picks, chunk, actions[start:start + batch],
                                          strict=True):
                candidate, node = divmod(pick, output.grid[1])
                hits += candidate * item.shape[1] + node == action
    return hits / len(inputs)
