"""`dagpilot serve extender` without the policy: the extender protocol's own cost, live.

    .venv/bin/python bench/protocol_extender.py --kubeconfig F --port P --tls-cert C \\
        --tls-key K --client-ca CA [--address 127.0.0.1] [--cpus LIST]

The same process as `dagpilot serve extender` (its live view with its watches, its HTTPS
server with mTLS, the same parsing and answers), except that every node of the view passes
and scores alike: no feasibility check, no encoding, no network. bench/serving_throughput.py
runs a kube-scheduler against it beside the real extender, so the gap to kube-scheduler
alone splits into what the protocol costs (both sides' HTTP and JSON, the view's watches)
and what dagpilot's decision adds. Serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path

from dagpilot.core.cpu_list import parse_cpus
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.ranking import Ranking
from dagpilot.serve.extender_process import ExtenderConfig, ExtenderProcess


def every_node_alike(view: ClusterView, pod: PodRef) -> Ranking:
    names = tuple(spec.name for spec in view.cluster.nodes)
    return Ranking(pod, names, (1.0 / max(1, len(names)),) * len(names), ())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls-cert", type=Path, required=True)
    parser.add_argument("--tls-key", type=Path, required=True)
    parser.add_argument("--client-ca", type=Path, required=True)
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--cpus", help="pinned to these CPUs, as `serve extender --cpus`")
    args = parser.parse_args()
    config = ExtenderConfig(kubeconfig=args.kubeconfig, port=args.port, tls_cert=args.tls_cert,
                            tls_key=args.tls_key, client_ca=args.client_ca, host=args.address,
                            cpus=parse_cpus(args.cpus) if args.cpus else None)
    process = ExtenderProcess(config, rank=every_node_alike)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    process.serve(stop)


if __name__ == "__main__":
    main()
