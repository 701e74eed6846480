"""The imitation objective: DAgger of the adapters toward a teacher in the recalibrated world.

    labels = dagger_labels(student, teacher_name, cluster, sim, task, normaliser=n)
    loss = fit(net, optimizer, labels, epochs, generator)

Each round the adapted policy (greedy, as it would serve) drives the recalibrated scenarios
itself; at each of its decisions the teacher, a baseline scheduler that reads the simulator's
signals of that world (physics-rules: await streaks, MBPI), says which pod and node it would
place, and that pair is the label (the teacher's pod forced among the candidates, as
train.bc does). The labels of every round are kept (DAgger's aggregate) and the adapters fit
them by cross-entropy: no returns, so no variance from the chaos of one changed placement,
which PPO's few noisy iterations in a 90 s budget could not average out. States come from
the student's own rollouts, not the teacher's, so the labels cover the states the adapted
policy will actually meet (plain cloning of the teacher's episodes measured worse on the
drift bench).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from dagpilot.agent import Agent
from dagpilot.core.config import SimSettings
from dagpilot.core.errors import SpecError
from dagpilot.core.types import Cluster
from dagpilot.online.config import teacher_names
from dagpilot.policy import PolicyInput, PolicyNet
from dagpilot.schedulers import build
from dagpilot.schedulers.list_scheduler import ListScheduler
from dagpilot.sim import SimEnv
from dagpilot.sim.streams import stream
from dagpilot.state import Normaliser
from dagpilot.train.bc import _label
from dagpilot.train.scenarios import EpisodeTask

MINIBATCH = 64


@dataclass
class Labels:
    """The teacher's choices on the student's states; `inputs` normalised."""

    inputs: list[PolicyInput] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    env_steps: int = 0

    def extend(self, other: Labels) -> None:
        self.inputs += other.inputs
        self.actions += other.actions
        self.env_steps += other.env_steps


def dagger_labels(student: Agent, teacher_name: str, cluster: Cluster, sim: SimSettings,
                  task: EpisodeTask, *, normaliser: Normaliser) -> Labels:
    """One episode driven by `student`, every decision labelled with the teacher's choice."""
    teacher = list_teacher(teacher_name)
    env = SimEnv(task.jobs, cluster, sim, "online-student")
    teacher.reset(cluster, stream(task.sim_seed, "scheduler"))
    student.reset()
    node_index = {spec.name: i for i, spec in enumerate(cluster.nodes)}
    labels = Labels()
    view = env.reset(task.sim_seed)
    done = env.done
    while not done:
        teacher.resync()  # its queue follows the student's placements, not its own
        choice = teacher.decide(view)
        label = _label(student, view, choice, node_index) if choice is not None else None
        if label is not None:
            labels.inputs.append(dataclasses.replace(
                label[0], observation=normaliser.normalise(label[0].observation)))
            labels.actions.append(label[1])
        view, _, done, _ = env.step(student.act(view, greedy=True, value=False).placement)
        labels.env_steps += 1
    env.close()
    return labels


def list_teacher(name: str) -> ListScheduler:
    """A fresh teacher: a list scheduler, whose queue can be rebuilt from any view (resync)."""
    teacher = build(name)
    if not isinstance(teacher, ListScheduler):
        raise SpecError(name, "a teacher must be a list scheduler (its queue follows the "
                        f"student's placements); known: {', '.join(teacher_names())}")
    return teacher


def fit(net: PolicyNet, optimizer: torch.optim.Optimizer, labels: Labels, epochs: int,
        generator: torch.Generator) -> float:
    """`epochs` passes of cross-entropy over the labels; the last pass's mean loss."""
    net.train()
    last = float("nan")
    for _ in range(epochs):
        order = torch.randperm(len(labels.inputs), generator=generator).tolist()
        losses = [_step(net, optimizer, labels, order[s:s + MINIBATCH])
                  for s in range(0, len(order), MINIBATCH)]
        last = sum(losses) / len(losses) if losses else float("nan")
    net.eval()
    return last


def _step(net: PolicyNet, optimizer: torch.optim.Optimizer, labels: Labels,
          rows: Sequence[int]) -> float:
    evaluation = net.evaluate([labels.inputs[i] for i in rows],
                              [labels.actions[i] for i in rows])
    loss = -evaluation.log_probs.mean()
    optimizer.zero_grad()
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return float(loss.detach())
