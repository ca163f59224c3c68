"""Did a run get worse than the runs before it? Each level and figure against the median of a window of earlier runs of
the same workload, topology and hardware (ordered by when they were measured), with what differs between the run and
the newest of them.

A figure has changed by the band rules of catalogue.stats.regression_rules: out of the recipe's ratio band around the
median, out of the band of most of the window's runs, beyond three MADs of them, repeated when inside the squared band,
or a drift against the oldest run. A tail percentile is judged only from enough requests to be more than their
maximum. A level whose tokens reached the client in bursts (catalogue.stats.engine_timing) is judged on the engine's
clock alone (its mean TTFT and TPOT from vLLM's /metrics), and no earlier such level is a baseline for the client's
latencies. A baseline is never one run file picked over the others: an earlier run without a passport calibration is
no baseline of one with it, the levels of this machine state set it only when they are most of the earlier levels, and
when most earlier runs were in another state they are read anyway with MAX_GRANT granted (the image takes the
calibration). The runner prints the report after a refresh; the recipe page marks the
regressed runs in its history."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, replace

from catalogue.models.benchmark import BenchmarkRun, LevelResult, MeasuredProvenance
from catalogue.models.recipe import RegressionBand
from catalogue.stats.engine_timing import level_bursts
from catalogue.stats.machine_speed import (
    MAX_GRANT,
    across_states,
    factors_text,
    far_state,
    granted,
    no_passport,
    other_state,
    reads_state,
    same_state_known,
    state_factor,
)
from catalogue.stats.metrics import BY_NAME, ENGINE_CLOCK, Metric, p99_withheld
from catalogue.stats.regression_rules import Change, agreeing, disagree, outside
from catalogue.stats.regression_samples import within_sampling_noise
from catalogue.stats.run_differences import differences

CAPACITY = Metric("capacity_rps", "Capacity", "req/s", True, True, lambda _level: None)
"""The capacity search's result: compared when both runs searched under the same SLO."""

COMPARED = ("generation_tps", "total_tps", "prefill_tps", "ttft_mean_ms", "ttft_p99_ms", "itl_mean_ms", "e2e_mean_ms")
"""The figures compared: throughputs and latencies (not the one-second peak, a single bucket)."""
TIMED = frozenset({"prefill_tps", "ttft_mean_ms", "ttft_p99_ms", "itl_mean_ms", "e2e_mean_ms"})
"""The figures read off the client's clock per request: an earlier level whose tokens arrived in bursts is no
baseline for them (a new such level is judged on the engine's clock: metrics.ENGINE_CLOCK)."""
WINDOW = 5
"""How many earlier comparable runs the baseline's median takes."""


def _hardware(run: BenchmarkRun) -> tuple[object, ...]:
    p = run.provenance
    if isinstance(p, MeasuredProvenance):
        return (p.topology, len({n.host for n in p.nodes}) or 1, tuple(sorted({h.gpu or "" for h in p.hosts})))
    return ("imported",)


def _measured(run: BenchmarkRun) -> tuple:
    """When a run was measured (an import: its source's date), then when it was recorded."""
    return (run.measured_on or run.recorded_at.date(), run.recorded_at)


def comparable(runs: list[BenchmarkRun], run: BenchmarkRun) -> list[BenchmarkRun]:
    """Every run measured before `run` with the same workload key, topology and hardware, oldest first."""
    if run.workload is None:
        return []
    earlier = [
        r
        for r in runs
        if r is not run
        and _measured(r) < _measured(run)
        and r.workload is not None
        and r.workload.key == run.workload.key
        and _hardware(r) == _hardware(run)
        and r.levels
    ]
    return sorted(earlier, key=_measured)


def window(runs: list[BenchmarkRun], run: BenchmarkRun, size: int = WINDOW) -> list[BenchmarkRun]:
    """Up to `size` comparable runs measured on the machine in the same state (catalogue.stats.machine_speed), oldest
    first; when most of the newest were in another state, those too (each granted MAX_GRANT: `_split_by_state`)."""
    kept, _left_out, granted = _split_by_state(runs, run, size)
    return sorted([*kept, *granted], key=_measured)


