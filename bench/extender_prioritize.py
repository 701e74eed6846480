"""`python bench/extender_prioritize.py --nodes 1000 --calls 200 [--cycle]`: the cost of one
extender prioritize call at N nodes (with --cycle: a filter then a prioritize of the same pod,
kube-scheduler's scheduling cycle), over real mTLS on loopback, against a baseline in the same
run.

Both servers are the extender's own HTTPS server and routes on one keep-alive connection,
sent the same ExtenderArgs (nodeCacheCapable: every node's name, as kube-scheduler sends them
with percentageOfNodesToScore 100). The baseline answers with the same parsing and the same
score for every node (so every node is written back, as bench/protocol_extender.py does),
without the policy: transport and protocol alone. Printed: p50 and p99 of each and their
ratio, and the dagpilot call's p99 against the shipped httpTimeout (1 s). The view is a
snapshot of builtin:scale-N with no pods (the state of the policy's inputs does not change its
cost).
"""

from __future__ import annotations

import argparse
import http.client
import json
import ssl
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dagpilot.agent import load_scheduler
from dagpilot.clusters import load_cluster
from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.decide.ranking import Ranking
from dagpilot.policy.process import settle_scheduler_process
from dagpilot.serve.extender import Extender
from dagpilot.serve.extender_app import routes
from dagpilot.serve.https_server import HttpsServer
from dagpilot.serve.tls import AllowList, server_context

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' certificates
from tests.live.certs import Authority
from tests.serve.extender_helpers import by_names

BUDGET_S = 1.0  # deploy/scheduler-extender: httpTimeout


def serve(extender: Extender, certs: dict[str, Path]) -> HttpsServer:
    server = HttpsServer("127.0.0.1", 0, server_context(certs["cert"], certs["key"],
                                                        certs["ca"]),
                         routes(extender, AllowList.of(["CN=scheduler"])))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def timed_calls(port: int, certs: dict[str, Path], body: bytes, calls: int,
                verbs: tuple[str, ...] = ("prioritize",)) -> list[float]:
    """Seconds per sample; a sample is one call of each verb in turn (a scheduling cycle's
    filter then prioritize, with --cycle)."""
    context = ssl.create_default_context(cafile=str(certs["ca"]))
    context.load_cert_chain(str(certs["client"]), str(certs["client_key"]))
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=60)
    seconds = []
    for _ in range(calls):
        started = time.perf_counter()
        for verb in verbs:
            connection.request("POST", f"/{verb}", body=body,
                               headers={"Content-Type": "application/json"})
            reply = connection.getresponse()
            answer = json.loads(reply.read())
            assert reply.status == 200 and len(answer) > 0, answer
        seconds.append(time.perf_counter() - started)
    connection.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--cycle", action="store_true",
                        help="time kube-scheduler's cycle: filter, then prioritize of the same "
                             "pod, with events arrived before each (a backlog's case)")
    options = parser.parse_args()
    verbs = ("filter", "prioritize") if options.cycle else ("prioritize",)
    cluster = load_cluster(f"builtin:scale-{options.nodes}")
    view = ClusterSnapshot.of(cluster, ())
    agent = load_scheduler(options.models, explain=False).agent
    settle_scheduler_process()

    def nothing(_: object, pod: object) -> Ranking:
        return Ranking(pod, tuple(n.name for n in cluster.nodes),  # type: ignore[arg-type]
                       (1.0 / len(cluster.nodes),) * len(cluster.nodes), ())
    rankers: dict[str, Callable[..., Ranking]] = {"baseline": nothing, "dagpilot": agent.rank}
    body = by_names([node.name for node in cluster.nodes])
    with tempfile.TemporaryDirectory() as folder:
        authority = Authority("bench-ca")
        ca = authority.write(Path(folder) / "ca.crt")
        cert, key = authority.issue(Path(folder), "serving", server=True)
        client, client_key = authority.issue(Path(folder), "scheduler")
        certs = {"ca": ca, "cert": cert, "key": key, "client": client,
                 "client_key": client_key}
        results = {}
        for name, rank in rankers.items():
            server = serve(Extender(view, rank, lambda: 1), certs)  # 1: an event before every call
            timed_calls(server.port, certs, body, options.warmup, verbs)
            seconds = np.array(timed_calls(server.port, certs, body, options.calls, verbs))
            server.shutdown()
            results[name] = {"p50_ms": float(np.percentile(seconds, 50) * 1e3),
                             "p99_ms": float(np.percentile(seconds, 99) * 1e3)}
    ratio = {k: results["dagpilot"][k] / results["baseline"][k] for k in ("p50_ms", "p99_ms")}
    print(json.dumps({"nodes": options.nodes, "calls": options.calls, "verbs": verbs, **results,
                      "ratio_dagpilot_over_baseline": ratio,
                      "p99_over_budget": results["dagpilot"]["p99_ms"] / (BUDGET_S * 1e3)},
                     indent=1))


if __name__ == "__main__":
    main()
