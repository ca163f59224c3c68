"""One verdict of the run policy, and the two ways a rule makes one (never; consent, with the recipe's reason)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from catalogue.models.terminal import printable
from catalogue.policy import rules

FindingClass = Literal["never", "consent", "note"]


class Declared(Protocol):
    """A consent the recipe declares (catalogue.models.recipe.Consent)."""

    option: str
    reason: str


@dataclass(frozen=True)
class PolicyFinding:
    """One verdict of the run policy about one option, variable or flag."""

    cls: FindingClass
    option: str
    """Its name, e.g. '--cap-add IPC_LOCK': also the name the owner passes to `--allow`."""
    why: str
    how: str
    """How to allow it and where, or what to do instead."""
    basis: str = ""
    """The rules it follows (CIS Docker Benchmark, Pod Security baseline, catalogue rule)."""
    source: str = ""
    """The file (or paste) the launch comes from."""
    field: tuple[str | int, ...] = ()
    """Where in the recipe, as a field path."""
    lineno: int | None = None
    reason: str | None = None
    """For a consent: the reason the recipe declares; None when it declares none."""
    runs_code: bool = False
    """It lets code of the recipe's choice run in the container (a plugin, a module path, an untrusted image, the
    model repository's code): the runner then mounts the HF cache's hub read-only (runner_mounts.hub_read_only)."""

    @property
    def is_error(self) -> bool:
        """Never, or a consent the recipe does not declare."""
        return self.cls == "never" or (self.cls == "consent" and self.reason is None)

    def line(self) -> str:
        """`<class>: <option>: <why> (<how>)`, one line: a recipe's text (its reason, a name) with its control
        characters escaped (catalogue.models.terminal.printable), so no finding rewrites the terminal."""
        return printable(f"{self.cls}: {self.option}: {self.why} ({self.how})")

    @property
    def where(self) -> str:
        """`file:line`, the file alone, or '' (a paste with no file)."""
        return f"{self.source}:{self.lineno}" if self.lineno else self.source

    def __str__(self) -> str:
        return f"{printable(self.where)}: {self.line()}" if self.where else self.line()


def consent(
    name: str, why: str, basis: str, declared: Mapping[str, str], field: tuple, runs_code: bool = False
) -> PolicyFinding:
    """A consent-class finding, declared when the recipe gives a reason for `name`."""
    reason = declared.get(name)
    how = rules.CONSENT_HOW.format(name=name)
    if reason is not None:
        how = f"declared: {reason}; the owner runs it with --allow '{name}'"
    return PolicyFinding("consent", name, why, how, basis, field=field, reason=reason, runs_code=runs_code)


def never(name: str, why: str, basis: str, field: tuple, how: str = rules.NEVER_HOW) -> PolicyFinding:
    """A never-class finding."""
    return PolicyFinding("never", name, why, how, basis, field=field)
