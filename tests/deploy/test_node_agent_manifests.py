"""deploy/node-agent as shipped: a DaemonSet on every node (every taint tolerated), host
network for the ping mesh, the host's trees read-only, no API rights, requests and limits, and
arguments the CLI takes (test_deploy_dry_run.py passes it through the API server)."""

from __future__ import annotations

from typer.testing import CliRunner

from dagpilot.cli import app
from tests.deploy.manifests import named, render


def test_the_daemonset_runs_everywhere_read_only_with_valid_arguments() -> None:
    objects = render()
    daemonset = named(objects, "DaemonSet", "dagpilot-node-agent")
    pod = daemonset["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True
    assert pod["tolerations"] == [{"operator": "Exists"}]
    [container] = pod["containers"]
    assert set(container["resources"]["requests"]) == set(container["resources"]["limits"]) \
        == {"cpu", "memory"}
    assert all(mount["readOnly"] for mount in container["volumeMounts"])
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert container["args"][0] == "node-agent"
    help_text = CliRunner().invoke(app, ["node-agent", "--help"], terminal_width=200).output
    for argument in container["args"][1:]:
        assert argument.split("=", 1)[0] in help_text
    assert named(objects, "ServiceAccount", "dagpilot-node-agent")[
        "automountServiceAccountToken"] is False
    bound = {s.get("name") for o in objects if o["kind"].endswith("RoleBinding")
             for s in o.get("subjects", [])}
    assert "dagpilot-node-agent" not in bound  # no API rights at all
