"""`dagpilot validate PATH...`: every flaw of the training data, one Violation per flaw.

Each file's format is detected (validation.detect); workload files go through their reader and
the DAG and field rules of `core.job_draft.check`; recorded placements, machines, inventories
and metric series get the rules of `workloads.validation`. A reader's InvalidInput becomes one
`parse` violation; nothing a file holds makes the validator raise. Valid means no violation.

What cannot be read is never passed over: a folder that cannot be listed, a broken or looping
symbolic link, a FIFO or device (never opened), a file the OS refuses, and a path under which
nothing was checked are each one `Unread` line, and make the exit code 2 (1: a violation, 0:
all valid). Each file is read from disk once (`core.reading`, capped) and those bytes are
pinned while it is checked, so detection, the reader and the extra rules see the same bytes.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagpilot.core.config import LoaderSettings, ValidatorSettings
from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput, Unreadable
from dagpilot.core.job_draft import JobDraft, Violation, check
from dagpilot.core.reading.files import pinned, read_file
from dagpilot.core.reading.folders import Listing, Problem, path_kind, walk
from dagpilot.core.reading.limits import MAX_TABLE_BYTES
from dagpilot.workloads import READERS
from dagpilot.workloads.validation import (
    alibaba_rows,
    continuity,
    inventory,
    machines,
    placements,
    repairs,
)
from dagpilot.workloads.validation.detect import Detected, Kind, detect, detect_by_name

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Skipped:
    file: str
    reason: str


@dataclass(frozen=True, slots=True)
class Unread:
    """A path that could not be checked, and why (the OS refused it, or it held nothing)."""

    file: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: cannot check: {self.reason}"


@dataclass(frozen=True)
class FileResult:
    file: str
    kind: Kind
    violations: tuple[Violation, ...] = ()
    skipped: str | None = None  # why the file was not checked (documentation, derived data)
    unread: Unread | None = None  # what could not be read (this file, or one it needs)


@dataclass(frozen=True)
class Report:
    violations: tuple[Violation, ...]
    skipped: tuple[Skipped, ...]
    checked: tuple[str, ...]
    unread: tuple[Unread, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.violations and not self.unread

    @property
    def files_checked(self) -> int:
        return len(self.checked)

    @property
    def exit_code(self) -> int:
        """2 when anything could not be read (the check is incomplete), else 1 on a violation."""
        if self.unread:
            return 2
        return 0 if self.valid else 1


@dataclass(frozen=True)
class Summary:
    by_rule: dict[str, int]
    by_file: dict[str, int]
    by_file_and_rule: dict[tuple[str, str], int]


def data_files(paths: Iterable[Path]) -> list[Path]:
    """The files under each path (a file, or a folder walked recursively), in a stable order.

    Hidden folders (`.git`, `.venv`) are not walked; hidden files are listed, then skipped.
    """
    return [file for path in paths for file in _listing(path).files]


def _listing(path: Path) -> Listing:
    """The files under one argument, and what could not be listed (see core.reading.folders).

    A FIFO, device or broken link whose name the validator skips anyway (`.#lock` links,
    documentation) is no problem: it would not have been read. Folders are always walked.
    """
    try:
        kind = path_kind(path)
    except Unreadable as error:
        return Listing(problems=[Problem(path, error.message)])
    if kind == "missing":
        return Listing(problems=[Problem(path, "no such file or folder")])
    if kind == "file":
        return Listing(files=[path])
    listing = walk(path, enter=lambda name: not name.startswith("."))
    listing.problems = [problem for problem in listing.problems
                        if problem.folder or not _skipped_by_name(problem.path)]
    return listing


def _skipped_by_name(path: Path) -> bool:
    detected = detect_by_name(path.name)
    return detected is not None and detected.kind is Kind.DOCUMENTATION


def validate_paths(paths: Sequence[Path], settings: ValidatorSettings | None = None,
                   loader_settings: LoaderSettings | None = None,
                   on_file: Callable[[Path], None] | None = None, workers: int = 1) -> Report:
    """Validate every file under `paths`, on `workers` processes when more than one.

    `on_file` is called as each file is done, in file order (for a progress bar).
    """
    listings = [(path, _listing(path)) for path in paths]
    files = [file for _, listing in listings for file in listing.files]
    results = _results(files, settings or ValidatorSettings(), loader_settings or LoaderSettings(),
                       workers)
    violations: list[Violation] = []
    skipped: list[Skipped] = []
    checked: list[str] = []
    unread = [Unread(str(problem.path), problem.reason)
              for _, listing in listings for problem in listing.problems]
    attempted: set[str] = set()  # checked, or reported as unread
    for path, result in zip(files, results, strict=True):
        if on_file is not None:
            on_file(path)
        violations.extend(result.violations)
        if result.unread is not None:
            unread.append(result.unread)
            attempted.add(result.file)
        elif result.skipped is None:
            checked.append(result.file)
            attempted.add(result.file)
        else:
            skipped.append(Skipped(result.file, result.skipped))
    unread.extend(_nothing_checked(listings, attempted))
    return Report(tuple(violations), tuple(skipped), tuple(checked), tuple(unread))


def _nothing_checked(listings: list[tuple[Path, Listing]], attempted: set[str]) -> list[Unread]:
    """An argument under which no file was checked (an empty folder, documentation only) is
    not valid data: the validator says so rather than exit 0 for nothing. One whose files or
    folders could not be read is reported for those already."""
    found = []
    for path, listing in listings:
        if listing.problems or any(str(file) in attempted for file in listing.files):
            continue
        what = "an empty folder" if not listing.files else "no data file, only files skipped"
        found.append(Unread(str(path), f"nothing to check: {what}"))
    return found


def _results(files: list[Path], settings: ValidatorSettings, loader_settings: LoaderSettings,
             workers: int) -> Iterator[FileResult]:
    check_one = functools.partial(validate_file, settings=settings,
                                  loader_settings=loader_settings)
    if workers <= 1 or len(files) < 2:
        yield from map(check_one, files)
        return
    # spawn, not fork: polars' thread pool does not survive a fork
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        yield from pool.map(check_one, files)


def validate_path(path: Path, settings: ValidatorSettings | None = None,
                  loader_settings: LoaderSettings | None = None) -> list[Violation]:
    """The violations of one file, or of every file under one folder."""
    return list(validate_paths([path], settings, loader_settings).violations)


def validate_file(path: Path, settings: ValidatorSettings | None = None,
                  loader_settings: LoaderSettings | None = None) -> FileResult:
    """Detect a file's format and apply its rules; never raises on what the file holds."""
    settings = settings or ValidatorSettings()
    loader_settings = loader_settings or LoaderSettings()
    file = str(path)
    try:
        by_name = detect_by_name(path.name)
        if by_name is not None:  # documentation, or no reader for the name: nothing to read
            return _result(path, by_name, settings, loader_settings)
        with pinned(path, read_file(path, MAX_TABLE_BYTES)):
            return _result(path, detect(path), settings, loader_settings)
    except Unreadable as error:  # this file, or one its check needs (a process DAG)
        return FileResult(file, Kind.UNKNOWN, unread=Unread(error.file, error.message))
    except InvalidInput as error:
        return FileResult(file, Kind.UNKNOWN, (_parse_violation(error),))
    except Exception as error:  # a validator bug must not hide the other files' findings
        log.exception("validating %s failed", file)
        return FileResult(file, Kind.UNKNOWN, (Violation(
            file, "", "internal", f"the validator failed ({type(error).__name__}: {error}); "
            "please report this with the file"),))


