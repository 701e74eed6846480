"""Serving dagpilot to a live cluster (docs/SERVING.md).

The Argo webhook and signed submissions (`dagpilot serve webhook`, `dagpilot submit`):
signature.py keys.py replay.py watched_file.py (who may submit), run_history.py admission.py
(the mutation), workflow_check.py submission.py (the endpoint's checks, in order), tls.py
https_server.py webhook_app.py (mTLS and routes), webhook_process.py (assembly),
submit_client.py (the client).
"""
