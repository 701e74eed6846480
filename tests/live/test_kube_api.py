"""The API connection's failures, against real sockets and real TLS on loopback: a server that
is not there, one whose certificate the kubeconfig's CA did not sign or that expired, and a
kubeconfig that is not one. Each is a KubeApiError saying why, never a traceback."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from dagpilot.core.config import PhysicsParameters
from dagpilot.live.errors import KubeApiError
from dagpilot.live.kube_api import KubeApi, Timeouts, retryable
from dagpilot.live.view import LiveView
from dagpilot.sim import physics
from tests.live.certs import Authority, kubeconfig
from tests.live.tls_server import serve_tls


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Authority, Path]]:
    """An HTTPS server on 127.0.0.1 whose certificate `server_ca` signed; (url, CA, dir)."""
    server_ca = Authority("server-ca")
    holder: dict[str, ThreadingHTTPServer] = {}

    def start(expired: bool) -> str:
        cert, key = server_ca.issue(tmp_path, f"server-{expired}", server=True, expired=expired)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *_: object) -> None:
                pass

        server = serve_tls(context, Handler)
        holder["server"] = server
        return f"https://127.0.0.1:{server.server_port}"

    yield start, server_ca, tmp_path  # type: ignore[misc]
    if "server" in holder:
        holder["server"].shutdown()
        holder["server"].server_close()


def _client(tmp_path: Path, server: str, ca: Path) -> Path:
    own = Authority("client-ca")
    cert, key = own.issue(tmp_path, "client")
    return kubeconfig(tmp_path / "kubeconfig", server, ca, cert, key)


def test_a_server_that_is_not_there_is_unreachable(tmp_path: Path) -> None:
    ca = Authority("ca").write(tmp_path / "ca.crt")
    api = KubeApi(_client(tmp_path, f"https://127.0.0.1:{_free_port()}", ca),
                  timeouts=Timeouts(connect_s=1, read_s=1))
    with pytest.raises(KubeApiError, match=r"unreachable: .*refused") as caught:
        api.version()
    assert api.server in str(caught.value) and retryable(caught.value)


def test_a_certificate_the_kubeconfigs_ca_did_not_sign_is_refused(tls_server, tmp_path: Path
                                                                   ) -> None:
    start, _, _ = tls_server
    url = start(False)
    other_ca = Authority("another-ca").write(tmp_path / "other.crt")
    with pytest.raises(KubeApiError, match="certificate-authority does not sign") as caught:
        KubeApi(_client(tmp_path, url, other_ca)).version()
    assert not retryable(caught.value)


def test_an_expired_server_certificate_is_refused(tls_server, tmp_path: Path) -> None:
    start, server_ca, _ = tls_server
    url = start(True)
    with pytest.raises(KubeApiError, match="certificate has expired"):
        KubeApi(_client(tmp_path, url, server_ca.write(tmp_path / "ca.crt"))).version()


def test_a_file_that_is_no_kubeconfig_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("clusters: [not, a, kubeconfig\n")
    with pytest.raises(KubeApiError, match="not a usable kubeconfig") as caught:
        KubeApi(bad)
    assert str(bad) in str(caught.value)
    with pytest.raises(KubeApiError, match="not a usable kubeconfig"):
        KubeApi(tmp_path / "missing")


def test_a_view_of_an_unusable_server_fails_to_start_with_the_reason(tls_server,
                                                                     tmp_path: Path) -> None:
    start, _, _ = tls_server
    url = start(False)
    params = PhysicsParameters()
    view = LiveView.connect(_client(tmp_path, url, Authority("x").write(tmp_path / "x.crt")),
                            lambda a, b: physics.rtt_ms(physics.distance(a, b), params))
    with pytest.raises(KubeApiError, match="TLS"):
        view.start(deadline_s=20)
    assert all(w.health.lists == 0 for w in view.watchers)  # refused before any list
    view.close()
