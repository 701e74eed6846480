"""Flaws a reader repaired while reading, as it recorded them in its jobs' labels.

Readers keep loading a trace whose rows need repair (a parent reference that resolves to no
task is dropped, unfinished tasks are kept), and say so in labels. The repaired draft passes
the DAG rules, so the validator reports the label instead, once per job.
"""

from __future__ import annotations

from collections.abc import Sequence

from dagpilot.core.job_draft import JobDraft, Severity, Violation

# label -> (rule, what it means); a label with the value "0" reports nothing.
REPAIR_LABELS: dict[str, tuple[str, str]] = {
    "alibaba.dropped_parents": (
        "dag.unknown-parent",
        "{value} parent reference(s) in task_name name no task of the job; the reader drops them"),
    "alibaba.status": (
        "field.status",
        "not every task terminated ({value}): their durations and end times are not final"),
    "unrebuilt_edges": (
        "dag.unrebuilt",
        "{value} process-level dependencies could not be rebuilt between tasks"),
}


def repair_violations(drafts: Sequence[JobDraft]) -> list[Violation]:
    found: list[Violation] = []
    for draft in drafts:
        first = draft.records[0] if draft.records else f"job {draft.job_id}"
        for key, value in draft.labels:
            if key in REPAIR_LABELS and value not in ("", "0"):
                rule, meaning = REPAIR_LABELS[key]
                found.append(Violation(draft.file, first, rule,
                                       f"job {draft.job_id}: {meaning.format(value=value)}",
                                       Severity.WARNING))
    return found