def _split_by_state(
    runs: list[BenchmarkRun], run: BenchmarkRun, size: int
) -> tuple[list[BenchmarkRun], list[str], list[BenchmarkRun]]:
    """(the runs of this machine state, why each of the `size` newest comparable runs left out was, the runs of
    another state read anyway). A run with no passport calibration is never a baseline of one that has one. When runs
    of another state are most of the `size` newest, a state is no longer a reason to leave them out: the machine's
    own calibration may be what is off (the image takes it), so they are compared with the most a machine state
    explains granted (MAX_GRANT), and a change beyond that is judged. A majority of earlier runs, never one run
    picked because its claim of state matched, sets the baseline. A simulated run's window is its newest `size`
    comparable runs, whatever their states (machine_speed.reads_state)."""
    if not reads_state(run):
        return comparable(runs, run)[-size:], [], []
    kept: list[BenchmarkRun] = []
    reasons: list[tuple[str, bool]] = []
    other: list[BenchmarkRun] = []
    recent = 0
    for position, earlier in enumerate(reversed(comparable(runs, run))):
        unknown = no_passport(run, earlier)
        why = unknown or other_state(run, earlier)
        if why is None:
            kept.append(earlier)
            recent += position < size
        elif position < size:
            reasons.append((why, unknown is None))
            other += [] if unknown else [earlier]
        if len(kept) == size:
            break
    if len(other) > recent:
        beyond = f"compared only beyond what the machine's state explains ({MAX_GRANT:g}x): "
        return kept[::-1], [beyond + why if state else why for why, state in reasons][::-1], other[::-1]
    return kept[::-1], [why for why, _ in reasons][::-1], []


def baseline(runs: list[BenchmarkRun], run: BenchmarkRun) -> BenchmarkRun | None:
    """The newest run of the window: what the differences are named against."""
    found = window(runs, run)
    return found[-1] if found else None


def _levels(run: BenchmarkRun) -> dict[str, LevelResult]:
    out = {f"c{lv.concurrency}": lv for lv in run.levels}
    out.update({f"ctx{lv.prompt_tokens}": lv for lv in run.long_context if lv.prompt_tokens})
    return out


@dataclass(frozen=True)
class Row:
    """One figure of one level against its window: the outcome, whatever it is."""

    level: str
    metric: Metric
    median: float | None
    """The window's median; None when no earlier run has the figure."""
    value: float | None
    outcome: str
    """'regressed', 'improved', 'within noise' or 'not enough data'."""
    why: str = ""
    """For 'not enough data' and changes: the reason, or the band left."""
    change: Change | None = None
    withheld: bool = False
    """Not judged, and listed so: a tail percentile from too few requests, a level in bursts, or a figure inside what
    the machine's state explains."""


