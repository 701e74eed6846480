"""A fuzzing run of one target: its seeds as they are, then N mutations, every case through
one persistent worker; failures grouped by signature, optionally minimised and saved."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzz import corpus, minimize
from fuzz.inputs import Case, Seed, materialise
from fuzz.mutators import case_rng, mutate
from fuzz.pool import Limits, Result, Signature, Worker
from fuzz.targets import TARGETS, Target

FAILURE_KINDS = ("exception", "memory", "hang", "signal")
# each test of these costs a worker restart (and a hang the whole time limit): fewer tests
SLOW_TESTS = {"memory": 80, "signal": 80, "hang": 25}
MINIMIZE_SECONDS = 180.0  # per failure: tests of large inputs take seconds each


@dataclass
class Finding:
    """One distinct failure: the first case that showed it, and how often it came up."""

    result: Result
    case: Case
    found: dict[str, Any]
    count: int = 1
    fixture: str | None = None


@dataclass
class Tally:
    target: str
    mutations: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    flags: Counter[str] = field(default_factory=Counter)
    seeds: Counter[str] = field(default_factory=Counter)
    findings: dict[Signature, Finding] = field(default_factory=dict)
    seconds: float = 0.0
    seconds_by_kind: dict[str, float] = field(default_factory=dict)
    worker_starts: int = 0

    @property
    def failures(self) -> int:
        return sum(self.outcomes[kind] for kind in FAILURE_KINDS)

    def add(self, result: Result, case: Case, found: dict[str, Any]) -> None:
        self.outcomes[result.kind] += 1
        self.flags.update(result.flags)
        if not result.failed:
            return
        if result.signature in self.findings:
            self.findings[result.signature].count += 1
        else:
            self.findings[result.signature] = Finding(result, case, found)

    def as_json(self) -> dict[str, Any]:
        running = sum(self.seconds_by_kind.values())  # the mutations' own time, not minimising
        return {
            "mutations": self.mutations,
            "accepted": self.outcomes["accepted"], "clean_errors": self.outcomes["clean"],
            "failures": {kind: self.outcomes[kind] for kind in FAILURE_KINDS},
            "flags": dict(self.flags), "seeds": dict(self.seeds),
            "seconds": round(self.seconds, 1),
            "seconds_by_outcome": {kind: round(spent, 1)
                                   for kind, spent in self.seconds_by_kind.items()},
            "cases_per_s": round(self.mutations / running, 1) if running else None,
            "worker_starts": self.worker_starts,
            "distinct_failures": [
                {**finding.result.as_json(), "count": finding.count, "found": finding.found,
                 "fixture": finding.fixture} for finding in self.findings.values()]}


def fuzz(target: Target, mutations: int, run_seed: int, scratch: Path, limits: Limits, *,
         minimize_tests: int = 0, save_to: Path | None = None,
         progress: Callable[[int], None] | None = None) -> Tally:
    """Run the seeds, then `mutations` cases; minimise and save each distinct failure when
    asked. Case i is drawn from case_rng(run_seed, target, i) alone."""
    started = time.perf_counter()
    tally = Tally(target.name)
    seeds = target.seeds()
    if not seeds:
        raise ValueError(f"target {target.name} has no seed here")
    warmup = materialise(_as_case(seeds[0]), scratch / "warmup")
    with Worker(target.parser, scratch / "worker", limits, warmup) as worker:
        for seed in seeds:
            case = _as_case(seed)
            result = run(worker, case, scratch)
            tally.seeds[result.kind] += 1
            tally.add(result, case, {"seed": seed.source, "mutation": None})
        for index in range(mutations):
            rng = case_rng(run_seed, target.name, index)
            seed = rng.choice(seeds)
            case, operations = mutate(seed, seeds, target.gzip, rng)
            before = time.perf_counter()
            result = run(worker, case, scratch)
            spent = time.perf_counter() - before
            tally.seconds_by_kind[result.kind] = tally.seconds_by_kind.get(result.kind, 0) + spent
            tally.add(result, case, {
                "run_seed": run_seed, "mutation": index, "seed": seed.source,
                "operations": operations})
            tally.mutations += 1
            if progress is not None:
                progress(index + 1)
        if minimize_tests and save_to is not None:
            for finding in tally.findings.values():
                smallest = minimized(worker, finding, scratch, minimize_tests)
                path = corpus.save(save_to, target.name, smallest, finding.result, finding.found)
                finding.fixture = path.as_posix() if path else (
                    f"not saved: {len(smallest.payload):,} bytes after minimisation")
        tally.worker_starts = worker.starts
    tally.seconds = time.perf_counter() - started
    return tally


def _syntax(name: str) -> str:
    return "json" if name.endswith(".json") else ""


def _as_case(seed: Seed) -> Case:
    return Case(seed.data(), seed.name, "", seed.companions)


def run(worker: Worker, case: Case, scratch: Path) -> Result:
    return worker.run(materialise(case, scratch / "case"))


def minimized(worker: Worker, finding: Finding, scratch: Path, tests: int) -> Case:
    """The finding's case made as small as ddmin gets it while it keeps its signature."""
    tests = min(tests, SLOW_TESTS.get(finding.result.kind, tests))
    case = finding.case

    def still_fails(candidate: Case) -> bool:
        return run(worker, candidate, scratch).signature == finding.result.signature

    if case.wrap.startswith("bomb:"):
        members = int(case.wrap.partition(":")[2])
        while members > 1 and still_fails(Case(case.payload, case.name, f"bomb:{members // 2}",
                                               case.companions)):
            members //= 2
        case = Case(case.payload, case.name, f"bomb:{members}", case.companions)
    payload = minimize.minimize(case.payload, lambda data: still_fails(case.with_payload(data)),
                                tests, _syntax(case.name), MINIMIZE_SECONDS)
    return case.with_payload(payload)


def replay(saved: Sequence[corpus.Saved], scratch: Path,
           limits: Limits) -> list[tuple[corpus.Saved, Result]]:
    """Each saved case run again, one worker per target."""
    results: list[tuple[corpus.Saved, Result]] = []
    for name in sorted({entry.target for entry in saved}):
        target = TARGETS[name]
        warmup = materialise(_as_case(target.seeds()[0]), scratch / name / "warmup")
        with Worker(target.parser, scratch / name / "worker", limits, warmup) as worker:
            results.extend((entry, run(worker, entry.case, scratch / name))
                           for entry in saved if entry.target == name)
    return results
