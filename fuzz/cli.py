"""`bench/fuzz.py --target NAME|all --mutations N --seed S --out DIR`: fuzz, then write
DIR/fuzz.json (counts per target) and, with --save-fixtures, the minimised failures."""

from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from fuzz import campaign, corpus
from fuzz.pool import Limits
from fuzz.sources import FUZZ_FIXTURES
from fuzz.targets import TARGETS


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    names = list(TARGETS) if options.target == "all" else options.target.split(",")
    unknown = [name for name in names if name not in TARGETS]
    if unknown:
        print(f"error: unknown target {unknown[0]!r}; known: {', '.join(TARGETS)}, all",
              file=sys.stderr)
        return 2
    limits = Limits(options.timeout, options.memory_mib << 20)
    options.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "version": 1, "seed": options.seed, "mutations_per_target": options.mutations,
        "timeout_s": options.timeout, "memory_cap_mib": options.memory_mib, "targets": {}}
    with tempfile.TemporaryDirectory(prefix="dagpilot-fuzz-") as scratch:
        if options.replay:
            return _replay(options.fixtures, Path(scratch), limits)
        for name in names:
            tally = campaign.fuzz(
                TARGETS[name], options.mutations, options.seed, Path(scratch) / name, limits,
                minimize_tests=options.minimize_tests if options.save_fixtures else 0,
                save_to=options.fixtures if options.save_fixtures else None,
                progress=functools.partial(_progress, name))
            report["targets"][name] = tally.as_json()
            _write(options.out / "fuzz.json", report)
            print(_line(name, tally), flush=True)
    return 0


def _replay(fixtures: Path, scratch: Path, limits: Limits) -> int:
    results = campaign.replay(corpus.load(fixtures), scratch, limits)
    for saved, result in results:
        print(f"{'FAIL' if result.failed else 'ok  '} {saved.path.name}: {result.kind} "
              f"{result.error_type} {result.where}")
    return 1 if any(result.failed for _, result in results) else 0


def _progress(name: str, done: int) -> None:
    if done % 250 == 0:
        print(f"  {name}: {done} mutations", file=sys.stderr, flush=True)


def _line(name: str, tally: campaign.Tally) -> str:
    failures = ", ".join(f"{kind} {tally.outcomes[kind]}" for kind in campaign.FAILURE_KINDS
                         if tally.outcomes[kind])
    return (f"{name:20} {tally.mutations} mutations, {tally.outcomes['accepted']} accepted, "
            f"{tally.outcomes['clean']} clean errors, failures: {failures or 'none'} "
            f"({len(tally.findings)} distinct), {tally.seconds:.0f} s")


def _write(path: Path, report: dict[str, Any]) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(report, indent=1) + "\n")
    temporary.replace(path)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench/fuzz.py", description=__doc__)
    parser.add_argument("--target", default="all",
                        help=f"all, or comma-separated: {', '.join(TARGETS)}")
    parser.add_argument("--mutations", type=int, default=2000, help="mutations per target")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    parser.add_argument("--out", type=Path, default=Path("bench/out/fuzz"),
                        help="folder for fuzz.json")
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="CPU seconds per input (wall clock: 10 times that)")
    parser.add_argument("--memory-mib", type=int, default=1024,
                        help="address space a worker may add to what it maps after its imports")
    parser.add_argument("--save-fixtures", action="store_true",
                        help="minimise each distinct failure, save it in the corpus (--fixtures)")
    parser.add_argument("--fixtures", type=Path, default=FUZZ_FIXTURES,
                        help="the regression corpus: where --save-fixtures writes, --replay reads")
    parser.add_argument("--minimize-tests", type=int, default=500, help="runs per minimisation")
    parser.add_argument("--replay", action="store_true",
                        help="run the saved regression corpus instead; exit 1 if any still fails")
    return parser
