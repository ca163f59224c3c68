"""Where a pinned client tool is: the one lookup for every tool the runner starts (tool-eval-bench, llama-benchy)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def tool_command(variable: str, name: str) -> str | None:
    """The tool named by $`variable`, else `name` on PATH or beside this Python; None when it is not installed."""
    found = os.environ.get(variable) or shutil.which(name)
    if found:
        return found
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else None
