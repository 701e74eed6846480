"""dagpilot's own mutation fuzzer (issue 14): seeds from the fixtures and the shared traces,
mutated, run through the `dagpilot` commands in a worker under a memory cap and a time limit.

    sources.py     where seed bytes come from (fixtures, ../shared/traces, models, generated)
    inputs.py      Seed, Case (payload + gzip wrap + companion files), materialise
    hostile.py     the hostile values, spelled per syntax
    structured.py  structure-aware mutations (JSON, YAML, TOML, CSV, zip)
    mutators.py    byte mutations, stacking, wrapping; one seeded random.Random per case
    targets.py     TARGETS: name, seeds, parser, gzip; one entry per format
    parsers.py     what a target runs on an input (the CLI in process; the registry calls)
    worker.py      the worker process: imports once, caps RLIMIT_AS, classifies outcomes
    pool.py        the parent's side: time limit, kill and restart, signals
    minimize.py    ddmin on lines, then bytes
    corpus.py      minimised failures saved as fixtures (tests/fixtures/fuzz/<target>/)
    campaign.py    one target's run: seeds, N mutations, tallies, minimise, save, replay
    cli.py         `bench/fuzz.py`: the long-running form, counts as JSON

The parent process never imports dagpilot: only workers do, so a crash is theirs alone.
"""
