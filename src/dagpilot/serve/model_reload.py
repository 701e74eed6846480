"""The model in service: the registry's `current`, reloaded when it changes.

`ModelPolicy.current()` gives the policy (an Agent's greedy act) and its version, or None when
no model could be loaded (a missing or refused `current`: every decision is the fallback's
until one loads). A background thread looks at `current` every `period_s`: a new version is
loaded, verified (`registry.ModelHandle.reload`: a refusal keeps the old model), turned into
an agent and warmed up (`warm_up`: a policy that raises there is refused too) before it is
swapped in with one assignment, so the decision in progress finishes on
the old agent and the next one takes the new agent; no decision is lost or made twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dagpilot.agent import Agent, Decision, agent_from_files
from dagpilot.core.view import ClusterView
from dagpilot.policy.process import collections_deferred
from dagpilot.registry import LoadedModel, ModelHandle
from dagpilot.serve.periodic import Periodic
from dagpilot.serve.warm_up import warm_up
from dagpilot.state import FEATURE_SCHEMA_VERSION

log = logging.getLogger(__name__)

Policy = Callable[[ClusterView], Decision]


@dataclass(frozen=True)
class Serving:
    policy: Policy
    version: str
    # the node side of the next decision brought up to date when new metrics land, between
    # decisions (Agent.prepare); None: nothing to prepare
    prepare: Callable[[ClusterView], None] | None = None


def greedy_policy(agent: Agent) -> Policy:
    """The serving call: greedy, no critic, no garbage collection inside a decision."""
    def act(view: ClusterView) -> Decision:
        return collections_deferred(lambda: agent.act(view, greedy=True, value=False))
    return act


def serving(model: LoadedModel) -> Serving:
    """A loaded model ready to serve: its agent's greedy policy, warmed up (`warm_up`: what
    the policy raises there, raises here, so the caller keeps the model in service)."""
    agent = agent_from_files(model.state_dict, model.normaliser, model.config)
    policy = greedy_policy(agent)
    warm_s = warm_up(policy)
    agent.reset()  # what it remembers of the warm view goes: it decides as a cold agent would
    log.info("model %s warmed up in %.0f ms", model.version, warm_s * 1000)
    return Serving(policy, model.version, agent.prepare)


class ModelPolicy:
    def __init__(self, root: Path, period_s: float = 5.0) -> None:
        self.root = root
        self.period_s = period_s
        self.load_error: str | None = None
        self.reloads = 0
        self._handle: ModelHandle | None = None
        self._serving: Serving | None = None
        self._refresher = Periodic("dagpilot-model-reload", period_s, self.refresh)
        self.refresh()

    def current(self) -> Serving | None:
        return self._serving

    def refresh(self) -> None:
        """Open or reload `current` now; keeps what serves when the new one is refused."""
        try:
            if self._handle is None:  # kept only once its model serves, else opened again
                handle = ModelHandle.open(self.root, FEATURE_SCHEMA_VERSION)
                self._swap(handle.model)
                self._handle = handle
                return
            outcome = self._handle.reload()
            if outcome.error is not None:
                self.load_error = outcome.error
            elif outcome.changed:
                self._swap(self._handle.model)
        except Exception as error:  # a missing or refused model: the fallback decides
            self.load_error = f"{type(error).__name__}: {error}"[:500]
            log.warning("no model from %s: %s", self.root, self.load_error)

    def start(self) -> None:
        self._refresher.start()

    def close(self) -> None:
        self._refresher.close()

    def _swap(self, model: LoadedModel) -> None:
        self._serving = serving(model)
        self.load_error = None
        self.reloads += 1
        log.info("serving model %s", model.version)
