"""The rules of `dagpilot validate` beyond the DAG and field rules of `core.job_draft`.

One module per rule family: resource conservation on nodes, time continuity of metric series,
node inventories, and the checks that need a format's raw records (recorded placements, machines).
`dagpilot.workloads.validate` finds the files, detects their formats and runs these rules.
"""
