"""The agent: the one composition point of training, benchmarking and serving.

    agent = Agent(model, normaliser)
    decision = agent.act(view, greedy=True)        # Decision; .placement is None when nothing fits

`act` takes the candidates from `view.pending` (`policy.select_candidates`, with the
hard-constraint mask of `decide`'s filters, narrowed for multi-GPU pods by `decide.pcie`'s
root-complex rule, whose fallback penalty becomes the policy input's logit bias), encodes the
view (`state.encode`), runs the network, and picks a feasible (pod, node) pair: the argmax when
`greedy` (serving), a sample from the masked softmax otherwise (training). Every placement
carries its explanation: the 3 best-scored nodes for the pod (`Placement.alternatives`, the
chosen node's conditional probability in `Placement.score`) and, for every node the filters
or the root-complex rule rejected, their reasons (`Placement.rejected`). There is no learned
"wait": the agent places whenever a pair is feasible (docs/TRAINING.md says why).

`DagpilotScheduler` wraps an agent in the Scheduler protocol under the name `dagpilot`;
`load_scheduler(models_root)` builds it from the registry's current model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster, NodeSpec
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import DEFAULT_FILTERS, filters
from dagpilot.decide.node_arrays import ClusterStatics, NodeArrays
from dagpilot.decide.pcie import MIN_GPUS, PENALTY, PcieRootComplex
from dagpilot.policy import (
    Candidates,
    PolicyConfig,
    PolicyConfigError,
    PolicyInput,
    PolicyNet,
    collate,
    greedy,
    log_probs,
    sample,
    select_candidates,
)
from dagpilot.registry import load_current
from dagpilot.state import FEATURE_SCHEMA_VERSION, EncodeContext, Normaliser, Observation, observe

NAME = "dagpilot"
DEFAULT_MODELS_ROOT = Path("models")
TOP_NODES = 3


@dataclass(frozen=True)
class Observed:
    """A view as the policy sees it, before normalisation: the candidates with their mask
    (filters and root-complex rule), and the logit bias of the rule's fallback penalty."""

    candidates: Candidates
    raw: Observation
    bias: npt.NDArray[np.float32] | None = None  # (C, N); None: no candidate penalised


@dataclass(frozen=True)
class Decision:
    """What `act` chose, and what training keeps of it (nothing when no pair was feasible)."""

    placement: Placement | None
    policy_input: PolicyInput | None = None  # the normalised observation and mask it read
    raw: Observation | None = None  # the observation before normalisation (its statistics)
    action: int = -1  # flat index into policy_input.shape
    log_prob: float = 0.0
    value: float = 0.0


class Agent:
    """A policy network, its normaliser and the hard-constraint filters, for one episode or
    live session at a time (`reset` starts the next: the encoder keeps memory between
    decisions, such as congested samples running)."""

    def __init__(self, model: PolicyNet, normaliser: Normaliser, *,
                 filter_names: tuple[str, ...] = DEFAULT_FILTERS, explain: bool = True) -> None:
        self.model = model
        self.normaliser = normaliser
        self.explain = explain
        self._filters = filters(filter_names)
        self.reset()

    @property
    def config(self) -> PolicyConfig:
        return self.model.config

    def reset(self) -> None:
        self._context = EncodeContext(graph_tasks=self.config.graph_tasks)
        self._feasibility = Feasibility(self._filters)
        self._pcie = PcieRootComplex()
        self._statics: ClusterStatics | None = None

    def observe(self, view: ClusterView, include: PodRef | None = None) -> Observed | None:
        """The candidates and their raw observation; None when no pending pod fits anywhere.
        `include` forces a pod among the candidates (behaviour cloning)."""
        nodes = NodeArrays.from_view(view, self._statics)
        self._statics = nodes.statics
        candidates = select_candidates(view.pending, nodes, self._feasibility,
                                       self.config.max_candidates, include)
        if not len(candidates):
            return None
        candidates, bias = self._root_complexes(candidates, nodes)
        return Observed(candidates, observe(view, candidates.pods, self._context), bias)

    def _root_complexes(self, candidates: Candidates, nodes: NodeArrays) -> tuple[
            Candidates, npt.NDArray[np.float32] | None]:
        """The candidates' mask after `decide.pcie`'s rule for each multi-GPU pod, and the
        logit bias carrying its fallback penalty (None when no pod is penalised). The rule
        never empties a row, so every candidate stays placeable."""
        feasible, bias = candidates.feasible, None
        for row, pod in enumerate(candidates.pods):
            if pod.requests.gpus < MIN_GPUS:
                continue
            verdict = self._pcie.apply(pod.task, nodes, feasible[row])
            if verdict.kept is not None:
                if feasible is candidates.feasible:
                    feasible = feasible.copy()
                feasible[row] = verdict.kept
            if verdict.penalised:
                if bias is None:
                    bias = np.zeros(feasible.shape, dtype=np.float32)
                bias[row, feasible[row]] = PENALTY
        if feasible is candidates.feasible:
            return candidates, bias
        return Candidates(candidates.pods, feasible), bias

    def act(self, view: ClusterView, *, greedy: bool,
            generator: torch.Generator | None = None) -> Decision:
        observed = self.observe(view)
        if observed is None:
            return Decision(None)
        policy_input = PolicyInput(self.normaliser.normalise(observed.raw),
                                   observed.candidates.feasible, observed.bias)
        with torch.inference_mode():
            output = self.model(collate([policy_input]))
            log_p = log_probs(output.logits)[0]
            chosen = _pick(output.logits, greedy, generator)
        candidate, node = divmod(chosen, policy_input.shape[1])
        row = log_p.view(policy_input.shape)[candidate]
        placement = self._placement(view, observed, candidate, node, row.numpy())
        return Decision(placement, policy_input, observed.raw, chosen, float(log_p[chosen]),
                        float(output.values[0]))

    def _placement(self, view: ClusterView, observed: Observed, candidate: int, node: int,
                   row: np.ndarray) -> Placement:
        """The placement of candidate `candidate` on node `node`; `row` holds the candidate's
        log-probabilities over all nodes (-inf where infeasible)."""
        pod = observed.candidates.pods[candidate]
        spec = view.cluster.nodes[node]
        gpus = choose_gpus(spec, view.nodes[node].free_gpus, pod.requests.gpus,
                           pod.requests.gpu_model)
        conditional = np.exp(row - np.logaddexp.reduce(row))  # P(node | this pod)
        if not self.explain:
            return Placement(pod, spec.name, gpus, float(conditional[node]))
        feasible = observed.candidates.feasible[candidate]
        top = np.argsort(-conditional, kind="stable")[:TOP_NODES]
        return Placement(
            pod, spec.name, gpus, float(conditional[node]),
            alternatives=tuple((view.cluster.nodes[i].name, float(conditional[i]))
                               for i in top.tolist() if feasible[i]),
            rejected=self._rejections(view, pod, feasible))

    def _rejections(self, view: ClusterView, pod: PodRef,
                    feasible: np.ndarray) -> tuple[tuple[str, str], ...]:
        """(node, every failing filter's reasons) for each node the filters rejected, or the
        root-complex rule's reason for a node that only it rejected."""
        nodes = view.nodes
        rejected = []
        for index in np.flatnonzero(~feasible).tolist():
            statuses = (self._feasibility.statuses(pod.task, nodes[index])
                        or (self._pcie.check(pod.task, nodes[index]),))
            rejected.append((nodes[index].spec.name, "; ".join(str(s) for s in statuses)))
        return tuple(rejected)


