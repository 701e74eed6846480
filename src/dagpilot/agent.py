"""The agent: the one composition point of training, benchmarking and serving.

    agent = Agent(model, normaliser)
    decision = agent.act(view, greedy=True)        # Decision; .placement is None when nothing fits
    ranking = agent.rank(view, pod)                # Ranking: one pod's feasible nodes and scores

`act` (a scheduler's call) takes the candidates and their mask from `decide.Decoder` (the
filters, narrowed for multi-GPU pods by the root-complex rule, whose fallback penalty becomes
the policy input's logit bias), encodes the view (`state.encode`), runs the network, and picks
a feasible (pod, node) pair: the argmax when `greedy` (serving), a sample from the masked
softmax otherwise (training). The decoder turns it into a Placement with its explanation: the
3 best-scored nodes for the pod (`Placement.alternatives`, the chosen node's conditional
probability in `Placement.score`) and, for every node the filters or the rule rejected, their
reasons (`Placement.rejected`). There is no learned "wait": the agent places whenever a pair is
feasible (docs/TRAINING.md says why). `act(..., value=False)` skips the critic, which only
training reads.

`prepare(view)` (a serving loop's call when a metrics scrape lands) does ahead of the next
decision what it would compute about the nodes alone: after a scrape every node's row is new,
and its features, normalised rows and embeddings cost about as much as the rest of a
decision. Decisions are the same with or without it.

`rank` (a scheduler extender's call) scores one pod alone: the nodes that pass, the Status of
each that does not, and the policy's P(node | pod) for each that does (`decide.ranking`).

`DagpilotScheduler` wraps an agent in the Scheduler protocol under the name `dagpilot`, with
garbage collection deferred past each decision; `load_scheduler(models_root)` builds it from
the registry's current model. What a process sets up around it (torch's threads, the frozen
start-up heap) is `policy.process`'s.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.candidates import Candidates
from dagpilot.decide.decoder import Decoder
from dagpilot.decide.filters import DEFAULT_FILTERS
from dagpilot.decide.ranking import Ranking
from dagpilot.policy import (
    PolicyConfig,
    PolicyConfigError,
    PolicyInput,
    PolicyNet,
    collate,
    greedy,
    log_probs,
    sample,
)
from dagpilot.policy.process import collections_deferred
from dagpilot.registry import load_current
from dagpilot.state import FEATURE_SCHEMA_VERSION, EncodeContext, Normaliser, Observation, observe
from dagpilot.state.normalised_nodes import NormalisedNodes

NAME = "dagpilot"
DEFAULT_MODELS_ROOT = Path("models")


@dataclass(frozen=True)
class Observed:
    """A view as the policy sees it, before normalisation: the candidates with their mask
    (filters and root-complex rule), and the logit bias of the rule's fallback penalty."""

    candidates: Candidates
    raw: Observation
    bias: npt.NDArray[np.float32] | None = None  # (C, N); None: no candidate penalised


@dataclass(frozen=True)
class Ready:
    """A view ready for the network: its candidates and observation, and the input."""

    observed: Observed
    policy_input: PolicyInput


@dataclass(frozen=True)
class Decision:
    """What `act` chose, and what training keeps of it (nothing when no pair was feasible)."""

    placement: Placement | None
    policy_input: PolicyInput | None = None  # the normalised observation and mask it read
    raw: Observation | None = None  # the observation before normalisation (its statistics)
    action: int = -1  # flat index into policy_input.shape
    log_prob: float = 0.0
    value: float = 0.0  # the critic's estimate; NaN when `act` was told to skip it