def rows(
    earlier: list[BenchmarkRun], after: BenchmarkRun, band: RegressionBand, other_state: tuple[BenchmarkRun, ...] = ()
) -> list[Row]:
    """Every level and figure of `after` against the window's median, with its outcome; the runs of `other_state`
    (in `earlier` too) are granted the most a machine state explains."""
    out: list[Row] = []
    old_levels = [(_levels(run), any(run is o for o in other_state)) for run in earlier]
    for name, new in _levels(after).items():
        burst = level_bursts(new)
        baseline = _baseline_levels(new, name, old_levels, reads_state(after))
        if not baseline and any(name in lv for lv, _ in old_levels):
            far = far_state(new)
            out += [Row(name, BY_NAME[m], None, None, "not enough data", far, withheld=True) for m in COMPARED]
            continue
        if burst:  # the stall idled a closed loop's server too: its throughput measured the stall as well
            out += [
                Row(name, BY_NAME[m], None, float(v), "not enough data", burst, withheld=True)
                for m in COMPARED
                if (v := BY_NAME[m].get(new)) is not None
            ]
        for metric in ENGINE_CLOCK if burst else [BY_NAME[m] for m in COMPARED]:
            if metric.name == "ttft_p99_ms" and (why := p99_withheld(new)):
                out.append(Row(name, metric, None, None, "not enough data", why, withheld=True))
                continue
            b = metric.get(new)
            if b is None:
                continue
            pairs = [
                (lv, f)
                for lv, f in baseline
                if metric.get(lv) is not None and not (metric.name in TIMED and level_bursts(lv))
            ]
            olds, factors = [p[0] for p in pairs], [p[1] for p in pairs]
            values = [float(metric.get(lv)) for lv in olds]  # type: ignore[arg-type]
            if not values or not statistics.median(values):
                out.append(Row(name, metric, None, float(b), "not enough data", "no earlier run has it"))
                continue
            if split := disagree(metric, values, band):
                out.append(Row(name, metric, statistics.median(values), float(b), "not enough data", split))
                continue
            row = _row(name, new, metric, values, float(b), band, factors)
            read = [olds[i] for i in agreeing(metric, values, band)]  # not one far-off run file
            if row.change is not None and (why := within_sampling_noise(metric, new, read)):
                row = Row(name, metric, row.median, row.value, "within noise", why)
            out.append(row)
    capacity = _capacity(earlier, after, band)
    out += [Row(c.level, c.metric, c.before, c.after, _outcome(c), c.band, c) for c in capacity]
    return out


def _row(
    name: str,
    new: LevelResult,
    metric: Metric,
    values: list[float],
    b: float,
    band: RegressionBand,
    factors: list[float],
) -> Row:
    """The figure against the window; across machine states (`factors` above 1), against the earlier values moved
    toward it by what their states' difference explains (machine_speed.granted)."""
    median = statistics.median(values)
    across = max(factors, default=1.0) > 1
    change = outside(name, metric, granted(values, factors, b) if across else values, b, band)
    if change is None and across:
        return Row(name, metric, median, b, "not enough data", across_states(new, factors), withheld=True)
    if change is None:
        return Row(name, metric, median, b, "within noise")
    if across:  # its figures as the rules saw them: the earlier ones granted the machine's difference
        change = replace(change, band=f"{change.band}; earlier figures granted the machine's {factors_text(factors)}")
    return Row(name, metric, median, b, _outcome(change), change.band, change)


def _baseline_levels(
    new: LevelResult, name: str, old_levels: list[tuple[dict[str, LevelResult], bool]], by_state: bool = True
) -> list[tuple[LevelResult, float]]:
    """The earlier levels that are the baseline, each with its machine state factor (machine_speed.state_factor;
    MAX_GRANT for a run of another state read anyway): those whose reading shows this level's state when they are
    most of them, else every one within MAX_GRANT, its difference granted. A majority, never one level picked over
    the others because its reading matched (or it had none). Without `by_state` (a simulated run), every earlier
    level, as measured."""
    if not by_state:
        return [(lv[name], 1.0) for lv, _ in old_levels if name in lv]
    found = [
        (lv[name], MAX_GRANT if other else state_factor(new, lv[name]), other) for lv, other in old_levels if name in lv
    ]
    same = [(lv, f) for lv, f, other in found if not other and same_state_known(new, lv)]
    if same and (2 * len(same) > len(found) or len(found) == 1):
        return same
    return [(lv, f) for lv, f, _ in found if f <= MAX_GRANT]


def _outcome(change: Change) -> str:
    if not change.confirmed:
        return "not enough data"
    return "regressed" if change.regressed else "improved"


def compare(earlier: list[BenchmarkRun], after: BenchmarkRun, band: RegressionBand) -> tuple[list[Change], list[str]]:
    """Every level and figure outside its band against the window's median: (changes, figures not judged)."""
    found = rows(earlier, after, band)
    return [row.change for row in found if row.change is not None], [
        f"{row.level} {row.metric.label}: {row.why}" for row in found if row.withheld
    ]


