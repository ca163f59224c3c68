"""Write snapshots/docker-run.json from the installed docker CLI's `docker run --help` (a maintainer's step)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalogue.models.atomic import write_text
from catalogue.policy.docker_run import SNAPSHOT, DockerRunOptions


def installed() -> DockerRunOptions:
    """The installed docker CLI's `docker run` options."""
    help_text = subprocess.run(["docker", "run", "--help"], capture_output=True, text=True, check=True).stdout
    version = subprocess.run(
        ["docker", "version", "--format", "{{.Client.Version}}"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return DockerRunOptions.from_help(help_text, version or "unknown")


if __name__ == "__main__":
    options = installed()
    write_text(SNAPSHOT, options.to_json())
    print(f"wrote {SNAPSHOT} ({len(options.takes_value)} options, docker {options.version})")
