"""The routes of `dagpilot serve extender`: kube-scheduler's filter and prioritize verbs, health.

`POST /filter` and `POST /prioritize` (urlPrefix + "/" + verb) take ExtenderArgs from the
allowed client subjects only (kube-scheduler's client certificate); `GET /healthz` any client
the CA signed. A bad body is a 400 whose JSON carries the reason in `Error` (the
ExtenderFilterResult's field, so a scheduler logs it); one over MAX_ARGS_BYTES a 413. With
`ignorable: true` kube-scheduler then schedules the pod without the extender.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from dagpilot.core.endpoints import Endpoint
from dagpilot.core.errors import InvalidInput
from dagpilot.serve.extender import Extender
from dagpilot.serve.extender_wire import error_result, priority_json
from dagpilot.serve.https_server import Reply, Request, Route
from dagpilot.serve.tls import AllowList

FILTER_PATH = "/filter"
PRIORITIZE_PATH = "/prioritize"
HEALTH_PATH = "/healthz"
# Node objects of 5,000 nodes (kube-scheduler's largest supported cluster) at ~5 KB each,
# twice over: a scheduler without nodeCacheCapable sends them all.
MAX_ARGS_BYTES = 64 << 20

_REFUSED = ((400, "ExtenderFilterResult-shaped {\"Error\"}: a bad ExtenderArgs body"),
            (403, "client certificate subject not allowed"), (411, "no Content-Length"),
            (413, f"{{\"Error\"}}: body over {MAX_ARGS_BYTES} bytes"))
# docs/API_REFERENCE.md; tests/test_api_reference.py checks it against routes().
ENDPOINTS = (
    Endpoint("POST", FILTER_PATH, "kube-scheduler extender filter verb "
             "(k8s.io/kube-scheduler/extender/v1)",
             "ExtenderArgs: Pod, and Nodes or NodeNames (nodeCacheCapable)",
             ((200, "ExtenderFilterResult: Nodes or NodeNames, FailedNodes, "
                    "FailedAndUnresolvableNodes, Error"), *_REFUSED)),
    Endpoint("POST", PRIORITIZE_PATH, "kube-scheduler extender prioritize verb",
             "ExtenderArgs: Pod, and Nodes or NodeNames",
             ((200, "HostPriorityList: [{Host, Score}], scores 1-10; a node left out "
                    "scores 0"), *_REFUSED)),
    Endpoint("GET", HEALTH_PATH, "Liveness, the node count and the call counts", "",
             ((200, '{"ok": true, "nodes": N, "calls": {kind: count}}'),)),
)


def routes(extender: Extender, schedulers: AllowList) -> list[Route]:
    def answered(verb: Callable[[bytes], Any],
                 encode: Callable[[Any], bytes] = lambda document: json.dumps(
                     document).encode()) -> Callable[[Request], Reply]:
        def handle(request: Request) -> Reply:
            try:
                return Reply(200, encode(verb(request.body)))
            except InvalidInput as error:
                extender.calls["bad_request"] += 1
                return Reply.json(400, error_result(str(error)))
        return handle

    def too_large(length: int) -> Reply:
        extender.calls["too_large"] += 1
        return Reply.json(413, error_result(f"ExtenderArgs of {length} bytes: at most "
                                            f"{MAX_ARGS_BYTES}"))

    def health(request: Request) -> Reply:
        return Reply.json(200, {"ok": True, "nodes": len(extender.view.cluster.nodes),
                                "calls": dict(extender.calls)})

    return [Route("POST", FILTER_PATH, answered(extender.filter), schedulers, MAX_ARGS_BYTES,
                  too_large),
            Route("POST", PRIORITIZE_PATH, answered(extender.prioritize, priority_json),
                  schedulers,
                  MAX_ARGS_BYTES, too_large),
            Route("GET", HEALTH_PATH, health, None)]
