"""docs/API_REFERENCE.md and docs/openapi/ are current, the route tables they are made from are
the routes the servers answer, and the guides name only commands and options that exist."""

from __future__ import annotations

import http.client
import re
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer.main

from dagpilot import docs_gen
from dagpilot.cli import app
from dagpilot.core.endpoints import Endpoint
from dagpilot.live.node_agent.exporter import ENDPOINTS, Exporter, SnapshotCollector
from dagpilot.sandbox import twin
from dagpilot.serve import extender_app, serve_metrics, webhook_app
from dagpilot.serve.https_server import HttpsServer
from dagpilot.serve.tls import AllowList, server_context
from tests.conftest import REPO
from tests.live.certs import Authority
from tests.serve.conftest import Served, served  # noqa: F401 (the webhook fixture)
from tests.serve.helpers import WORKFLOW

GUIDES = ("OPERATION_GUIDE.md", "TROUBLESHOOTING.md")


def cli() -> Any:
    return typer.main.get_command(app)


def test_the_generated_files_are_current() -> None:
    stale = docs_gen.stale(cli(), REPO)
    assert not stale, f"out of date: {[str(p) for p in stale]}; run `{docs_gen.COMMAND}`"


def test_every_cli_command_and_option_is_in_the_reference() -> None:
    text = docs_gen.reference(cli())
    for path, command in docs_gen._commands(cli()):
        assert f"### {path}\n" in text
        for param in command.params:
            for option in param.opts:
                if option.startswith("-"):
                    assert f"`{option}" in text, f"{path} {option}"


def test_a_changed_route_table_changes_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    before = docs_gen.reference(cli())
    server = docs_gen.SERVERS[0]
    changed = server.__class__(server.name, server.started_by, server.transport, server.module,
                               (*server.endpoints, Endpoint("GET", "/new", "new", "", ())))
    monkeypatch.setattr(docs_gen, "SERVERS", (changed, *docs_gen.SERVERS[1:]))
    assert "`/new`" in docs_gen.reference(cli()) and "`/new`" not in before


def documented(endpoints: tuple[Endpoint, ...]) -> set[tuple[str, str]]:
    return {(point.method, point.path) for point in endpoints}


def test_the_webhook_and_extender_tables_are_their_routes() -> None:
    webhook = webhook_app.routes(SimpleNamespace(max_body_bytes=1),  # type: ignore[arg-type]
                                 dict, AllowList.of(["CN=a"]), AllowList.of(["CN=b"]))
    assert {(r.method, r.path) for r in webhook} == documented(webhook_app.ENDPOINTS)
    extender = extender_app.routes(stub_extender(), AllowList.of(["CN=a"]))  # type: ignore[arg-type]
    assert {(r.method, r.path) for r in extender} == documented(extender_app.ENDPOINTS)


def stub_extender() -> SimpleNamespace:
    def verb(body: bytes) -> dict[str, Any]:
        return {"NodeNames": [], "FailedNodes": {}, "Error": ""}

    def scores(body: bytes) -> dict[str, int]:
        return {"node-a": 10}  # {Host: Score}, as Extender.prioritize answers
    return SimpleNamespace(filter=verb, prioritize=scores, calls=Counter(),
                           view=SimpleNamespace(cluster=SimpleNamespace(nodes=[])))


def answered(status: int, point: Endpoint) -> None:
    assert status in {code for code, _ in point.responses}, f"{point.method} {point.path}"


def get(port: int, path: str, context: ssl.SSLContext | None = None) -> int:
    connection = (http.client.HTTPSConnection("127.0.0.1", port, timeout=30, context=context)
                  if context else http.client.HTTPConnection("127.0.0.1", port, timeout=30))
    try:
        connection.request("GET", path)
        reply = connection.getresponse()
        reply.read()
        return reply.status
    finally:
        connection.close()


def test_the_webhook_answers_every_documented_route(served: Served) -> None:  # noqa: F811
    admission = served.client("dagpilot-webhook-client")
    submitter = served.client()
    signed = served.signer.sign(WORKFLOW, time.time())
    statuses = {
        ("POST", webhook_app.MUTATE_PATH): admission.post(webhook_app.MUTATE_PATH, b"{}", {})[0],
        ("POST", webhook_app.SUBMIT_PATH): submitter.submit(WORKFLOW, signed)[0],
        ("GET", webhook_app.HEALTH_PATH): get(served.process.port, webhook_app.HEALTH_PATH,
                                              submitter.context())}
    assert statuses[("POST", webhook_app.SUBMIT_PATH)] == 201
    for point in webhook_app.ENDPOINTS:
        answered(statuses[(point.method, point.path)], point)
    assert get(served.process.port, "/undocumented", submitter.context()) == 404


