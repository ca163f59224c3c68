"""The bind mounts the runner adds to a server container, in one place: the runner builds them from here (the
compile cache in runner/hosts/containers.py, the Hugging Face cache's hub in catalogue/models/platform.py's profile
part, read-only where hub_read_only says so) and the run policy judges the paths a server writes against them
(catalogue/policy/written_paths.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from catalogue.policy.flag_classes import resolve

COMPILE_CACHE = "/catalogue-cache"
"""Where a server container sees its host's compile-cache folder (VLLM_CACHE_ROOT, TORCHINDUCTOR_CACHE_DIR)."""
COMPILE_CACHE_HOST = "~/.cache/catalogue/compile"
"""vLLM's and torch.compile's caches on this machine, one folder per image and recipe below it (mode 0700)."""
COMPILE_CACHE_SHOWN = COMPILE_CACHE_HOST + "/<image>/<recipe>"
"""The compile cache's host folder as a finding names it before a run (the image and recipe fill it in)."""
READ_ONLY = "ro"
"""The mode word of a bind the container may read and not write."""
OFFLINE_WORDS = ("1", "ON", "YES", "TRUE")
"""The values of HF_HUB_OFFLINE that huggingface_hub reads as true (its constants.py, upper-cased)."""


def hub_target(container_home: str) -> str:
    """Where a container sees the Hugging Face cache's `hub` folder, given the cache's folder there (its HF_HOME)."""
    return container_home.rstrip("/") + "/hub"


def hub_volume(host_home: str, container_home: str, read_only: bool) -> list[str]:
    """The `-v` words of the hub bind: the hub folder only (the cache's `token` file stays on the host)."""
    mode = f":{READ_ONLY}" if read_only else ""
    return ["-v", f"{host_home.rstrip('/')}/hub:{hub_target(container_home)}{mode}"]


def runner_binds(hf_cache: Any) -> tuple[tuple[str, str], ...]:
    """(host folder, container folder) of every bind the runner adds to a server container: the compile cache, and
    the hub of the platform profile's Hugging Face cache (`hf_cache`: catalogue.models.platform.HfCache, or None)."""
    out = [(COMPILE_CACHE_SHOWN, COMPILE_CACHE)]
    if hf_cache is not None:
        out.append((f"{hf_cache.host.rstrip('/')}/hub", hub_target(hf_cache.container)))
    return tuple(out)


def hub_read_only(flags: Mapping[str, Any], env: Mapping[str, str], runs_code: Sequence[str] = ()) -> str | None:
    """Why the runner mounts the hub read-only for these `vllm serve` flags and container variables; None when it
    mounts it read-write (a model download fills it). Read-only when the server may run code the owner did not
    choose: the model repository's (`--trust-remote-code`, under any spelling vLLM's parser reads as it), or the
    recipe's (`runs_code`: the names of the run policy's findings that load code, catalogue.policy.check.code_options:
    a plugin, a module path, an image off the trust list); that code must not rewrite other models' files in the
    owner's cache. Read-only too when the recipe runs offline (HF_HUB_OFFLINE): nothing is downloaded."""
    for name, value in flags.items():
        if resolve(name).name == "trust-remote-code" and value not in (False, None, "false", "False", "0"):
            return "--trust-remote-code runs the model repository's code, which must not rewrite other models' files"
    if runs_code:
        return f"{runs_code[0]} runs code the recipe chooses, which must not rewrite other models' files"
    if str(env.get("HF_HUB_OFFLINE", "")).strip().upper() in OFFLINE_WORDS:
        return "HF_HUB_OFFLINE: the server downloads nothing"
    return None
