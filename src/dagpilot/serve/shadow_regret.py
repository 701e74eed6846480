"""Shadow regret of model versions: the simulator's estimate on a shadow journal's stream.

The recorded jobs and cluster of `serve scheduler --shadow` (as `dagpilot shadow report`
reads them) are replayed once under kube-default and once per version; a version's regret is
its mean JCT over kube-default's, minus 1 (0.05: 5 % slower than the default scheduler would
have been on the same stream). The canary's gate compares the canary's with the stable's.
Like the report it is a model's estimate, not a measurement.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dagpilot.agent import DagpilotScheduler, agent_from_files
from dagpilot.core.errors import InvalidInput
from dagpilot.journal import read
from dagpilot.registry import load_version
from dagpilot.schedulers import kube_default
from dagpilot.serve.shadow_report import mean_jct_s, recorded_cluster, recorded_jobs
from dagpilot.state import FEATURE_SCHEMA_VERSION


def regrets(journal: Path, models: Path, versions: Sequence[str],
            seed: int = 0) -> dict[str, float]:
    records = read(journal).records
    jobs = recorded_jobs(records, journal)
    if not jobs:
        raise InvalidInput(str(journal), "", "shadow_job",
                           "no job recorded: shadow regret needs a `serve scheduler --shadow` "
                           "journal that saw workflows")
    cluster = recorded_cluster(records, journal)
    baseline = mean_jct_s(jobs, cluster, kube_default.build(), seed)
    if baseline <= 0:
        raise InvalidInput(str(journal), "", "shadow_job", "the recorded jobs take no time")
    found = {}
    for version in versions:
        model = load_version(models, version, FEATURE_SCHEMA_VERSION)
        scheduler = DagpilotScheduler(agent_from_files(model.state_dict, model.normaliser,
                                                       model.config))
        found[version] = mean_jct_s(jobs, cluster, scheduler, seed) / baseline - 1.0
    return found