def _result(path: Path, detected: Detected, settings: ValidatorSettings,
            loader_settings: LoaderSettings) -> FileResult:
    if detected.kind is Kind.UNKNOWN:
        return FileResult(str(path), detected.kind,
                          (Violation(str(path), "", "format.unknown", detected.reason),))
    checker = _CHECKERS.get(detected.kind)
    if checker is None:
        return FileResult(str(path), detected.kind, skipped=detected.reason)
    return FileResult(str(path), detected.kind,
                      tuple(checker(path, detected, settings, loader_settings)))


def summarize(violations: Iterable[Violation]) -> Summary:
    """Counts by rule, by file and by both, each sorted by name."""
    pairs = Counter((v.file, v.rule) for v in violations)
    by_rule: Counter[str] = Counter()
    by_file: Counter[str] = Counter()
    for (file, rule), count in pairs.items():
        by_rule[rule] += count
        by_file[file] += count
    return Summary(dict(sorted(by_rule.items())), dict(sorted(by_file.items())),
                   dict(sorted(pairs.items())))


def report_json(report: Report) -> dict[str, Any]:
    """The report as plain JSON values (for `dagpilot validate --json`)."""
    summary = summarize(report.violations)
    by_file: dict[str, dict[str, int]] = {}
    for (file, rule), count in summary.by_file_and_rule.items():
        by_file.setdefault(file, {})[rule] = count
    return {
        "valid": report.valid,
        "files_checked": report.files_checked,
        "skipped": [{"file": s.file, "reason": s.reason} for s in report.skipped],
        "unread": [{"file": u.file, "reason": u.reason} for u in report.unread],
        "violations": [{"file": v.file, "record": v.record, "rule": v.rule,
                        "severity": v.severity.value, "message": v.message}
                       for v in report.violations],
        "summary": {"by_rule": summary.by_rule, "by_file": by_file},
    }


