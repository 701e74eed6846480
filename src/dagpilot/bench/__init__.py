"""The benchmark harness: metrics, lower bounds, paired statistics, plots and `summary.json`.

`harness.run_benchmark` runs every (seed, scheduler) pair of a benchmark on the simulator and
writes the summary of DESIGN.md section 7; the other modules are the pieces it composes.
"""
