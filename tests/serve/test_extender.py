"""The extender's answers from a real agent's ranking over a snapshot view."""

from __future__ import annotations

import json

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.ranking import Ranking
from dagpilot.serve.extender import NOT_IN_VIEW, Extender
from tests.serve.extender_helpers import by_names, by_objects, pod
from tests.test_agent import agent, filtered_cluster
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]  # autouse: torch on one thread here too

ALL = ["cordoned", "tiny", "fit-a", "fit-b", "fit-c", "tainted"]


class CountingRank:
    def __init__(self) -> None:
        self.agent = agent()
        self.calls = 0
        self.last: Ranking | None = None

    def __call__(self, view: ClusterView, the_pod: PodRef) -> Ranking:
        self.calls += 1
        self.last = self.agent.rank(view, the_pod)
        return self.last


def extender(applied: list[int] | None = None) -> tuple[Extender, CountingRank]:
    rank = CountingRank()
    events = iter(applied or [])
    return Extender(ClusterSnapshot.of(filtered_cluster(), ()), rank,
                    lambda: next(events, 0)), rank


def test_filter_passes_the_feasible_nodes_and_says_why_not_for_the_others() -> None:
    served, _ = extender()
    result = served.filter(by_names([*ALL, "gone"]))
    assert result["NodeNames"] == ["fit-a", "fit-b", "fit-c"] and result["Nodes"] is None
    unresolvable = result["FailedAndUnresolvableNodes"]
    assert sorted(unresolvable) == ["cordoned", "tainted", "tiny"]
    assert unresolvable["tiny"] == "NodeResourcesFit: Insufficient cpu"
    assert "untolerated taint {dedicated: ml}" in unresolvable["tainted"]
    assert result["FailedNodes"] == {"gone": NOT_IN_VIEW}  # the view may catch up
    assert result["Error"] == ""


def test_filter_answers_only_about_the_nodes_asked() -> None:
    served, _ = extender()
    result = served.filter(by_names(["fit-b", "tiny"]))
    assert result["NodeNames"] == ["fit-b"]
    assert list(result["FailedAndUnresolvableNodes"]) == ["tiny"]


def test_prioritize_gives_the_policys_best_node_ten_and_leaves_out_the_zeros() -> None:
    served, rank = extender()
    scores = served.prioritize(by_names(ALL))
    ranking = rank.last
    assert ranking is not None and ranking.feasible == ("fit-a", "fit-b", "fit-c")
    best = ranking.feasible[max(range(3), key=lambda i: ranking.scores[i])]
    assert scores[best] == 10
    assert all(0 < score < 10 for node, score in scores.items() if node != best)
    assert set(scores) <= set(ranking.feasible)  # infeasible nodes score 0: left out
    assert list(scores) == [name for name in ALL if name in scores]  # the request's order
    assert served.answers[-1].best() == {best}


def test_prioritize_leaves_out_feasible_nodes_that_score_zero() -> None:
    view = ClusterSnapshot.of(filtered_cluster(), ())

    def peaked(v: ClusterView, the_pod: PodRef) -> Ranking:
        return Ranking(the_pod, ("fit-a", "fit-b", "fit-c"), (0.9, 0.05, 0.05), ())
    scores = Extender(view, peaked).prioritize(by_names(ALL))
    assert scores == {"fit-a": 10}  # floor(10 x 0.05 / 0.9) = 0 for the two others


def test_node_objects_come_back_as_objects_and_unreadable_ones_fail() -> None:
    served, _ = extender()
    body = json.loads(by_objects(filtered_cluster(), ["fit-a", "fit-b", "tiny"]))
    [fit_b] = [n for n in body["Nodes"]["items"] if n["metadata"]["name"] == "fit-b"]
    fit_b["status"]["allocatable"]["cpu"] = "lots"
    result = served.filter(json.dumps(body).encode())
    assert [node["metadata"]["name"] for node in result["Nodes"]["items"]] == ["fit-a"]
    assert result["NodeNames"] is None
    assert "cannot read this Node" in result["FailedNodes"]["fit-b"]
    assert list(result["FailedAndUnresolvableNodes"]) == ["tiny"]


def test_prioritize_after_filter_reuses_the_ranking_of_its_cycle() -> None:
    served, rank = extender(applied=[0, 0, 3])
    served.filter(by_names(ALL))
    served.prioritize(by_names(ALL))
    assert rank.calls == 1  # one cycle, one picture (events are not even applied)
    served.prioritize(by_names(ALL))
    assert rank.calls == 1  # a call of no cycle, with no event since: the same picture
    served.prioritize(by_names(ALL))
    assert rank.calls == 2  # three events arrived: ranked again
    served.prioritize(by_names(ALL, pod(uid="u-2")))
    assert rank.calls == 3  # another pod


def test_events_between_filter_and_prioritize_keep_the_cycles_picture() -> None:
    served, rank = extender(applied=[0, 5, 5])
    served.filter(by_names(ALL))
    served.prioritize(by_names(ALL))
    assert rank.calls == 1  # the last pod's bind arrived meanwhile: still its cycle
    served.filter(by_names(ALL))
    assert rank.calls == 2  # a new cycle for the same pod (a retry): the events count


def test_a_pod_that_does_not_parse_is_a_clear_error() -> None:
    served, _ = extender()
    bad = pod(cpu="two")
    with pytest.raises(InvalidInput) as caught:
        served.filter(by_names(ALL, bad))
    assert caught.value.file == "extender request" and caught.value.record == "pod team/p"
    assert caught.value.field.startswith("Pod.spec.containers[0]")


def test_the_views_pending_pod_is_used_when_it_has_one() -> None:
    view = ClusterSnapshot.of(filtered_cluster(), ())
    rank = CountingRank()
    seen: list[PodRef] = []

    def recording(v: ClusterView, the_pod: PodRef) -> Ranking:
        seen.append(the_pod)
        return rank(v, the_pod)
    mine = Extender(view, recording).prioritize(by_names(ALL))
    assert seen[0].job.id == "team/p"  # read from the request: a single-task job
    assert 10 in mine.values()


def test_requests_that_are_not_an_object_are_a_clear_error() -> None:
    served, _ = extender()
    bad = pod()
    bad["spec"]["containers"][0]["resources"]["requests"] = "Pod"  # found by the fuzzer
    with pytest.raises(InvalidInput) as caught:
        served.prioritize(by_names(ALL, bad))
    assert caught.value.field == "Pod.spec.containers[0].resources.requests"
