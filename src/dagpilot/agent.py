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
"wait": the agent places whenever a pair is feasible (docs/TRAINING.md says why). The reasons
are kept between decisions per pod spec and node until the view's change log lists the node
(`RejectionMemory`), and `act(..., value=False)` skips the critic, which only training reads.

`DagpilotScheduler` wraps an agent in the Scheduler protocol under the name `dagpilot`, with
garbage collection deferred past each decision; `load_scheduler(models_root)` builds it from
the registry's current model and freezes the start-up heap (`settle_heap`).
"""

from __future__ import annotations

import gc
import json
import math
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster, NodeSpec, Task
from dagpilot.core.view import ClusterView, NodeState, PodRef
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import DEFAULT_FILTERS, filters
from dagpilot.decide.node_arrays import ClusterStatics, NodeArrays
from dagpilot.decide.pcie import MIN_GPUS, PENALTY, PcieRootComplex
from dagpilot.decide.signature import placement_key
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
from dagpilot.state.normalised_nodes import NormalisedNodes

NAME = "dagpilot"
DEFAULT_MODELS_ROOT = Path("models")
TOP_NODES = 3
REJECTION_KEYS = 64  # placement keys whose rejection reasons are kept (the least recent go)


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
        self._reasons = RejectionMemory(self._reasons_of)
        self._normalised = NormalisedNodes()

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

    def act(self, view: ClusterView, *, greedy: bool, generator: torch.Generator | None = None,
            value: bool = True) -> Decision:
        """The decision on `view`; `value=False` skips the critic (its estimate is NaN then),
        which only training reads."""
        observed = self.observe(view)
        if observed is None:
            return Decision(None)
        policy_input = PolicyInput(self._normalised.normalise(self.normaliser, observed.raw),
                                   observed.candidates.feasible, observed.bias)
        with torch.inference_mode():
            batch = collate([policy_input])
            if value:
                output = self.model(batch)
                logits, estimate = output.logits, float(output.values[0])
            else:
                logits, estimate = self.model.logits(batch), math.nan
            log_p = log_probs(logits)[0]
            chosen = _pick(logits, greedy, generator)
        candidate, node = divmod(chosen, policy_input.shape[1])
        row = log_p.view(policy_input.shape)[candidate]
        marginal = np.float32(torch.logsumexp(row, 0))  # log P(this pod)
        placement = self._placement(view, observed, candidate, node, row.numpy() - marginal)
        return Decision(placement, policy_input, observed.raw, chosen, float(log_p[chosen]),
                        estimate)

    def _placement(self, view: ClusterView, observed: Observed, candidate: int, node: int,
                   log_conditional: np.ndarray) -> Placement:
        """The placement of candidate `candidate` on node `node`; `log_conditional` holds
        log P(node | candidate) for every node (-inf where infeasible)."""
        pod = observed.candidates.pods[candidate]
        spec = view.cluster.nodes[node]
        gpus = choose_gpus(spec, view.nodes[node].free_gpus, pod.requests.gpus,
                           pod.requests.gpu_model)
        if not self.explain:
            return Placement(pod, spec.name, gpus, float(np.exp(log_conditional[node])))
        conditional = np.exp(log_conditional)
        feasible = observed.candidates.feasible[candidate]
        top = best_first(conditional, TOP_NODES)
        return Placement(
            pod, spec.name, gpus, float(conditional[node]),
            alternatives=tuple((view.cluster.nodes[i].name, float(conditional[i]))
                               for i in top.tolist() if feasible[i]),
            rejected=self._rejections(view, pod, feasible))

    def _rejections(self, view: ClusterView, pod: PodRef,
                    feasible: np.ndarray) -> tuple[tuple[str, str], ...]:
        """(node, every failing filter's reasons) for each node the filters rejected, or the
        root-complex rule's reason for a node that only it rejected."""
        return self._reasons.rejections(view, pod.task, np.flatnonzero(~feasible).tolist())

    def _reasons_of(self, task: Task, node: NodeState) -> str:
        statuses = (self._feasibility.statuses(task, node)
                    or (self._pcie.check(task, node),))
        return "; ".join(str(s) for s in statuses)


class RejectionMemory:
    """Why each node rejects a pod, kept from decision to decision per placement key.

    A node's reasons depend on the pod only through `decide.signature.placement_key` (what
    filters read of a pod spec) and on the node only through its spec, allocation (free
    resources and GPUs) and readiness, which is what the view's change log follows (the
    contract `Feasibility.live` relies on too). So the reasons worked out for a (key, node)
    stay until the log lists the node; a view without a log, or another view, starts afresh.
    Pods of one workflow share a few request templates: at 5,000 nodes this turns some
    milliseconds of reason strings per explained decision into a lookup."""

    __slots__ = ("_by_key", "_explain", "_keys", "_token", "_view")

    def __init__(self, explain: Callable[[Task, NodeState], str],
                 keys: int = REJECTION_KEYS) -> None:
        self._explain = explain  # the reasons of one (pod, node) pair that fails
        self._view: ClusterView | None = None
        self._token = 0
        # placement key -> per node: (name, reasons), or None until asked for
        self._by_key: OrderedDict[Hashable, list[tuple[str, str] | None]] = OrderedDict()
        self._keys = keys

    def rejections(self, view: ClusterView, task: Task,
                   rows: Sequence[int]) -> tuple[tuple[str, str], ...]:
        """(node name, reasons) of the nodes at `rows`, each of which rejects the task."""
        self._follow(view)
        nodes = view.nodes
        key = placement_key(task)
        known = self._by_key.pop(key, None)
        if known is None or len(known) != len(nodes):
            known = [None] * len(nodes)
        self._by_key[key] = known
        while len(self._by_key) > self._keys:
            self._by_key.popitem(last=False)
        rejected = []
        for row in rows:
            reasons = known[row]
            if reasons is None:
                reasons = known[row] = (nodes[row].spec.name, self._explain(task, nodes[row]))
            rejected.append(reasons)
        return tuple(rejected)

    def _follow(self, view: ClusterView) -> None:
        """Forget the reasons of the nodes that changed since the last call (all of them
        when the view cannot tell, or is another one)."""
        token, changed = view.changed_nodes(self._token)
        if changed is None or view is not self._view:
            self._by_key.clear()
        else:
            rows = set(changed)  # the log may list a node many times
            for known in self._by_key.values():
                for row in rows:
                    known[row] = None
        self._view, self._token = view, token


def best_first(values: npt.NDArray[np.floating[Any]], count: int) -> npt.NDArray[np.intp]:
    """Indices of the `count` largest values, largest first, ties in index order: what a
    stable argsort of -values begins with, without sorting all of them (5,000 nodes)."""
    negated = -values
    if len(values) > count:
        kth = np.partition(negated, count - 1)[count - 1]
        contenders = np.flatnonzero(negated <= kth)  # in index order: ties stay so
        return contenders[np.argsort(negated[contenders], kind="stable")][:count]
    return np.argsort(negated, kind="stable")


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
        # A garbage collection that comes due during the decision runs right after it, at the
        # caller's next allocation (between two decisions of a serving loop), not inside it;
        # it is deferred, never skipped. Not a context manager: leaving one allocates, which
        # would run the collection before the decision returns.
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self.agent.act(view, greedy=True, value=False).placement
        finally:
            if enabled:
                gc.enable()


def settle_heap() -> None:
    """Collect once, then move every object alive now out of the cyclic collector's sight
    (`gc.freeze`), for a long-running scheduler process, after start-up.

    The start-up heap (torch and the other modules, the model, the cluster inventory: some
    200,000 objects) is never garbage, yet every full collection walks all of it: 140-190 ms
    on the benchmark machine, a pause that would land in some decision. Frozen, a full
    collection walks only what came later (under 1 ms after hundreds of decisions). The
    memory trade-off: frozen objects are still freed by reference counting, but a frozen
    object that later becomes part of unreachable cycles is never reclaimed, so replacing
    the model in the same process (a registry reload) may keep the old one's cyclic parts;
    restart the process, or call `gc.unfreeze()` and collect, to reclaim them."""
    gc.collect()
    gc.freeze()


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
                   torch_threads: int | None = 1, settle: bool = True) -> DagpilotScheduler:
    """The `dagpilot` scheduler with the registry's current model, checked file by file
    (checksums, torch zip archive, weights_only, feature schema): IntegrityError otherwise.

    `torch_threads` sets torch's intra-op threads for this process (None leaves them): one is
    fastest for this network's small matrices, and runs side by side do not oversubscribe.
    `settle` freezes the heap as it is once the model is loaded (`settle_heap`: full
    collections then skip it), as a long-running scheduler process wants.
    """
    if torch_threads is not None:
        torch.set_num_threads(torch_threads)
    loaded = load_current(models_root, FEATURE_SCHEMA_VERSION)
    scheduler = DagpilotScheduler(agent_from_files(loaded.state_dict, loaded.normaliser,
                                                   loaded.config, explain=explain))
    if settle:
        settle_heap()
    return scheduler


def _thawed(value: Any) -> Any:
    """Read-only JSON (mapping proxies, tuples) back to plain dicts and lists."""
    if isinstance(value, Mapping):
        return {key: _thawed(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_thawed(item) for item in value]
    return value
