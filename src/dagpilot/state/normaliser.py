"""Running z-score normalisation per feature, saved with the model.

Statistics are kept per schema group and feature with Welford's update in its parallel form
(Chan et al.): merging two summaries (count, mean, M2) is exact, so batches, rollout workers
and whole runs combine in any order. Flags and one-hot slots pass through untouched; scalars
become (x - mean) / std clipped to +-5 std, so one wild reading cannot dominate a layer. A
Normaliser is an immutable value: `update` returns a new one, and the one saved with a model is
the frozen snapshot serving uses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from dagpilot.core.errors import DagpilotError
from dagpilot.state.observation import Observation
from dagpilot.state.schema import FEATURE_SCHEMA_VERSION, GROUPS, NODE, FeatureGroup

Floats = npt.NDArray[np.float64]
CLIP_STD = 5.0
MIN_STD = 1e-6  # a feature that never varied is centred but not scaled
FORMAT = "dagpilot-normaliser"


class NormaliserError(DagpilotError):
    """Saved statistics that cannot be used: unreadable, or for another feature schema."""


def _frozen(array: npt.ArrayLike) -> Floats:
    out = np.array(array, dtype=np.float64)
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class RunningStats:
    """count, mean and M2 (sum of squared deviations) of each feature of one group."""

    count: int
    mean: Floats
    m2: Floats

    @classmethod
    def empty(cls, dim: int) -> RunningStats:
        return cls(0, _frozen(np.zeros(dim)), _frozen(np.zeros(dim)))

    @classmethod
    def of(cls, rows: npt.ArrayLike) -> RunningStats:
        batch = np.asarray(rows, dtype=np.float64)
        if not len(batch):
            return cls.empty(batch.shape[-1])
        mean = batch.mean(axis=0)
        return cls(len(batch), _frozen(mean), _frozen(((batch - mean) ** 2).sum(axis=0)))

    def merge(self, other: RunningStats) -> RunningStats:
        if other.count == 0:
            return self
        if self.count == 0:
            return other
        count = self.count + other.count
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.count / count)
        m2 = self.m2 + other.m2 + delta**2 * (self.count * other.count / count)
        return RunningStats(count, _frozen(mean), _frozen(m2))

    @property
    def std(self) -> Floats:
        """Population standard deviation (0 before any row)."""
        return np.sqrt(self.m2 / self.count) if self.count else np.zeros_like(self.mean)


@dataclass(frozen=True)
class Normaliser:
    stats: Mapping[str, RunningStats]  # by group name, every group of the schema
    # per group: the scaled columns' means and divisors, worked out once (`apply` runs five
    # times a decision, and the statistics never change)
    _scaling: dict[str, tuple[Floats, Floats]] = field(default_factory=dict, compare=False,
                                                       repr=False)

    @classmethod
    def fresh(cls) -> Normaliser:
        """No statistics yet: `apply` leaves every feature as it is."""
        return cls({group.name: RunningStats.empty(group.dim) for group in GROUPS})

    def update(self, observation: Observation) -> Normaliser:
        """These statistics with every row of a raw observation added."""
        if observation.normalised:
            raise ValueError("update takes raw observations, not normalised ones")
        return Normaliser({group.name: self.stats[group.name].merge(
            RunningStats.of(observation.rows(group.name))) for group in GROUPS})

    def update_all(self, observations: Sequence[Observation]) -> Normaliser:
        """`update` with each observation in turn, in one pass per group: the same
        statistics up to rounding (the merge is exact, its floating-point sums are not)."""
        if not observations:
            return self
        if any(observation.normalised for observation in observations):
            raise ValueError("update takes raw observations, not normalised ones")
        return Normaliser({group.name: self.stats[group.name].merge(RunningStats.of(
            np.concatenate([observation.rows(group.name) for observation in observations])))
            for group in GROUPS})

    def merge(self, other: Normaliser) -> Normaliser:
        return Normaliser({group.name: self.stats[group.name].merge(other.stats[group.name])
                           for group in GROUPS})

    def apply(self, group: FeatureGroup, values: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Normalised values of one group (any leading shape, features last)."""
        stats = self.stats[group.name]
        out = np.array(values, dtype=np.float32)  # the flags and one-hot slots as they are
        scaled = group.scaled
        if stats.count == 0 or not len(scaled):  # nothing to scale (PAIR: flags only)
            return out
        # (x - mean) / std clipped, in float64, over the scaled columns only (under half of a
        # node row: the per-decision (nodes, NODE.dim) array makes every pass cost).
        scaling = self._scaling.get(group.name)
        if scaling is None:
            std = stats.std
            scaling = self._scaling[group.name] = (stats.mean[scaled],
                                                   np.where(std > MIN_STD, std, 1.0)[scaled])
        mean, divisor = scaling
        z = np.subtract(np.asarray(values)[..., scaled], mean, dtype=np.float64)
        np.divide(z, divisor, out=z)
        np.clip(z, -CLIP_STD, CLIP_STD, out=z)
        out[..., scaled] = z
        return out

    def normalise(self, observation: Observation, *,
                  nodes: npt.NDArray[np.float32] | None = None) -> Observation:
        """The observation normalised; `nodes`: its node features normalised already (by
        `NormalisedNodes`, which keeps the rows that did not change)."""
        if observation.normalised:
            return observation
        arrays = observation.arrays()
        return observation.with_arrays(
            {group.name: nodes if group is NODE and nodes is not None
             else self.apply(group, arrays[group.name]) for group in GROUPS}, True)

    def to_json(self) -> str:
        groups = {group.name: {"features": list(group.names),
                               "count": self.stats[group.name].count,
                               "mean": self.stats[group.name].mean.tolist(),
                               "m2": self.stats[group.name].m2.tolist()} for group in GROUPS}
        return json.dumps({"format": FORMAT, "schema_version": FEATURE_SCHEMA_VERSION,
                           "groups": groups}, indent=1)

    @classmethod
    def from_json(cls, text: str) -> Normaliser:
        """Statistics saved by `to_json`; refuses another schema version or feature list."""
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as error:
            raise NormaliserError(f"normaliser statistics are not valid JSON: {error}") from error
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise NormaliserError("not a dagpilot normaliser file")
        if raw.get("schema_version") != FEATURE_SCHEMA_VERSION:
            raise NormaliserError(
                f"normaliser saved for feature schema {raw.get('schema_version')!r}, this "
                f"dagpilot encodes schema {FEATURE_SCHEMA_VERSION}")
        groups = raw.get("groups")
        if not isinstance(groups, dict):
            raise NormaliserError("normaliser file has no groups")
        return cls({group.name: _stats(group, groups.get(group.name)) for group in GROUPS})


def _stats(group: FeatureGroup, raw: Any) -> RunningStats:
    if not isinstance(raw, dict):
        raise NormaliserError(f"normaliser file lacks group {group.name!r}")
    if raw.get("features") != list(group.names):
        raise NormaliserError(f"group {group.name!r}: saved features differ from the schema's")
    count = raw.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise NormaliserError(f"group {group.name!r}: bad count {count!r}")
    try:
        mean = np.array(raw.get("mean"), dtype=np.float64)
        m2 = np.array(raw.get("m2"), dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise NormaliserError(f"group {group.name!r}: bad statistics: {error}") from error
    if mean.shape != (group.dim,) or m2.shape != (group.dim,):
        raise NormaliserError(f"group {group.name!r}: statistics of the wrong length")
    if not (np.isfinite(mean).all() and np.isfinite(m2).all() and (m2 >= 0).all()):
        raise NormaliserError(f"group {group.name!r}: non-finite or negative statistics")
    return RunningStats(count, _frozen(mean), _frozen(m2))
