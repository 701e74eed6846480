"""The training loop: behaviour-cloning warm start, then PPO iterations over the curriculum.

    result = train(config, data, out_dir, progress=callback)

1. The teacher: the best baseline on trial episodes (or the named one); loaded ones, as the
   evaluation's, when it evaluates on loaded episodes, else the full-size stage's.
2. `bc_iterations` times: the teacher's episodes -> the normaliser's statistics -> imitation.
   With no BC iteration, one round of teacher episodes still fits the normaliser, so the
   network never reads raw features.
3. `iterations` times: rollouts with the current policy (local or Ray backend) on the
   curriculum's episodes, or with `ppo_horizon_h` on loaded ones, GAE with the
   input-driven baseline, a PPO update, statistics merged into the normaliser, a CSV row, and
   every `checkpoint_every` iterations (and at the end) a model folder.
4. After behaviour cloning (iteration 0, a checkpoint too) and at every checkpoint, the greedy
   policy against the heuristics on fixed evaluation episodes (train.evaluation; loaded ones,
   `eval_horizon_h` hours of arrivals of the whole pool): an "eval" row, `learning_curve.png`.
5. At the end, `best/`: a copy of the checkpoint with the lowest evaluation ratio (train.best).

`out_dir` receives `metrics.csv`, `learning_curve.png`, `checkpoints/iter-NNNN/`, `final/` (the
last iteration) and, when evaluating, `best/`, each model folder one the registry can publish
(train.export).
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from dagpilot.agent import Agent
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Job
from dagpilot.policy import PolicyInput, PolicyNet
from dagpilot.policy.process import set_torch_threads
from dagpilot.schedulers import build
from dagpilot.state import Normaliser
from dagpilot.train.bc import BehaviourCloning, Demonstrations, choose_teacher, demonstrate
from dagpilot.train.best import BestCheckpoint, Selection
from dagpilot.train.config import TrainConfig
from dagpilot.train.curriculum import Curriculum, Stage
from dagpilot.train.curve import CURVE_FILE, plot_learning_curve
from dagpilot.train.evaluation import RIVALS, EvaluationRow, Evaluator
from dagpilot.train.export import export_model, git_commit
from dagpilot.train.metrics import MetricsLog
from dagpilot.train.ppo import PPO, Steps
from dagpilot.train.rollout import Episode, EpisodeSummary, LocalRollouts, RolloutBackend
from dagpilot.train.scenarios import (
    Capacity,
    EpisodeTask,
    cluster_cores,
    episode_tasks,
    loaded_episode_tasks,
)
from dagpilot.train.snapshot import PolicySnapshot

log = logging.getLogger(__name__)

Progress = Callable[[float, str], None]
"""Called with the share of the whole run done (0..1) and what runs now."""
BackendFactory = Callable[[Cluster, SimSettings], RolloutBackend]


@dataclass(frozen=True)
class TrainData:
    """The job pool and cluster a run trains on, and the specs they came from."""

    jobs: tuple[Job, ...]
    cluster: Cluster
    workloads: tuple[str, ...]
    cluster_spec: str


@dataclass(frozen=True)
class TrainResult:
    final: Path
    metrics: Path
    checkpoints: tuple[Path, ...]
    teacher: str
    env_steps: int  # environment steps of the PPO rollouts
    rollout_s: float
    wall_s: float
    best: Path | None = None  # the best checkpoint by evaluation; None without evaluation
    selected: Selection | None = None  # which checkpoint `best` copies, and its ratio

    @property
    def env_steps_per_s(self) -> float:
        """PPO environment steps per second of the whole PPO phase (rollouts and updates)."""
        return self.env_steps / self.wall_s if self.wall_s > 0 else 0.0


def train(config: TrainConfig, data: TrainData, out_dir: Path, *,
          sim: SimSettings | None = None, backend: BackendFactory = LocalRollouts,
          capacity: Capacity = cluster_cores, progress: Progress | None = None,
          command: str = "") -> TrainResult:
    """Train a policy from scratch; see the module docstring for the phases. `backend` builds
    the rollout backend from the cluster and the simulator settings (physics applied);
    `command` is recorded in the model's metadata."""
    set_torch_threads(config.torch_threads)
    run = _Run(config, data, out_dir, sim=sim or SimSettings(), capacity=capacity,
               progress=progress, command=command)
    rollouts = backend(data.cluster, run.sim)
    try:
        run.warm_start()
        return run.reinforce(rollouts)
    finally:
        rollouts.close()


