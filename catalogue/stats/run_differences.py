"""What differs between two runs of one workload, in words: the facts of a set-up whose change is worth naming
beside a regression (vLLM, image, digest, model revision, flags, workload)."""

from __future__ import annotations

from catalogue.models.benchmark import BenchmarkRun, ImportedProvenance


def _setup(run: BenchmarkRun) -> dict[str, object]:
    """The facts of a run whose change is worth naming."""
    p = run.provenance
    flags: frozenset[str] | None = None
    digest = revision = None
    if not isinstance(p, ImportedProvenance):
        serve = p.serve_command[p.serve_command.index("serve") + 1 :] if "serve" in p.serve_command else []
        flags = frozenset(flag_items(serve))
        digest = ", ".join(sorted({h.image_digest or h.image_id or "" for h in p.hosts} - {""})) or None
        revision = ", ".join(sorted({h.model_revision or "" for h in p.hosts} - {""})) or None
    return {
        "vLLM": p.vllm_version,
        "image": p.image,
        "image digest": digest,
        "model revision": revision,
        "flags": flags,
        "workload": run.workload.describe() if run.workload else None,
    }


def flag_items(serve: list[str]) -> list[str]:
    """`--max-num-seqs 1` as one item, so a changed value shows as a changed flag (ports, ranks, addresses and a
    pinned revision excepted: they differ between hosts, not between set-ups)."""
    out, i = [], 0
    while i < len(serve):
        word = serve[i]
        if word.startswith("--"):
            value = serve[i + 1] if i + 1 < len(serve) and not serve[i + 1].startswith("--") else None
            if word not in ("--port", "--node-rank", "--master-addr", "--revision"):
                out.append(f"{word} {value}" if value is not None else word)
            i += 2 if value is not None else 1
        else:
            i += 1
    return out


def differences(before: BenchmarkRun, after: BenchmarkRun) -> list[str]:
    """'vLLM 0.31.0 → 0.32.0', 'flags: +--max-num-seqs 1 −--max-num-seqs 256', ... (only what both runs state)."""
    old, new = _setup(before), _setup(after)
    out = [
        f"{name} {old[name]} → {new[name]}"
        for name in ("vLLM", "image", "image digest", "model revision", "workload")
        if old[name] is not None and new[name] is not None and old[name] != new[name]
    ]
    if isinstance(old["flags"], frozenset) and isinstance(new["flags"], frozenset) and old["flags"] != new["flags"]:
        added = " ".join(f"+{f}" for f in sorted(new["flags"] - old["flags"]))
        removed = " ".join(f"−{f}" for f in sorted(old["flags"] - new["flags"]))
        out.append("flags: " + " ".join(x for x in (added, removed) if x))
    return out
