"""Two `dagpilot serve scheduler` replicas on one Lease: only the leader sends bindings (the
follower's count is zero), no pod is bound twice, and when the leader dies without handing the
Lease back the follower takes over within lease duration + one retry period and binds the
rest."""

from __future__ import annotations

import time
from contextlib import ExitStack
from datetime import datetime

import pytest

from dagpilot.sandbox import rest
from dagpilot.sandbox.state import SandboxState
from dagpilot.serve.leader import LeaseConfig
from dagpilot.serve.scheduler_process import SchedulerProcess
from tests.live.kube import admin, namespace, wait_for
from tests.live.serve.scheduler_env import all_bound, config, create_pods, pod, running

pytestmark = pytest.mark.live

DURATION, RENEW, RETRY = 4.0, 2.5, 0.5
SLACK_S = 1.0  # the read and write of the Lease on a loaded 2-core machine


def test_only_the_leader_binds_and_the_follower_takes_over_when_it_dies(
        sandbox: SandboxState) -> None:
    api = admin(sandbox)
    with namespace(api, "sched-replicas") as ns, ExitStack() as stack:
        def replica(name: str) -> SchedulerProcess:
            lease = LeaseConfig(ns, name, lease_duration_s=DURATION, renew_deadline_s=RENEW,
                                retry_period_s=RETRY)
            return stack.enter_context(running(config(sandbox, leader_elect=True, lease=lease),
                                               release_lease=False))
        first = replica("replica-a")
        wait_for("replica-a leads", lambda: first.leader.is_leader, 30)
        second = replica("replica-b")
        create_pods(api, ns, [pod(f"early-{i}") for i in range(6)])
        all_bound(api, ns, 6)
        assert first.binder is not None and second.binder is not None
        assert (first.binder.requests, second.binder.requests) == (6, 0)
        assert not second.leader.is_leader
        first.close(release_lease=False)  # a crash: the Lease is left to expire
        # from its last renewal (what a follower's expiry counts from), not from when close()
        # began: stopping the threads takes seconds of its own on a loaded host
        lease = rest.get(api, f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/"
                              "dagpilot-scheduler")
        assert lease["spec"]["holderIdentity"] == "replica-a"
        last_renewal = datetime.fromisoformat(lease["spec"]["renewTime"]).timestamp()
        wait_for("replica-b leads", lambda: second.leader.is_leader, DURATION + 10, 0.05)
        took_over_s = time.time() - last_renewal
        assert took_over_s <= DURATION + RETRY + SLACK_S
        create_pods(api, ns, [pod(f"late-{i}") for i in range(4)])
        all_bound(api, ns, 10)
        assert second.binder.requests == 4  # each pod bound once, by one replica
        assert first.binder.requests == 6
