"""`catalogue flags dump`: write the installed vLLM's flag snapshot (also run inside images)."""

from __future__ import annotations

from pathlib import Path

from catalogue.flags.extract import extract_snapshot
from catalogue.flags.snapshot import SNAPSHOT_DIR, image_snapshot_path, write_snapshot


def run_dump(out: Path | None, image: str | None) -> int:
    """Extract and write the snapshot."""
    snapshot = extract_snapshot(image=image)
    if out is None:
        out = image_snapshot_path(image) if image else SNAPSHOT_DIR / f"vllm-{snapshot.vllm_version}.json"
    write_snapshot(snapshot, out)
    print(f"wrote {out}: {len(snapshot.options)} options, vLLM {snapshot.vllm_version}")
    return 0
