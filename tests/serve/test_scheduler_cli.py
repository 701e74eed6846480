"""The serving commands from the CLI: bad options of `serve scheduler` and `serve extender` are
one `error:` line and exit 2, never a traceback; `place` prints YAML; `shadow report` prints
the agreement and the estimate."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from dagpilot.cli import main
from tests.serve.test_place import FIXTURE
from tests.serve.test_shadow_report import journal
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]

SHIPPED = str(Path(__file__).resolve().parents[2] / "models")


Run = Callable[..., tuple[int, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    """`dagpilot ARGS` through main(): its exit status and what it printed."""
    def invoke(*arguments: str) -> tuple[int, str]:
        monkeypatch.setattr(sys, "argv", ["dagpilot", *arguments])
        try:
            main()
        except SystemExit as exited:  # anything else would be a traceback
            code = int(exited.code or 0)
        else:
            code = 0
        captured = capsys.readouterr()
        return code, captured.out + captured.err
    return invoke


@pytest.mark.parametrize(("arguments", "message"), [
    (["--cpus", "3-1"], "--cpus"),
    (["--deadline-ms", "0"], "--deadline-ms"),
    (["--metrics-port", "70000"], "--metrics-port"),
])
def test_bad_scheduler_options_are_one_error_line(run: Run, tmp_path: Path,
                                                  arguments: list[str], message: str) -> None:
    code, output = run("serve", "scheduler", "--kubeconfig", str(tmp_path / "k"), *arguments)
    assert code == 2 and output.startswith("error:") and message in output
    assert "Traceback" not in output


def test_a_bad_extender_cpus_option_is_one_error_line(run: Run, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing")
    code, output = run("serve", "extender", "--kubeconfig", missing, "--port", "0",
                       "--tls-cert", missing, "--tls-key", missing, "--client-ca", missing,
                       "--cpus", "3-1")
    assert code == 2 and output.startswith("error:") and "--cpus" in output
    assert "Traceback" not in output


def test_place_prints_the_workflow_as_yaml(run: Run) -> None:
    code, output = run("place", str(FIXTURE), "--cluster", "builtin:small", "--models", SHIPPED)
    assert code == 0
    assert yaml.safe_load(output)["kind"] == "Workflow"


def test_place_live_needs_a_kubeconfig(run: Run) -> None:
    code, output = run("place", str(FIXTURE), "--state", "live")
    assert code == 2 and "--kubeconfig" in output


def test_shadow_report_prints_agreement_and_estimate(run: Run, tmp_path: Path) -> None:
    path = journal(tmp_path / "j.jsonl")
    code, output = run("shadow", "report", "--journal", str(path), "--models", SHIPPED)
    assert code == 0, output
    assert "4 pods shadowed, 3 with an outcome: 2 on the same node (66.7%)" in output
    assert "mean JCT kube-default" in output
    code, output = run("shadow", "report", "--journal", str(path), "--models", SHIPPED,
                       "--json")
    assert code == 0 and json.loads(output)["agreed"] == 2