def _pick(logits: torch.Tensor, is_greedy: bool, generator: torch.Generator | None) -> int:
    return int((greedy(logits) if is_greedy else sample(logits, generator))[0])


def choose_gpus(spec: NodeSpec, free: tuple[int, ...], wanted: int,
                model: str | None) -> tuple[int, ...]:
    """`wanted` free GPUs on one PCIe root complex (a pod spanning complexes gets a fifth of
    the bandwidth): the complex with the fewest free GPUs that still has enough, keeping
    larger free groups for larger pods. () when no complex has enough: the node picks."""
    if wanted < 1:
        return ()
    groups: dict[int, list[int]] = {}
    for index in free:
        gpu = spec.gpus[index]
        if model is None or gpu.model == model:
            groups.setdefault(gpu.root_complex, []).append(index)
    fitting = [group for group in groups.values() if len(group) >= wanted]
    if not fitting:
        return ()
    return tuple(min(fitting, key=len)[:wanted])


class DagpilotScheduler:
    """The Scheduler protocol over a greedy agent: `dagpilot` in benchmarks and serving."""

    def __init__(self, agent: Agent) -> None:
        self.name = NAME
        self.agent = agent

    def reset(self, cluster: Cluster, rng: np.random.Generator) -> None:
        del cluster, rng  # greedy: no random choice left; the agent re-learns the cluster
        self.agent.reset()

    def decide(self, view: ClusterView) -> Placement | None:
        return self.agent.act(view, greedy=True).placement


def agent_from_files(state_dict: Mapping[str, Any], normaliser: Mapping[str, Any],
                     config: Mapping[str, Any], *, explain: bool = True) -> Agent:
    """An agent from a stored model's parts (as the registry returns them)."""
    sizes = config.get("policy")
    if not isinstance(sizes, Mapping):
        raise PolicyConfigError("config.json has no `policy` section: not a dagpilot policy")
    policy = PolicyConfig.from_dict(_thawed(sizes))
    model = PolicyNet.from_state(policy, state_dict)
    return Agent(model, Normaliser.from_json(json.dumps(_thawed(normaliser))), explain=explain)


def load_scheduler(models_root: Path = DEFAULT_MODELS_ROOT, *, explain: bool = True,
                   torch_threads: int | None = 1) -> DagpilotScheduler:
    """The `dagpilot` scheduler with the registry's current model, checked file by file
    (checksums, torch zip archive, weights_only, feature schema): IntegrityError otherwise.

    `torch_threads` sets torch's intra-op threads for this process (None leaves them): one is
    fastest for this network's small matrices, and runs side by side do not oversubscribe.
    """
    if torch_threads is not None:
        torch.set_num_threads(torch_threads)
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
