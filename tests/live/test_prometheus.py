"""PromQL over HTTP against a small local server that answers as Prometheus' API does: readings
with their sample times, what is missing left out, and a Prometheus that is down, slow or wrong
reported, never turned into values."""

from __future__ import annotations

import json
import socket
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from dagpilot.live.errors import PrometheusError
from dagpilot.live.prometheus import Prometheus, Reading, default_queries
from dagpilot.live.signal_poller import SignalPoller

Answer = Callable[[str], tuple[int, object]]


def vector(*series: tuple[dict[str, str], float | str]) -> dict[str, object]:
    return {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": labels, "value": [1000.0, str(value)]} for labels, value in series]}}


@pytest.fixture
def serve() -> Iterator[Callable[[Answer], str]]:
    servers: list[ThreadingHTTPServer] = []
    release = threading.Event()  # lets a "slow" handler go when the test ends

    def start(answer: Answer) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                status, body = answer(query.get("query", [""])[0])
                if body is release:
                    release.wait(10)
                    return
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}"

    start.release = release  # type: ignore[attr-defined]
    yield start
    release.set()
    for server in servers:
        server.shutdown()
        server.server_close()


def test_readings_have_values_and_measurement_times_and_missing_ones_are_absent(
        serve: Callable[[Answer], str]) -> None:
    queries = {q.column: q for q in default_queries()}

    def answer(promql: str) -> tuple[int, object]:
        if promql == queries["cpu_used"].value:
            return 200, vector(({"node": "a"}, 1.5), ({"node": "b"}, "NaN"))
        if promql == queries["cpu_used"].sampled:
            return 200, vector(({"node": "a"}, 990.0), ({"node": "b"}, 991.0))
        if promql == queries["memory_used"].sampled:
            return 200, vector(({"node": "b"}, 995.0), ({"node": "c"}, 996.0))
        if promql == queries["memory_used"].value:  # c: a time without a value
            return 200, vector(({"node": "b"}, 0.0))
        if promql == "dagpilot_rtt_seconds":
            return 200, vector(({"src": "a", "dst": "b"}, 0.0003))
        return 200, vector()

    sample = Prometheus(serve(answer)).sample(default_queries(), 1000.0)
    assert sample.readings["cpu_used"] == {"a": Reading(1.5, 990.0)}  # b's NaN is no value
    assert sample.readings["memory_used"] == {"b": Reading(0.0, 995.0)}
    assert sample.readings["membw_utilisation"] == {}
    assert sample.of_node("b") == {"memory_used": Reading(0.0, 995.0)}
    assert sample.rtt_s == {("a", "b"): 0.0003}


def test_queries_name_the_metrics_of_the_node_agent_and_node_exporter() -> None:
    text = " ".join(f"{q.value} {q.sampled}" for q in default_queries())
    for metric in ("node_cpu_seconds_total", "dagpilot_pod_cpu_seconds_total",
                   "dagpilot_pod_memory_rss_bytes",
                   "dagpilot_pod_memory_usage_bytes", "dagpilot_memory_bandwidth_utilisation",
                   "dagpilot_disk_await_milliseconds",
                   "dagpilot_probe_sample_timestamp_seconds"):
        assert metric in text


def test_a_prometheus_that_is_down_is_an_error_naming_it() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with pytest.raises(PrometheusError, match="unreachable") as caught:
        Prometheus(url).query("up")
    assert url in str(caught.value)


def test_a_slow_prometheus_times_out(serve: Callable[[Answer], str]) -> None:
    url = serve(lambda _: (200, serve.release))  # type: ignore[attr-defined]
    with pytest.raises(PrometheusError, match=r"no answer within 0\.2 s"):
        Prometheus(url, timeout_s=0.2).query("up")


@pytest.mark.parametrize(("status", "body", "message"), [
    (400, {"status": "error", "errorType": "bad_data", "error": "parse error at char 3"},
     "parse error at char 3"),
    (200, b"<html>not prometheus</html>", "not JSON"),
    (200, {"status": "success", "data": {"result": [{"metric": {}}]}}, "not a vector"),
])
def test_a_wrong_answer_is_an_error_with_the_reason(serve: Callable[[Answer], str], status: int,
                                                    body: object, message: str) -> None:
    with pytest.raises(PrometheusError, match=message):
        Prometheus(serve(lambda _: (status, body))).query("up")


def test_the_poller_keeps_the_last_sample_and_counts_failures(
        serve: Callable[[Answer], str]) -> None:
    healthy = threading.Event()
    healthy.set()

    def answer(_: str) -> tuple[int, object]:
        return (200, vector()) if healthy.is_set() else (503, b"down")

    poller = SignalPoller(Prometheus(serve(answer)), interval_s=60)
    first = poller.poll()
    assert first is not None and poller.latest is first
    healthy.clear()
    assert poller.poll() is None and poller.latest is first
    assert poller.health.failures == 1 and "HTTP 503" in str(poller.health.last_error)
    healthy.set()
    assert poller.poll() is not None and poller.health.last_error is None
