"""Did a run get worse than the one before it? Each level and figure against the newest earlier run of the same
workload, topology and hardware, outside that figure's noise band, with what differs between the two runs.

The band: ± 2 standard deviations of the earlier run where it measured repeats; otherwise the thresholds of
PyTorch's benchmark regression report for vLLM (throughput below 0.8x, latency above 1.2x of the baseline),
which a recipe may change (`sweep.regression`). The runner prints the report after a refresh; the recipe page
marks the regressed runs in its history."""

from __future__ import annotations

from dataclasses import dataclass

from catalogue.benchmark import BenchmarkRun, ImportedProvenance, LevelResult, MeasuredProvenance
from catalogue.metrics import BY_NAME, Metric
from catalogue.recipe import RegressionBand

CAPACITY = Metric("capacity_rps", "Capacity", "req/s", True, True, lambda _level: None)
"""The capacity search's result: compared when both runs searched under the same SLO."""

COMPARED = ("generation_tps", "total_tps", "prefill_tps", "ttft_mean_ms", "ttft_p99_ms", "itl_mean_ms", "e2e_mean_ms")
"""The figures compared: throughputs and latencies (not the one-second peak, a single bucket)."""


@dataclass(frozen=True)
class Change:
    """One figure of one level outside its noise band."""

    level: str
    """`c4`, or `ctx256` for a long-context level."""
    metric: Metric
    before: float
    after: float
    regressed: bool
    band: str
    """The band it left: '0.8x' or '± 2σ (12.3)'."""

    def line(self) -> str:
        """'c4 Generation: 210.5 → 140.2 tok/s (0.67x; band 0.8x)'."""
        ratio = self.after / self.before if self.before else float("inf")
        unit = f" {self.metric.unit}" if self.metric.unit else ""
        word = "regressed" if self.regressed else "improved"
        return (
            f"{word}: {self.level} {self.metric.label}: {self.before:,.1f} → {self.after:,.1f}{unit} "
            f"({ratio:.2f}x; band {self.band})"
        )


def _hardware(run: BenchmarkRun) -> tuple[object, ...]:
    p = run.provenance
    if isinstance(p, MeasuredProvenance):
        return (p.topology, len({n.host for n in p.nodes}) or 1, tuple(sorted({h.gpu or "" for h in p.hosts})))
    return ("imported",)


def baseline(runs: list[BenchmarkRun], run: BenchmarkRun) -> BenchmarkRun | None:
    """The newest run before `run` with the same workload key, topology and hardware."""
    if run.workload is None:
        return None
    earlier = [
        r
        for r in runs
        if r.recorded_at < run.recorded_at
        and r.workload is not None
        and r.workload.key == run.workload.key
        and _hardware(r) == _hardware(run)
        and r.levels
    ]
    return max(earlier, key=lambda r: r.recorded_at) if earlier else None


def _levels(run: BenchmarkRun) -> dict[str, LevelResult]:
    out = {f"c{lv.concurrency}": lv for lv in run.levels}
    out.update({f"ctx{lv.prompt_tokens}": lv for lv in run.long_context if lv.prompt_tokens})
    return out


def compare(before: BenchmarkRun, after: BenchmarkRun, band: RegressionBand) -> list[Change]:
    """Every level and figure both runs have, outside its band: regressions and improvements."""
    changes = []
    old_levels, new_levels = _levels(before), _levels(after)
    for name, new in new_levels.items():
        old = old_levels.get(name)
        if old is None:
            continue
        for metric in (BY_NAME[m] for m in COMPARED):
            a, b = metric.get(old), metric.get(new)
            if a is None or b is None or not a:
                continue
            change = _outside(name, metric, float(a), float(b), metric.spread(old) if metric.spread else None, band)
            if change:
                changes.append(change)
    old_cap, new_cap, slo = before.capacity, after.capacity, after.slo
    same_slo = slo is not None and before.slo is not None and before.slo.key == slo.key
    if slo is not None and same_slo and old_cap and new_cap and old_cap.rps and new_cap.rps:
        change = _outside(f"under {slo.describe()}", CAPACITY, old_cap.rps, new_cap.rps, None, band)
        if change:
            changes.append(change)
    return changes


def _outside(name: str, metric: Metric, a: float, b: float, std: float | None, band: RegressionBand) -> Change | None:
    if std:
        if abs(b - a) <= 2 * std:
            return None
        worse = b < a if metric.higher_is_better else b > a
        return Change(name, metric, a, b, worse, f"± 2σ ({2 * std:,.1f})")
    if metric.higher_is_better:
        low, high, shown = band.throughput_ratio, 1 / band.throughput_ratio, f"{band.throughput_ratio:g}x"
        if b < a * low:
            return Change(name, metric, a, b, True, shown)
        if b > a * high:
            return Change(name, metric, a, b, False, f"{high:.2f}x")
        return None
    high, low, shown = band.latency_ratio, 1 / band.latency_ratio, f"{band.latency_ratio:g}x"
    if b > a * high:
        return Change(name, metric, a, b, True, shown)
    if b < a * low:
        return Change(name, metric, a, b, False, f"{low:.2f}x")
    return None


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


@dataclass(frozen=True)
class Report:
    """A run against its baseline."""

    run: BenchmarkRun
    baseline: BenchmarkRun | None
    changes: list[Change]
    differences: list[str]

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changes if c.regressed]

    def text(self) -> str:
        """The refresh's closing report."""
        if self.baseline is None:
            return f"regression check: {self.run.stamp} has no earlier run of its workload, topology and hardware"
        head = f"regression check: {self.run.stamp} against {self.baseline.stamp}"
        if not self.changes:
            return f"{head}: every level within its noise band"
        lines = [f"{head}: {len(self.regressions)} regressed, {len(self.changes) - len(self.regressions)} improved"]
        lines += [f"  {c.line()}" for c in self.changes]
        lines += ["  what differs: " + ("; ".join(self.differences) or "nothing the runs record")]
        return "\n".join(lines)


def report(runs: list[BenchmarkRun], run: BenchmarkRun, band: RegressionBand) -> Report:
    """`run` against its baseline among `runs`."""
    base = baseline(runs, run)
    if base is None:
        return Report(run, None, [], [])
    return Report(run, base, compare(base, run, band), differences(base, run))
