"""The gates on a host's state, before the sweep: each host's passport against the platform profile's
thresholds. A failed gate refuses in one line naming the host, the value and the fix, unless the owner passed
`--allow-state <gate>`: then the run goes ahead and carries the line as a warning (provenance.allowed_state).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from catalogue.models.benchmark import HostFacts
from catalogue.models.loading import Entry
from catalogue.models.passport import GATE_NAMES, Gates, HostPassport, Passport, gate_failures
from runner.machine.passport import PassportUnread, read_all, read_each
from runner.planning.plan import Plan
from runner.state import Progress


@dataclass
class StateCheck:
    """What the gates found: lines that refuse the run and lines the owner allowed."""

    refused: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)


def unknown_gates(allow_state: list[str]) -> list[str]:
    """`--allow-state` values that name no gate."""
    return [g for g in allow_state if g not in GATE_NAMES]


def check_state(
    passports: dict[str, Passport], gates: Gates | None, platform: str | None, allow_state: list[str]
) -> StateCheck:
    """Every host's passport against the gates; with no gates in the profile nothing is checked."""
    result = StateCheck()
    if gates is None or platform is None:
        return result
    for host, passport in passports.items():
        for gate, line in gate_failures(host, passport, gates, platform):
            (result.allowed if gate in allow_state else result.refused).append(line)
    return result


def with_passports(hosts: list[HostFacts], before: dict[str, Passport], after: dict[str, Passport]) -> list[HostFacts]:
    """The hosts' provenance with each one's passport added."""
    return [
        h.model_copy(update={"passport": HostPassport(before=before.get(h.host), after=after.get(h.host))})
        if h.host in before or h.host in after
        else h
        for h in hosts
    ]


def gate_state(plan: Plan, entry: Entry, progress: Progress, allow_state: list[str]) -> bool:
    """Read every host's passport and hold it to the profile's gates; False (after printing why) refuses."""
    wrong = unknown_gates(allow_state)
    if wrong:
        print(
            f"--allow-state {wrong[0]}: no such gate (gates: {', '.join(GATE_NAMES)})",
            file=sys.stderr,
        )
        return False
    try:
        progress.passports_before = read_all(plan)
    except PassportUnread as exc:
        print(f"preflight failed, nothing started:\n{exc}", file=sys.stderr)
        return False
    platform = entry.platform
    found = check_state(progress.passports_before, platform.gates if platform else None, plan.platform, allow_state)
    if found.refused:
        print("refused by the state of the host, nothing started:", *found.refused, sep="\n", file=sys.stderr)
        return False
    for line in found.allowed:
        print(f"warning (--allow-state): {line}", file=sys.stderr)
    progress.allowed_state = found.allowed
    return True


def read_after(plan: Plan, progress: Progress) -> None:
    """Every host's passport once the servers stopped; a host that cannot be read is a note, not a failure."""
    if not progress.passports_before:
        return
    progress.passports_after, failed = read_each(plan)
    for line in failed:
        progress.note(f"passport after: {line.split(':', 1)[0]}", f"passport after: {line}")