Checker = Callable[[Path, Detected, ValidatorSettings, LoaderSettings], list[Violation]]


def _check_drafts(drafts: Sequence[JobDraft]) -> list[Violation]:
    """The DAG and field rules, and what the reader repaired on the way."""
    found = [violation for draft in drafts for violation in check(draft)]
    return found + repairs.repair_violations(drafts)


def _read_drafts(kind: str, path: Path,
                 settings: LoaderSettings) -> tuple[list[JobDraft], list[Violation]]:
    try:
        return READERS[kind](str(path), settings), []
    except Unreadable:
        raise  # not a flaw of the file: validate_file reports what could not be read
    except InvalidInput as error:
        return [], [_parse_violation(error)]


def _reader_checker(kind: str) -> Checker:
    def run(path: Path, _: Detected, __: ValidatorSettings,
            loader_settings: LoaderSettings) -> list[Violation]:
        drafts, problems = _read_drafts(kind, path, loader_settings)
        return problems + _check_drafts(drafts)
    return run


def _check_wfformat(path: Path, detected: Detected, _: ValidatorSettings,
                    loader_settings: LoaderSettings) -> list[Violation]:
    drafts, problems = _read_drafts("wfformat", path, loader_settings)
    return problems + _check_drafts(drafts) + machines.machine_violations(str(path),
                                                                          detected.document)


def _check_alibaba(path: Path, _: Detected, __: ValidatorSettings,
                   loader_settings: LoaderSettings) -> list[Violation]:
    drafts, problems = _read_drafts("alibaba", path, loader_settings)
    if problems:
        return problems
    return _check_drafts(drafts) + alibaba_rows.row_violations(path)


def _check_cws(path: Path, _: Detected, __: ValidatorSettings,
               loader_settings: LoaderSettings) -> list[Violation]:
    drafts, problems = _read_drafts("cws", path, loader_settings)
    found = problems + _check_drafts(drafts)
    cluster = placements.cluster_beside(path)
    if cluster is None:
        log.info("%s: no %s beside it, so no conservation check", path, placements.CLUSTER_FILE)
        return found
    try:
        allocatable = placements.read_cluster(cluster)
    except InvalidInput:
        return found  # reported when the cluster file itself is validated
    return found + placements.placement_violations(drafts, allocatable, cluster.name)


def _check_cluster(path: Path, *_: object) -> list[Violation]:
    return placements.cluster_violations(path)


def _sibling_inventories(path: Path) -> list[Path]:
    inventories: list[Path] = []
    siblings = walk(path.parent, lambda name: name.lower().endswith((".csv", ".csv.gz")),
                    recursive=False)  # what cannot be read is reported when it is validated
    for other in siblings.files:
        try:
            if detect(other).kind is Kind.NODES:
                inventories.append(other)
        except InvalidInput:
            continue  # reported when that file is validated
    return inventories


def _check_nodes(path: Path, *_: object) -> list[Violation]:
    siblings = [p for p in _sibling_inventories(path) if p != path]
    return inventory.node_violations(path, siblings)


def _check_pods(path: Path, *_: object) -> list[Violation]:
    return inventory.pod_violations(path, _sibling_inventories(path))


def _check_metrics_csv(path: Path, _: Detected, settings: ValidatorSettings,
                       *__: object) -> list[Violation]:
    return continuity.csv_violations(path, settings.max_gap_s)


def _check_prometheus(path: Path, detected: Detected, settings: ValidatorSettings,
                      *_: object) -> list[Violation]:
    return continuity.prometheus_violations(str(path), detected.document, settings.max_gap_s)


def _parse_violation(error: InvalidInput) -> Violation:
    field = f"field {shown(error.field)}: " if error.field else ""  # a field name is input too
    return Violation(error.file, error.record, "parse", f"{field}{error.message}")


_CHECKERS: dict[Kind, Checker] = {
    Kind.WFFORMAT: _check_wfformat,
    Kind.CWS_TRACE: _check_cws,
    Kind.ALIBABA: _check_alibaba,
    Kind.TPCH: _reader_checker("tpch"),
    Kind.ARGO: _reader_checker("argo"),
    Kind.CLUSTER: _check_cluster,
    Kind.NODES: _check_nodes,
    Kind.PODS: _check_pods,
    Kind.METRICS_CSV: _check_metrics_csv,
    Kind.PROMETHEUS: _check_prometheus,
}