def _capacity(earlier: list[BenchmarkRun], after: BenchmarkRun, band: RegressionBand) -> list[Change]:
    slo, new_cap = after.slo, after.capacity
    if slo is None or new_cap is None or not new_cap.rps:
        return []
    values = [
        r.capacity.rps
        for r in earlier
        if r.slo is not None and r.slo.key == slo.key and r.capacity is not None and r.capacity.rps
    ]
    change = (
        outside(f"under {slo.describe()}", CAPACITY, [float(v) for v in values], new_cap.rps, band) if values else None
    )
    return [change] if change else []


@dataclass(frozen=True)
class Report:
    """A run against its baseline."""

    run: BenchmarkRun
    baseline: BenchmarkRun | None
    changes: list[Change]
    differences: list[str]
    window: list[BenchmarkRun] = field(default_factory=list)
    """The earlier comparable runs whose median is the baseline, oldest first."""
    unjudged: list[str] = field(default_factory=list)
    """Figures left out, and why (a tail percentile from too few requests)."""
    left_out: list[str] = field(default_factory=list)
    """Earlier runs of the workload left out of the window: measured with the machine in another state."""
    rows: list[Row] = field(default_factory=list)
    """Every figure compared, with its outcome."""

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changes if c.regressed and c.confirmed]

    @property
    def unconfirmed(self) -> list[Change]:
        """Outside the ratio band with too few earlier runs to call it: run again."""
        return [c for c in self.changes if not c.confirmed]

    def text(self) -> str:
        """The refresh's closing report."""
        gone = [f"  {why}" if why.startswith("compared only") else f"  left out: {why}" for why in self.left_out]
        if self.baseline is None and self.left_out:
            head = f"regression check: {self.run.stamp}: not enough data, no earlier run on the machine in this state"
            return "\n".join([head, *gone])
        if self.baseline is None:
            return f"regression check: {self.run.stamp} has no earlier run of its workload, topology and hardware"
        many = len(self.window) > 1
        against = f"the median of {len(self.window)} earlier runs (newest {self.baseline.stamp})" if many else None
        head = f"regression check: {self.run.stamp} against {against or self.baseline.stamp}"
        notes = (
            []
            if len(self.window) >= 3
            else [
                f"  {len(self.window)} earlier run(s): the band is the recipe's ratio only "
                "(3+ runs give the run-to-run spread)"
            ]
        )
        notes += [f"  not judged: {u}" for u in self.unjudged] + gone
        if not self.changes:
            return "\n".join([f"{head}: every level within its noise band", *notes])
        improved = [c for c in self.changes if c.confirmed and not c.regressed]
        lines = [f"{head}: {len(self.regressions)} regressed, {len(improved)} improved"]
        if self.unconfirmed:
            lines[0] += f", {len(self.unconfirmed)} outside the band but not confirmed (run again)"
        lines += [f"  {c.line()}" for c in self.changes]
        lines += ["  what differs: " + ("; ".join(self.differences) or "nothing the runs record")]
        return "\n".join([*lines, *notes])


def report(runs: list[BenchmarkRun], run: BenchmarkRun, band: RegressionBand) -> Report:
    """`run` against its baseline among `runs`."""
    kept, left_out, other = _split_by_state(runs, run, WINDOW)
    earlier = sorted([*kept, *other], key=_measured)
    if not earlier:
        return Report(run, None, [], [], left_out=left_out)
    found = rows(earlier, run, band, tuple(other))
    changes = [row.change for row in found if row.change is not None]
    unjudged = [f"{row.level} {row.metric.label}: {row.why}" for row in found if row.withheld]
    return Report(
        run, earlier[-1], changes, differences(earlier[-1], run), earlier, unjudged, rows=found, left_out=left_out
    )
