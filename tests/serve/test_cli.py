"""`dagpilot submit` against a webhook on loopback, and the CLI's clear errors (exit 2)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dagpilot import cli
from tests.live.certs import Authority
from tests.serve.conftest import Served
from tests.serve.helpers import HOUR, NOW, WORKFLOW, key, write_keys

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def dagpilot(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """`dagpilot ARGS...` through the CLI's main: (exit code, stdout, stderr)."""
    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["dagpilot", *args])
        try:
            cli.main()
            code = 0
        except SystemExit as stop:
            code = int(stop.code or 0)
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    return run


def submit_args(served: Served, workflow: Path, keys: Path | None = None,
                client: str = "dagpilot-submit") -> list[str]:
    cert, private = served.certs[client]
    return ["submit", str(workflow), "--url", f"https://127.0.0.1:{served.process.port}",
            "--keys", str(keys or served.keys_file), "--cert", str(cert), "--key", str(private),
            "--ca", str(served.ca)]


def test_submit_prints_the_created_workflow(served: Served, tmp_path: Path,
                                            dagpilot: Run) -> None:
    workflow = tmp_path / "etl.yaml"
    workflow.write_bytes(WORKFLOW)
    code, out, err = dagpilot(*submit_args(served, workflow))
    assert (code, out.strip(), err) == (0, "team/wf-1", "")
    assert served.created[0]["metadata"]["generateName"] == "etl-"


@pytest.mark.parametrize(("case", "words"), [
    ("refused", "HTTP 403: client certificate CN=someone-else may not call /v1/workflows"),
    ("no valid key", "no key is valid now"),
    ("bad dag", "HTTP 422: submission: workflow 'etl-', template 'main', task 'extract'"),
    ("not https", "expected an https:// URL"),
    ("missing file", "nothing.yaml"),
])
def test_submit_failures_are_one_error_line(served: Served, tmp_path: Path, case: str,
                                            words: str, dagpilot: Run) -> None:
    workflow = tmp_path / "etl.yaml"
    workflow.write_bytes(WORKFLOW if case != "bad dag" else WORKFLOW.replace(
        b"{name: extract, template: work}", b"{name: extract, template: work, depends: load}"))
    args = submit_args(served, workflow, client="someone-else" if case == "refused"
                       else "dagpilot-submit")
    if case == "no valid key":
        args[args.index("--keys") + 1] = str(write_keys(tmp_path / "old.yaml", key(
            "old", NOW - 48 * HOUR, 1)))
    if case == "not https":
        args[args.index("--url") + 1] = f"http://127.0.0.1:{served.process.port}"
    if case == "missing file":
        args[1] = str(tmp_path / "nothing.yaml")
    code, out, err = dagpilot(*args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and words in " ".join(err.split()), err
    assert "Traceback" not in err
    assert served.created == []


def test_serve_webhook_refuses_a_bad_key_file_before_listening(tmp_path: Path,
                                                               dagpilot: Run) -> None:
    authority = Authority("cli-ca")
    cert, private = authority.issue(tmp_path, "serving", server=True)
    keys = tmp_path / "keys.yaml"
    keys.write_text("keys:\n- {id: a, secret: c2hvcnQ=, notBefore: 2026-12-01T00:00:00Z, "
                    "notAfter: 2026-12-01T01:00:00Z}\n")
    common = ["serve", "webhook", "--kubeconfig", "k", "--port", "0", "--tls-cert", str(cert),
              "--tls-key", str(private), "--client-ca", str(authority.write(tmp_path / "ca"))]
    code, _, err = dagpilot(*common, "--keys", str(keys))
    assert code == 2 and "Traceback" not in err
    assert f"error: {keys}: keys[0] (a), field 'secret': 5 bytes; a secret has at least 32" in \
        " ".join(err.split())
    code, _, err = dagpilot(*common[:-1], str(tmp_path / "missing.crt"),
                       "--keys", str(keys))
    assert code == 2 and "not a usable CA certificate file" in err