@pytest.fixture
def extender_port(tmp_path: Path) -> Iterator[tuple[int, ssl.SSLContext]]:
    authority = Authority("reference-test-ca")
    ca = authority.write(tmp_path / "ca.crt")
    cert, key = authority.issue(tmp_path, "serving", server=True)
    client = ssl.create_default_context(cafile=str(ca))
    client.load_cert_chain(*map(str, authority.issue(tmp_path, "kube-scheduler")))
    server = HttpsServer("127.0.0.1", 0, server_context(cert, key, ca),
                         extender_app.routes(stub_extender(),  # type: ignore[arg-type]
                                             AllowList.of(["CN=kube-scheduler"])))
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    try:
        yield server.port, client
    finally:
        server.shutdown()
        thread.join(timeout=30)


def test_the_extender_answers_every_documented_route(
        extender_port: tuple[int, ssl.SSLContext]) -> None:
    port, context = extender_port
    for point in extender_app.ENDPOINTS:
        if point.method == "GET":
            answered(get(port, point.path, context), point)
            continue
        connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=30, context=context)
        try:
            connection.request("POST", point.path, body=b"{}")
            reply = connection.getresponse()
            reply.read()
            assert reply.status == 200
        finally:
            connection.close()
    assert get(port, "/undocumented", context) == 404


def serving(start: Callable[[], tuple[int, Callable[[], None]]],
            endpoints: tuple[Endpoint, ...]) -> None:
    port, stop = start()
    try:
        for point in endpoints:
            assert point.method == "GET"
            answered(get(port, point.path), point)
    finally:
        stop()


def test_the_schedulers_metrics_answer() -> None:
    metrics = serve_metrics.SchedulerMetrics()
    serving(lambda: (metrics.serve(0, "127.0.0.1"), metrics.close), serve_metrics.ENDPOINTS)


def test_the_node_agents_metrics_answer() -> None:
    served_exporter = Exporter(SnapshotCollector(), "127.0.0.1", 0)
    serving(lambda: (served_exporter.port, served_exporter.stop), ENDPOINTS)


def test_the_twin_answers_every_documented_route_and_no_other() -> None:
    synced = threading.Event()
    stub = SimpleNamespace(synced=synced, lock=threading.Lock(), devices={},
                           metrics=SimpleNamespace(encode=lambda: b"# empty\n"))
    server = twin._server(stub, 0)  # type: ignore[arg-type]
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    try:
        port = int(server.server_address[1])
        assert get(port, "/healthz") == 503
        synced.set()
        for point in twin.ENDPOINTS:
            answered(get(port, point.path), point)
        assert get(port, "/undocumented") == 404
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


# The guides: every `dagpilot ...` they quote is a real command, with options it really has.
QUOTED = re.compile(r"`(dagpilot [^`]+)`")


def quoted_commands(text: str) -> Iterator[str]:
    for match in QUOTED.finditer(text):
        yield match.group(1)


def leaf_options() -> dict[str, set[str]]:
    return {path: {opt for param in command.params for opt in (*param.opts,
                                                               *param.secondary_opts)}
            | {"--help"} for path, command in docs_gen._commands(cli())}


def problems(text: str) -> tuple[list[str], int]:
    """The quoted commands or options the CLI lacks, and how many quotes were checked."""
    commands = leaf_options()
    groups = {" ".join(path.split()[:n]) for path in commands for n in (1, 2, 3)}
    found, checked = [], 0
    for quote in quoted_commands(text):
        words = quote.split()
        name = next((" ".join(words[:n]) for n in (4, 3, 2)  # `dagpilot ops canary plan`
                     if " ".join(words[:n]) in commands), None)
        if name is None:  # a group, e.g. `dagpilot models ...`
            if " ".join(w for w in words if w != "...") not in groups:
                found.append(quote)
            continue
        for word in words[len(name.split()):]:
            option = word.split("=")[0].strip("[]|,")
            if option.startswith("--") and option not in commands[name]:
                found.append(f"{quote}: {option}")
        checked += 1
    return found, checked


@pytest.mark.parametrize("guide", GUIDES)
def test_the_guides_quote_only_real_commands_and_options(guide: str) -> None:
    found, checked = problems((REPO / "docs" / guide).read_text(encoding="utf-8"))
    assert not found, f"{guide}: {found}"
    assert checked >= 10, f"{guide} quotes only {checked} commands"


def test_a_made_up_command_or_option_is_caught() -> None:
    found, checked = problems("`dagpilot ops check-kernel --no-such-flag` `dagpilot ops canary "
                              "launch` `dagpilot serve scheduler --cpus 2-3` `dagpilot models ...`"
                              " `dagpilot ops canary plan --no-such-flag` `dagpilot ops canary`")
    assert found == ["dagpilot ops check-kernel --no-such-flag: --no-such-flag",
                     "dagpilot ops canary launch",
                     "dagpilot ops canary plan --no-such-flag: --no-such-flag"]
    assert checked == 3
