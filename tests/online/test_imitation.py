"""The imitation objective: the student drives, the teacher labels, the fit learns the labels."""

from __future__ import annotations

import copy
from pathlib import Path

import torch

from dagpilot.agent import Agent, DagpilotScheduler
from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.native import simulate
from dagpilot.online.imitation import dagger_labels, fit
from dagpilot.online.lora import attach, merged_state, trainable
from dagpilot.online.scenarios import training_tasks
from dagpilot.online.world import serving_model
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.state import Normaliser
from dagpilot.train.bc import accuracy
from dagpilot.workloads import load

SMALL = PolicyConfig(d_model=16, heads=2, layers=1, feedforward=32, pair_rank=8)
CLUSTER = load_cluster("builtin:small")
TASK = training_tasks(load("builtin:mlflow:4"), CLUSTER, seed=5, iteration=0, scenarios=1,
                      replays=1, horizon_h=0.1)[0]


def student(net: PolicyNet) -> Agent:
    return Agent(PolicyNet.from_state(net.config, merged_state(net)), Normaliser.fresh(),
                 explain=False)


def test_the_student_drives_the_episode_the_teacher_only_labels_it() -> None:
    net = PolicyNet.create(SMALL, seed=4)
    labels = dagger_labels(student(net), "physics-rules", CLUSTER, SimSettings(), TASK,
                           normaliser=Normaliser.fresh())
    alone = simulate(TASK.jobs, CLUSTER, DagpilotScheduler(student(net)), SimSettings(),
                     TASK.sim_seed)
    assert labels.env_steps == alone.decisions  # the same episode as the student's own
    assert 0 < len(labels.actions) <= labels.env_steps
    assert all(item.observation.normalised for item in labels.inputs)


def test_the_fit_reproduces_more_of_the_teachers_choices(registry: Path) -> None:
    model, normaliser = serving_model(registry, "base")  # the shipped model and its statistics
    # the shipped model imitates physics-rules already: a teacher it disagrees with (fifo packs)
    labels = dagger_labels(Agent(model, normaliser, explain=False), "fifo", CLUSTER,
                           SimSettings(), TASK, normaliser=normaliser)
    net = copy.deepcopy(model)
    before = accuracy(net, labels.inputs, labels.actions, 64)
    optimizer = torch.optim.Adam(trainable(attach(net, 4)), lr=1e-2)
    first = fit(net, optimizer, labels, 1, torch.Generator().manual_seed(0))
    last = fit(net, optimizer, labels, 20, torch.Generator().manual_seed(1))
    after = accuracy(net, labels.inputs, labels.actions, 64)
    assert last < first / 2, (first, last)
    assert after > before + 0.3, (before, after)
