"""deploy/ through the real API server's validation: every object, server-side dry run (no
object is stored). Namespaced objects go to a fresh namespace: a dry run cannot create the
dagpilot namespace they name, so they would all be refused as in a missing namespace."""

from __future__ import annotations

from dagpilot.sandbox import rest
from dagpilot.sandbox.state import SandboxState
from tests.deploy.manifests import CLUSTER_SCOPED, collection, in_namespace, render
from tests.live import kube
from tests.live.serve.setup import apply


def test_every_shipped_manifest_passes_a_server_side_dry_run(sandbox: SandboxState) -> None:
    api = kube.admin(sandbox)
    shipped = render()
    with kube.namespace(api, "deploy") as namespace:
        objects = in_namespace(shipped, namespace)
        answers = apply(api, objects, dry_run=True)
        assert [a["kind"] for a in answers] == [o["kind"] for o in shipped]
        for item in shipped:
            name = item["metadata"]["name"]
            if item["kind"] in CLUSTER_SCOPED:
                path = f"{collection(item)}/{name}"
                assert rest.request(api, "GET", path).status == 404, f"{path} was stored"
        stored = kube.items(api, f"/api/v1/namespaces/{namespace}/serviceaccounts")
        assert stored == []

