"""What this machine's GPUs are, asked of nvidia-smi itself: the tests that read a real host say "no GPU" where there
is no nvidia-smi and name the GPUs where there is one, so they hold on a CPU-only CI machine and on a GPU host alike."""

from __future__ import annotations

import shutil
import subprocess

NO_GPU = "no GPU"


def gpu_names() -> str:
    """The runner's word for this host's GPUs: 'no GPU' without nvidia-smi, else the distinct names nvidia-smi lists,
    sorted and joined with '; ' (as the passport and the sampler write them)."""
    if shutil.which("nvidia-smi") is None:
        return NO_GPU
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=60
    )
    names = sorted({line.strip() for line in out.stdout.splitlines() if line.strip()})
    return "; ".join(names) or NO_GPU
