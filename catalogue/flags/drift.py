"""Flag drift: every recipe checked against every committed vLLM release snapshot.

A recipe's row says, per release, whether that vLLM's parser accepts its flags, and for a flag it
refuses, what that release calls it instead (same option, other spelling), or that it does not
have it yet / any more.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from catalogue.flags.checkers import ArgvChecker, SnapshotChecker
from catalogue.flags.snapshot import SNAPSHOT_DIR, FlagSnapshot, read_snapshot, version_key
from catalogue.flags.validate import Finding, flag_errors
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import Entry


@dataclass(frozen=True)
class DriftCell:
    """One release's verdict on one recipe."""

    version: str
    accepted: bool
    problems: tuple[str, ...] = ()
    """One short line per refused flag, e.g. '--no-enable-prefix-caching renamed to --disable-prefix-caching'."""

    @property
    def short_version(self) -> str:
        """'0.31.0' -> '0.31'; other versions unchanged."""
        parts = self.version.split(".")
        return ".".join(parts[:2]) if len(parts) == 3 and parts[2] == "0" else self.version


def release_snapshots(root: Path = SNAPSHOT_DIR) -> list[Path]:
    """Committed upstream snapshots (`vllm-<version>.json`), oldest release first."""
    return sorted(root.glob("vllm-*.json"), key=lambda p: version_key(p.stem.removeprefix("vllm-")))


def release_checkers(root: Path = SNAPSHOT_DIR) -> list[SnapshotChecker]:
    """A checker per committed release snapshot, oldest first."""
    return [SnapshotChecker(read_snapshot(path), f"snapshot {path.name}") for path in release_snapshots(root)]


def release_checker(version: str, root: Path = SNAPSHOT_DIR) -> SnapshotChecker:
    """The committed snapshot of one release: '0.31' or '0.31.0'."""
    wanted = version_key(version)
    for path in release_snapshots(root):
        if version_key(path.stem.removeprefix("vllm-")) == wanted:  # PEP 440: 0.31 == 0.31.0
            return SnapshotChecker(read_snapshot(path), f"snapshot {path.name}")
    known = ", ".join(p.stem.removeprefix("vllm-") for p in release_snapshots(root)) or "none"
    raise CatalogueError(
        root, f"no committed flag snapshot for vLLM {version} (committed: {known}; `nox -s snapshots -- {version}`)"
    )


def other_name(flag: str, snapshot: FlagSnapshot, others: list[FlagSnapshot]) -> str:
    """Why `snapshot` does not know `flag`, from the releases that do: renamed, not yet there, or gone."""
    knowing = [(other, spec) for other in others if (spec := other.option(flag)) is not None]
    if not knowing:
        return f"--{flag} unknown"
    _other, spec = knowing[-1]
    here = next((o for o in snapshot.options if o.dest == spec.dest), None)
    if here is not None:
        spelling = "--" + flag.lstrip("-").replace("_", "-")
        index = spec.spellings.index(spelling) if spelling in spec.spellings else 0
        longs = [s for s in here.spellings if s.startswith("--")]
        return f"--{flag} renamed to {longs[min(index, len(longs) - 1)]}"
    newer = all(version_key(o.vllm_version) > version_key(snapshot.vllm_version) for o, _ in knowing)
    return f"--{flag} not yet in this release" if newer else f"--{flag} removed"


def _problem(finding: Finding, checker: ArgvChecker, others: list[FlagSnapshot]) -> str:
    if finding.flag and finding.message.startswith("unknown flag"):
        return other_name(finding.flag, checker.snapshot, others)
    return (f"--{finding.flag}: " if finding.flag else "") + finding.message


def verdict_key(checker: SnapshotChecker, flags: Mapping[str, object]) -> tuple | None:
    """What a snapshot's verdict on these flag values depends on; None when a flag is unknown there.

    Per flag: how its option parses (`parse_shape`), and whether the value is among its choices, its
    registry's values and (for a JSON config) its keys. Snapshots with equal keys give the same verdict.
    """
    key = []
    for name, value in flags.items():
        facts = checker.option_facts(name)
        if facts is None:
            return None
        json_ok = facts.json_keys is None or (isinstance(value, dict) and all(k in facts.json_keys for k in value))
        key.append(
            (
                facts.shape,
                facts.choices is None or str(value) in facts.choices,
                facts.registry is None or str(value) in facts.registry,
                json_ok,
            )
        )
    return tuple(key)


def drift_row(
    entry: Entry, checkers: list[SnapshotChecker], known: dict[str, list[Finding]] | None = None
) -> list[DriftCell]:
    """The recipe's verdict per release (image-only flags are the image's business, not upstream's).

    `known`: errors already found for a version (the build's main check), reused instead of checking again.
    """
    snapshots = [c.snapshot for c in checkers]
    upstream = {n: v for n, v in entry.recipe.serving.flags.items() if n not in entry.recipe.serving.image_flags}
    seen: dict[tuple, tuple[bool, tuple[str, ...]]] = {}
    """Verdicts by verdict key: releases whose options for these flags are the same give the same verdict."""
    cells = []
    for checker in checkers:
        version = checker.snapshot.vllm_version
        key = verdict_key(checker, upstream)
        if key is not None and key in seen:
            cells.append(DriftCell(version, *seen[key]))
            continue
        others = [s for s in snapshots if s is not checker.snapshot]
        if known is not None and version in known:
            errors = [f for f in known[version] if f.level == "error" and "in " not in f.vllm.removeprefix("vLLM ")]
        else:
            errors = flag_errors(entry, checker)
        verdict = (not errors, tuple(_problem(f, checker, others) for f in errors))
        if key is not None:
            seen[key] = verdict
        cells.append(DriftCell(version, *verdict))
    return cells


def accepted_by(row: list[DriftCell]) -> list[str]:
    """Releases that accept the recipe, as short versions."""
    return [cell.short_version for cell in row if cell.accepted]