class _Run:
    """The state of one training run between its phases."""

    def __init__(self, config: TrainConfig, data: TrainData, out_dir: Path, *,
                 sim: SimSettings, capacity: Capacity, progress: Progress | None,
                 command: str) -> None:
        self.config = config
        self.data = data
        self.out_dir = out_dir
        self.sim = _with_physics(sim, config.physics)
        self.capacity = capacity
        self.progress = progress
        self.command = command
        # drawn first: a horizon without arrivals is refused before anything is written
        self.evaluation_tasks = self._evaluation_tasks()
        self.model = PolicyNet.create(config.policy, config.seed)
        self.normaliser = Normaliser.fresh()
        self.generator = torch.Generator().manual_seed(config.seed)
        self.metrics = MetricsLog(out_dir / "metrics.csv")
        self.checkpoints: list[Path] = []
        self.teacher = ""
        self.teacher_scores: dict[str, float] = {}
        self.commit = git_commit()
        self.bc_rounds = max(config.bc_iterations, 1)  # one round fits the normaliser anyway
        self.units = self.bc_rounds + config.iterations
        self.started = time.perf_counter()
        self.evaluator: Evaluator | None = None
        self.evaluation: EvaluationRow | None = None
        self.best = BestCheckpoint()

    # -- behaviour cloning ------------------------------------------------------------------

    def warm_start(self) -> None:
        self._report(0.0, "choosing the teacher")
        choice = choose_teacher(self.config.bc, self._trial_tasks(), self.data.cluster, self.sim)
        self.teacher, self.teacher_scores = choice.name, choice.avg_jct_s
        log.info("teacher %s (avg JCT by scheduler: %s)", choice.name, choice.avg_jct_s)
        cloning = BehaviourCloning(self.model, self.config.bc, self.config.ppo.value_coef)
        plan = Curriculum.of(self.config.curriculum, self.bc_rounds)
        for round_ in range(self.bc_rounds):
            self._clone(round_, plan.stage(round_), cloning)
        evaluation = self._evaluate(0)
        if evaluation is not None:  # behaviour cloning alone may turn out the best
            self._checkpoint(0, 0, evaluation)

    def _trial_tasks(self) -> list[EpisodeTask]:
        """The episodes the teacher is chosen on: under load, as the evaluation judges, when it
        evaluates on loaded episodes (the curriculum's few jobs favour packers that fail jobs
        once the cluster is full); else the curriculum's full-size stage."""
        if self.config.eval_horizon_h > 0:
            return self._loaded("teacher", self.config.bc.trials, self.config.eval_horizon_h)
        return self._tasks(self._full_size(), "teacher", 0, self.config.bc.trials, replays=1)

    def _clone(self, round_: int, stage: Stage, cloning: BehaviourCloning) -> None:
        started = time.perf_counter()
        tasks = self._tasks(stage, "bc", round_, self.config.episodes_per_iteration, 1)
        agent = Agent(self.model, self.normaliser, explain=False)
        demos = []
        for done, task in enumerate(tasks):
            self._report((round_ + done / len(tasks)) / self.units,
                         f"teacher {self.teacher} · episode {done + 1}/{len(tasks)}")
            demos.append(demonstrate(build(self.teacher), agent, self.data.cluster, self.sim,
                                     task))
        for demo in demos:
            self.normaliser = self.normaliser.merge(demo.statistics)
        row: dict[str, float | int | str] = {}
        if self.config.bc_iterations:
            inputs, actions, returns = self._dataset(demos)
            stats = cloning.fit(inputs, actions, returns, self.generator)
            row = {"bc_loss": stats.last_loss, "bc_accuracy": stats.accuracy,
                   "value_loss": stats.value_loss}
        self._write({"phase": "bc", "iteration": round_, **_stage_row(stage),
                            **_demo_row(demos), "update_s": time.perf_counter() - started,
                            **row})

    def _dataset(self, demos: Sequence[Demonstrations]) -> tuple[
            list[PolicyInput], list[int], list[float]]:
        inputs, actions, returns = [], [], []
        for demo in demos:
            inputs += [dataclasses.replace(item, observation=self.normaliser.normalise(
                item.observation)) for item in demo.inputs]
            actions += demo.actions
            returns += demo.returns(self.config.ppo.reward_scale, self.config.ppo.gamma).tolist()
        return inputs, actions, returns

    # -- PPO --------------------------------------------------------------------------------

    def reinforce(self, rollouts: RolloutBackend) -> TrainResult:
        ppo = PPO(self.model, self.config.ppo)
        plan = Curriculum.of(self.config.curriculum, self.config.iterations)
        steps_total, rollout_total, started = 0, 0.0, time.perf_counter()
        for iteration in range(self.config.iterations):
            stage = plan.stage(iteration)
            tasks = self._ppo_tasks(stage, iteration)
            begun = time.perf_counter()
            episodes = rollouts.collect(PolicySnapshot.of(self.model, self.normaliser), tasks,
                                        self._episode_progress(iteration),
                                        lanes=self.config.rollout_lanes)
            rollout_s = time.perf_counter() - begun
            stats = ppo.update(Steps.of(episodes, self.config.ppo), self.generator)
            for episode in episodes:
                self.normaliser = self.normaliser.merge(episode.statistics)
            env_steps = sum(e.summary.env_steps for e in episodes if e.summary is not None)
            steps_total, rollout_total = steps_total + env_steps, rollout_total + rollout_s
            update_s = time.perf_counter() - begun - rollout_s
            self._write({
                "phase": "ppo", "iteration": iteration, **self._ppo_stage_row(stage, tasks),
                **_episode_row(episodes), "policy_loss": stats.policy_loss,
                "value_loss": stats.value_loss, "entropy": stats.entropy,
                "approx_kl": stats.approx_kl, "clip_fraction": stats.clip_fraction,
                "rollout_s": rollout_s, "update_s": update_s,
                "env_steps_per_s": env_steps / max(rollout_s + update_s, 1e-9)})
            if (iteration + 1) % self.config.checkpoint_every == 0 or (
                    iteration + 1 == self.config.iterations):
                # first, so the checkpoint's metadata has it
                evaluation = self._evaluate(iteration + 1)
                self._checkpoint(iteration + 1, steps_total, evaluation)
        final = export_model(self.out_dir / "final", self.model, self.normaliser,
                             self.metadata(self.config.iterations, steps_total))
        best = self.best.write(self.out_dir / "best")
        self._report(1.0, "done")
        return TrainResult(final, self.metrics.path, tuple(self.checkpoints), self.teacher,
                           steps_total, rollout_total, time.perf_counter() - started, best,
                           self.best.selected)

    def _ppo_tasks(self, stage: Stage, iteration: int) -> list[EpisodeTask]:
        """The iteration's episodes: loaded ones (`ppo_horizon_h` hours of the whole pool at
        the training load, from the iteration's own streams) or the curriculum stage's."""
        if self.config.ppo_horizon_h > 0:
            return self._loaded("ppo", self.config.scenarios_per_iteration,
                                self.config.ppo_horizon_h, iteration=iteration,
                                replays=self.config.replays)
        return self._tasks(stage, "ppo", iteration, self.config.scenarios_per_iteration,
                           self.config.replays)

    def _ppo_stage_row(self, stage: Stage,
                       tasks: Sequence[EpisodeTask]) -> dict[str, float | int | str]:
        if self.config.ppo_horizon_h > 0:  # no curriculum stage: -1, and the mean job count
            return {"stage": -1, "jobs_per_episode": round(float(np.mean(
                [len(task.jobs) for task in tasks])))}
        return _stage_row(stage)

    def _checkpoint(self, iterations: int, env_steps: int,
                    evaluation: EvaluationRow | None) -> None:
        folder = self.out_dir / "checkpoints" / f"iter-{iterations:04d}"
        self.checkpoints.append(export_model(folder, self.model, self.normaliser,
                                             self.metadata(iterations, env_steps)))
        if evaluation is not None:
            self.best.offer(folder, iterations, evaluation.ratio)

    def _episode_progress(self, iteration: int) -> Callable[[int, int], None]:
        def report(done: int, total: int) -> None:
            self._report((self.bc_rounds + iteration + done / total) / self.units,
                         f"PPO {iteration + 1}/{self.config.iterations} · episode "
                         f"{min(done + 1, total)}/{total}")
        report(0, 1)
        return report

    # -- evaluation ---------------------------------------------------------------------------

    def _evaluation_tasks(self) -> list[EpisodeTask]:
        """The fixed evaluation episodes: `eval_horizon_h` hours of the whole pool arriving at
        the training load, or with 0 hours the curriculum's full-size stage."""
        if not self.config.eval_episodes:
            return []
        if self.config.eval_horizon_h > 0:
            return self._loaded("eval", self.config.eval_episodes, self.config.eval_horizon_h)
        return self._tasks(self._full_size(), "eval", 0, self.config.eval_episodes, 1)

    def _evaluate(self, iterations: int) -> EvaluationRow | None:
        """The greedy policy on the fixed evaluation episodes: a CSV row and the curve; None
        when the evaluation is off."""
        if not self.evaluation_tasks:
            return None
        self._report((self.bc_rounds + iterations) / self.units, "evaluating")
        if self.evaluator is None:
            heuristics = dict.fromkeys((*self.config.bc.teachers, self.teacher, *RIVALS))
            self.evaluator = Evaluator(self.evaluation_tasks, tuple(heuristics),
                                       self.data.cluster, self.sim)
        row = self.evaluation = self.evaluator.evaluate(self.model, self.normaliser)
        self._write({"phase": "eval", "iteration": iterations, "eval_jct_s": row.policy_jct_s,
                     "eval_best_heuristic": row.best_heuristic,
                     "eval_best_heuristic_jct_s": row.best_heuristic_jct_s,
                     "eval_ratio": row.ratio, "eval_horizon_h": self.config.eval_horizon_h})
        plot_learning_curve(self.metrics.path, self.out_dir / CURVE_FILE)
        return row

    # -- shared -----------------------------------------------------------------------------

    def _write(self, row: dict[str, float | int | str]) -> None:
        self.metrics.write({**row, "elapsed_s": time.perf_counter() - self.started})

    def _tasks(self, stage: Stage, phase: str, iteration: int, scenarios: int,
               replays: int) -> list[EpisodeTask]:
        return episode_tasks(self.data.jobs, self.data.cluster, stage, seed=self.config.seed,
                             phase=phase, iteration=iteration, scenarios=scenarios,
                             replays=replays, load=self.config.load, capacity=self.capacity)

    def _loaded(self, phase: str, episodes: int, hours: float, *, iteration: int | None = None,
                replays: int = 1) -> list[EpisodeTask]:
        """Episodes of the whole pool arriving at the training load for `hours`."""
        return loaded_episode_tasks(self.data.jobs, self.data.cluster, seed=self.config.seed,
                                    episodes=episodes, load=self.config.load,
                                    horizon_s=hours * 3600.0, capacity=self.capacity,
                                    phase=phase, iteration=iteration, replays=replays)

    def _full_size(self) -> Stage:
        """The curriculum's last stage: its largest episodes."""
        return Curriculum.of(self.config.curriculum, 1).stages[-1]

    def metadata(self, iterations: int, env_steps: int) -> dict[str, Any]:
        return {
            "command": self.command, "seed": self.config.seed, "commit": self.commit,
            "data": {"workloads": list(self.data.workloads), "cluster": self.data.cluster_spec,
                     "jobs": len(self.data.jobs), "nodes": len(self.data.cluster.nodes)},
            "teacher": self.teacher,
            "teacher_avg_jct_s": {k: _finite(v) for k, v in self.teacher_scores.items()},
            "training": self.config.to_dict(), "ppo_iterations_done": iterations,
            "ppo_env_steps": env_steps,
            "evaluation": None if self.evaluation is None else dataclasses.asdict(
                self.evaluation),
            "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}

    def _report(self, share: float, label: str) -> None:
        if self.progress is not None:
            self.progress(min(max(share, 0.0), 1.0), label)


def _stage_row(stage: Stage) -> dict[str, float | int | str]:
    return {"stage": stage.index, "jobs_per_episode": stage.jobs}


def _episode_row(episodes: Sequence[Episode]) -> dict[str, float | int | str]:
    return _row([e.summary for e in episodes if e.summary is not None],
                sum(len(e) for e in episodes), [e.total_reward for e in episodes])


def _demo_row(demos: Sequence[Demonstrations]) -> dict[str, float | int | str]:
    return _row([d.summary for d in demos if d.summary is not None],
                sum(len(d.actions) for d in demos), [float(np.sum(d.rewards)) for d in demos])


def _row(summaries: Sequence[EpisodeSummary], steps: int,
         returns: Sequence[float]) -> dict[str, float | int | str]:
    """What the episodes of one iteration did: size, return, JCT, failures."""
    return {"episodes": len(returns), "steps": steps,
            "env_steps": sum(s.env_steps for s in summaries),
            "mean_return": _mean(returns), "avg_jct_s": _mean([s.avg_jct_s for s in summaries]),
            "unfinished_jobs": sum(s.jobs - s.finished for s in summaries),
            "oom_kills": sum(s.oom_kills for s in summaries)}


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


def _finite(value: float) -> float | None:
    return value if np.isfinite(value) else None


def _with_physics(sim: SimSettings, physics: bool) -> SimSettings:
    return sim if physics else sim.without_physics()