class Agent:
    """A policy network, its normaliser and the hard-constraint filters, for one episode or
    live session at a time (`reset` starts the next: the encoder keeps memory between
    decisions, such as congested samples running)."""

    def __init__(self, model: PolicyNet, normaliser: Normaliser, *,
                 filter_names: tuple[str, ...] = DEFAULT_FILTERS, explain: bool = True) -> None:
        self.model = model
        self.normaliser = normaliser
        self.explain = explain
        self._decoder = Decoder(filter_names)
        self._names_of: Cluster | None = None
        self._names: npt.NDArray[np.object_] = np.empty(0, dtype=object)
        self.reset()

    @property
    def config(self) -> PolicyConfig:
        return self.model.config

    def reset(self) -> None:
        """Start afresh: the next decision is what a new agent with this model would make."""
        self._context = EncodeContext(graph_tasks=self.config.graph_tasks)
        self._decoder.reset()
        self._normalised = NormalisedNodes()
        self.model.forget()

    def observe(self, view: ClusterView, include: PodRef | None = None) -> Observed | None:
        """The candidates and their raw observation; None when no pending pod fits anywhere.
        `include` forces a pod among the candidates (behaviour cloning)."""
        shortlist = self._decoder.shortlist(view, self.config.max_candidates, include)
        if shortlist is None:
            return None
        candidates, bias = shortlist
        return Observed(candidates, observe(view, candidates.pods, self._context), bias)

    def prepare(self, view: ClusterView) -> None:
        """Bring the node side of the next decision up to date with `view` now, off the
        decision path (as kube-scheduler's cache follows informer events): the raw node
        features (their congestion streaks count the new samples here), the normalised rows
        and the network's node embeddings and keys. The decision then recomputes only the
        nodes that change after this call, as it does between two decisions."""
        raw = self._context.node_features(view)
        rows = self._normalised.nodes(self.normaliser, raw)
        self.model.prepare_nodes(torch.from_numpy(rows))

    def act(self, view: ClusterView, *, greedy: bool, generator: torch.Generator | None = None,
            value: bool = True) -> Decision:
        """The decision on `view`; `value=False` skips the critic (its estimate is NaN then),
        which only training reads."""
        ready = self.ready(view)
        if ready is None:
            return Decision(None)
        with torch.inference_mode():
            batch = collate([ready.policy_input])
            if value:
                output = self.model(batch)
                logits, estimate = output.logits[0], float(output.values[0])
            else:
                logits, estimate = self.model.logits(batch)[0], math.nan
            return self.choose(view, ready, logits, estimate, greedy=greedy,
                               generator=generator)

    def ready(self, view: ClusterView) -> Ready | None:
        """The first half of `act`: the network's input for `view`; None when no pending pod
        fits anywhere. Lock-step rollouts (`train.lockstep`) batch several episodes' inputs
        into one network call, then `choose` for each."""
        observed = self.observe(view)
        if observed is None:
            return None
        return Ready(observed, self._policy_input(observed))

    def choose(self, view: ClusterView, ready: Ready, logits: torch.Tensor, estimate: float,
               *, greedy: bool, generator: torch.Generator | None = None) -> Decision:
        """The second half of `act`: the choice from the network's logits for `ready`, one
        row of a batch (its first C x N entries are this input's grid: padded candidates
        come after them), and the critic's `estimate`. Call under `torch.inference_mode`."""
        policy_input = ready.policy_input
        candidates, nodes = policy_input.shape
        if logits.shape[-1] != candidates * nodes:
            logits = logits[:candidates * nodes]
        logits = logits.unsqueeze(0)
        log_p = log_probs(logits)[0]
        chosen = _pick(logits, greedy, generator)
        row = log_p.view(policy_input.shape)[chosen // nodes]
        marginal = np.float32(torch.logsumexp(row, 0))  # log P(this pod)
        return self.decision(view, ready, chosen, row.numpy() - marginal,
                             log_prob=float(log_p[chosen]), estimate=estimate)

    def decision(self, view: ClusterView, ready: Ready, chosen: int,
                 log_conditional: npt.NDArray[np.float32], *, log_prob: float,
                 estimate: float) -> Decision:
        """`choose`'s end: the Decision of the flat pick `chosen`, given its pod's
        log P(node | pod) for every node (lock-step rollouts compute those for many lanes
        at once: `train.lane_choice`)."""
        candidate, node = divmod(chosen, ready.policy_input.shape[1])
        placement = self._decoder.placement(view, ready.observed.candidates, candidate, node,
                                            log_conditional, explain=self.explain)
        return Decision(placement, ready.policy_input, ready.observed.raw, chosen, log_prob,
                        estimate)

    def rank(self, view: ClusterView, pod: PodRef) -> Ranking:
        """`pod` alone (pending or not): the nodes where it may go, with the policy's
        P(node | pod) for each, and every other node with the Status of why not. The view is
        encoded as `act` encodes it (the same encoder memory), with the pod as the only
        candidate; the network runs only when some node is feasible."""
        candidates, bias = self._decoder.for_pod(view, pod)
        feasible = candidates.feasible[0]
        rejected = self._decoder.rejected(view, pod.task, np.flatnonzero(~feasible).tolist())
        if not feasible.any():
            return Ranking(pod, (), (), rejected)
        observed = Observed(candidates, observe(view, candidates.pods, self._context), bias)
        with torch.inference_mode():
            conditional = torch.exp(log_probs(self.model.logits(collate(
                [self._policy_input(observed)])))[0]).numpy()
        rows = np.flatnonzero(feasible)
        return Ranking(pod, tuple(self._node_names(view.cluster)[rows].tolist()),
                       tuple(conditional[rows].tolist()), rejected)

    def _node_names(self, cluster: Cluster) -> npt.NDArray[np.object_]:
        """The cluster's node names as an array (an extender answers about every node)."""
        if self._names_of is not cluster:
            self._names_of = cluster
            self._names = np.array([spec.name for spec in cluster.nodes], dtype=object)
        return self._names

    def _policy_input(self, observed: Observed) -> PolicyInput:
        return PolicyInput(self._normalised.normalise(self.normaliser, observed.raw),
                           observed.candidates.feasible, observed.bias)


def _pick(logits: torch.Tensor, is_greedy: bool, generator: torch.Generator | None) -> int:
    return int((greedy(logits) if is_greedy else sample(logits, generator))[0])


class DagpilotScheduler:
    """The Scheduler protocol over a greedy agent: `dagpilot` in benchmarks and serving."""

    def __init__(self, agent: Agent) -> None:
        self.name = NAME
        self.agent = agent

    def reset(self, cluster: Cluster, rng: np.random.Generator) -> None:
        del cluster, rng  # greedy: no random choice left; the agent re-learns the cluster
        self.agent.reset()

    def prepare(self, view: ClusterView) -> None:
        """`Agent.prepare`: when new metrics arrive, between decisions."""
        self.agent.prepare(view)

    def decide(self, view: ClusterView) -> Placement | None:
        # No garbage collection inside a decision: one that comes due runs right after it.
        return collections_deferred(
            lambda: self.agent.act(view, greedy=True, value=False).placement)


def agent_from_files(state_dict: Mapping[str, Any], normaliser: Mapping[str, Any],
                     config: Mapping[str, Any], *, explain: bool = True) -> Agent:
    """An agent from a stored model's parts (as the registry returns them)."""
    sizes = config.get("policy")
    if not isinstance(sizes, Mapping):
        raise PolicyConfigError("config.json has no `policy` section: not a dagpilot policy")
    policy = PolicyConfig.from_dict(_thawed(sizes))
    model = PolicyNet.from_state(policy, state_dict)
    return Agent(model, Normaliser.from_json(json.dumps(_thawed(normaliser))), explain=explain)


def load_scheduler(models_root: Path = DEFAULT_MODELS_ROOT, *,
                   explain: bool = True) -> DagpilotScheduler:
    """The `dagpilot` scheduler with the registry's current model, checked file by file
    (checksums, torch zip archive, weights_only, feature schema): IntegrityError otherwise.
    A long-running process settles itself after it (`policy.process.settle_scheduler_process`).
    """
    loaded = load_current(models_root, FEATURE_SCHEMA_VERSION)
    return DagpilotScheduler(agent_from_files(loaded.state_dict, loaded.normaliser,
                                              loaded.config, explain=explain))


def _thawed(value: Any) -> Any:
    """Read-only JSON (mapping proxies, tuples) back to plain dicts and lists."""
    if isinstance(value, Mapping):
        return {key: _thawed(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_thawed(item) for item in value]
    return value
