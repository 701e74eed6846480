"""Kernel-log lines that explain a NotReady node: soft and hard lockups, hung tasks, RCU stalls
(kernel); NVMe timeouts, resets and block I/O errors (storage); NIC links going down (network).

Reads `dmesg`, `dmesg -T` and `journalctl -k` output alike: each pattern is searched anywhere in
the line, so any prefix (timestamps, host, `kernel:`) is fine. A link that came back up later
in the log is not reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from dagpilot.core.echo import printable
from dagpilot.ops.findings import Cause, Finding

EVIDENCE_LINES = 5  # per finding: the first lines, then a count of the rest


@dataclass(frozen=True, slots=True)
class Pattern:
    cause: Cause
    summary: str
    regex: re.Pattern[str]
    next_command: str


PATTERNS: tuple[Pattern, ...] = (
    Pattern("kernel", "soft lockup: a CPU ran kernel code without scheduling",
            re.compile(r"BUG: soft lockup - CPU#\d+ stuck for \d+s"),
            "journalctl -k -b | grep -B5 -A40 'soft lockup'  # the stuck task's stack"),
    Pattern("kernel", "hard lockup: a CPU stopped taking interrupts",
            re.compile(r"(?i)watchdog detected hard lockup on cpu"),
            "journalctl -k -b -1 | tail -200  # after a reboot: the previous boot's end"),
    Pattern("kernel", "hung tasks: tasks blocked in uninterruptible sleep",
            re.compile(r"INFO: task \S+ blocked for more than \d+ seconds"),
            "ps -eo pid,stat,wchan:32,cmd | awk '$2 ~ /D/'; cat /proc/PID/stack of each"),
    Pattern("kernel", "RCU stall: a CPU did not pass a quiescent state",
            re.compile(r"rcu: INFO: \S+ (?:self-)?detected stalls? on CPU"),
            "journalctl -k -b | grep -A30 'rcu: INFO'"),
    Pattern("storage", "NVMe command timeouts or controller resets",
            re.compile(r"nvme nvme\d+: (?:I/O \d+ QID \d+ timeout|controller is down|"
                       r"resetting controller|Device not ready|Removing after probe failure)"),
            "nvme smart-log /dev/nvmeX; nvme error-log /dev/nvmeX"),
    Pattern("storage", "block I/O errors",
            re.compile(r"(?:blk_update_request: )?(?:critical medium |critical target )?"
                       r"I/O error, dev \w+, sector \d+"),
            "smartctl -a /dev/DEVICE; iostat -x 5 3"),
    Pattern("storage", "file system errors or a remount read-only",
            re.compile(r"EXT4-fs error|XFS \(\S+\): (?:metadata I/O error|Corruption)|"
                       r"Remounting filesystem read-only"),
            "findmnt -o TARGET,OPTIONS | grep -w ro; dmesg | grep -i -e ext4 -e xfs"),
)

_LINK = re.compile(r"\b(?P<iface>[\w.@-]+): (?:\S+: )?(?:\w+ )?(?:NIC )?Link (?:is )?"
                   r"(?P<state>Down|Up|down|up)\b")
LINK_COMMAND = "ip -s link show {iface}; ethtool {iface}"


def findings(lines: Iterable[str]) -> list[Finding]:
    """Every pattern the log shows, with its lines; links down at the end of the log."""
    matched: dict[int, list[str]] = {}
    links: dict[str, list[str]] = {}  # interface -> its down lines, cleared when it comes up
    for raw in lines:
        line = raw.rstrip("\n")
        for index, pattern in enumerate(PATTERNS):
            if pattern.regex.search(line):
                matched.setdefault(index, []).append(line)
        link = _LINK.search(line)
        if link is not None:
            if link.group("state").lower() == "down":
                links.setdefault(link.group("iface"), []).append(line)
            else:
                links.pop(link.group("iface"), None)
    found = [Finding(PATTERNS[i].cause, f"{PATTERNS[i].summary} ({len(hits)} lines)",
                     _evidence(hits), PATTERNS[i].next_command)
             for i, hits in sorted(matched.items())]
    found += [Finding("network", f"link {iface} down (not up again in the log)",
                      _evidence(hits), LINK_COMMAND.format(iface=iface))
              for iface, hits in sorted(links.items())]
    return found


def _evidence(lines: list[str]) -> tuple[str, ...]:
    shown = tuple(printable(line) for line in lines[:EVIDENCE_LINES])
    more = len(lines) - EVIDENCE_LINES
    return (*shown, f"... and {more} more") if more > 0 else shown
