"""One open-loop rate against an SLO: met, missed, or not yet known.

With per-request samples (the runner's levels, `--save-detailed`), each limit is decided by the early-stopping
rule (catalogue.stats.request_samples.decide) on the requests above it, and a level that cannot tell yet is
'undecided' — the search then sends more requests at that rate and pools them. Without samples (an imported
summary), the recorded percentile is compared with the limit, as the source states it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from catalogue.models.benchmark import Figures, RateLevel, Stats
from catalogue.models.slo import LIMIT_LABELS, STATS_FIELD, Slo
from catalogue.stats.request_samples import decide_effective

SATURATED = 0.9
"""A level whose steady completion rate (else achieved rate) is below this share of its send rate (else offered
rate) saturated the server."""

CONFIDENCE = 0.99
"""Confidence at which a probe's percentile is decided to meet or miss its limit (one-sided)."""


@dataclass(frozen=True)
class Verdict:
    """One level against the objective."""

    meets: bool
    why: str
    """'meets', or what missed: 'p95 TTFT 2,310 ms > 2,000 ms', 'saturated: …', '3 requests failed'."""
    margin: float | None = None
    """Worst percentile ÷ its limit (≤ 1 meets); None when a latency is missing."""
    outright: bool = False
    """Nothing completed: the rate failed outright."""
    saturated: bool = False
    achieved: float | None = None
    """The rate the server kept up with, when it saturated."""
    undecided: bool = False
    """The samples cannot yet tell meets from misses at CONFIDENCE: more requests at this rate would."""
    settled: bool = False
    """Still undecided after its tries, so judged on its recorded percentile, without the confidence."""


def percentile(stats: Stats | None, pct: int) -> float | None:
    """The `pct` percentile of a latency distribution, when recorded (p50 falls back to the median field)."""
    if stats is None:
        return None
    return getattr(stats, f"p{pct}")


def latency_margin(level: Figures, slo: Slo) -> tuple[float | None, str]:
    """(worst percentile ÷ limit, the worst limit in words)."""
    worst, words = None, ""
    for key, limit in slo.limits.items():
        value = percentile(getattr(level, STATS_FIELD[key]), slo.percentile)
        if value is None:
            return None, f"p{slo.percentile} {LIMIT_LABELS[key]} not recorded"
        ratio = value / limit
        if worst is None or ratio > worst:
            sign = "≤" if ratio <= 1 else ">"
            label = f"p{slo.percentile} {LIMIT_LABELS[key]}"
            worst, words = ratio, f"{label} {ms(value)} ms {sign} {ms(limit)} ms"
    return worst, words


def kept_up(level: RateLevel) -> tuple[float, float, str] | None:
    """(rate the server kept up with, rate it was asked for, in words): the steady-middle reading where recorded,
    else the tool's achieved rate against the offered one."""
    if level.sent_rps and level.kept_up_rps is not None:
        return level.kept_up_rps, level.sent_rps, "kept up with {done:.3g} of {sent:.3g} req/s sent"
    if level.offered_rps and level.achieved_rps is not None:
        return level.achieved_rps, level.offered_rps, "achieved {done:.3g} of {sent:.3g} req/s offered"
    return None


def judge(level: RateLevel, slo: Slo) -> Verdict:
    """Whether an open-loop level met the objective: no failed request, not saturated, every percentile in limit."""
    return judge_pooled([level], slo)


def judge_pooled(levels: Sequence[RateLevel], slo: Slo, settle: bool = False) -> Verdict:
    """The verdict of one rate measured one or more times: failures and requests above each limit are added up;
    saturation in any of them counts. `settle`: the rate has had its tries, so one still undecided is judged on its
    worst recorded percentile instead, and says so."""
    verdict = _pooled(levels, slo)
    if not (settle and verdict.undecided):
        return verdict
    margin = verdict.margin
    meets = margin is not None and margin <= 1
    # A settled pass reads "meets" like any other (pages and comparisons key on the word); the run's notes name it.
    return Verdict(meets, "meets" if meets else _worst(levels, slo) + SETTLED, margin, settled=True)


SETTLED = f" (by its percentile: not decided at {CONFIDENCE:.0%} confidence in its tries)"


def _worst(levels: Sequence[RateLevel], slo: Slo) -> str:
    found = [latency_margin(lv, slo) for lv in levels]
    return max(found, key=lambda m: -1 if m[0] is None else m[0])[1]


def _pooled(levels: Sequence[RateLevel], slo: Slo) -> Verdict:
    completed = sum(lv.completed or 0 for lv in levels)
    if not completed:
        return Verdict(False, "no request completed", outright=True)
    margins = [latency_margin(lv, slo) for lv in levels]
    margin, words = max(margins, key=lambda m: -1 if m[0] is None else m[0])
    failed = sum(lv.failed or 0 for lv in levels)
    if failed:
        return Verdict(False, f"{failed} of {failed + completed} requests failed", margin)
    for level in levels:
        rates = kept_up(level)
        if rates is not None and rates[0] < SATURATED * rates[1]:
            done, sent, words = rates
            why = "saturated: " + words.format(done=done, sent=sent)
            return Verdict(False, why, margin, saturated=True, achieved=done)
    if all(lv.exceed is not None for lv in levels):
        return _decided(levels, slo, margin)
    if margin is None:
        return Verdict(False, words)
    return Verdict(margin <= 1, "meets" if margin <= 1 else words, margin)


def _decided(levels: Sequence[RateLevel], slo: Slo, margin: float | None) -> Verdict:
    """Each limit by the early-stopping rule on the pooled counts: any decided miss misses; all met meets."""
    n = sum(judged_requests(lv) for lv in levels)
    outcomes = []
    for key, limit in slo.limits.items():
        over = int(sum(by_key(lv.exceed, key, 0) for lv in levels))
        n_eff, over_eff = effective_counts(levels, key)
        outcome = decide_effective(n_eff, over_eff, slo.percentile, CONFIDENCE)
        worth = f", worth {n_eff:.0f} independent" if n_eff < n * 0.95 else ""
        words = f"p{slo.percentile} {LIMIT_LABELS[key]}: {over} of {n} requests over {ms(limit)} ms{worth}"
        outcomes.append((outcome, words))
    missed = [words for outcome, words in outcomes if outcome == "misses"]
    if missed:
        return Verdict(False, f"{missed[0]} (misses at {CONFIDENCE:.0%} confidence)", margin)
    open_ = [words for outcome, words in outcomes if outcome == "undecided"]
    if open_:
        return Verdict(False, f"undecided: {open_[0]} (more requests needed)", margin, undecided=True)
    return Verdict(True, "meets", margin)


def effective_counts(levels: Sequence[RateLevel], key: str) -> tuple[float, float]:
    """One limit's pooled (requests, requests over it) of a rate's probes, each probe's counted at its independent
    share, and at most at the share their spread allows (between_share): what the early-stopping rule decides on."""
    most = between_share(levels, key)
    shares = [min(by_key(lv.independent, key, 1.0), most) for lv in levels]
    n_eff = sum(judged_requests(lv) * share for lv, share in zip(levels, shares))
    over_eff = sum(by_key(lv.exceed, key, 0) * share for lv, share in zip(levels, shares))
    return n_eff, over_eff


def between_share(levels: Sequence[RateLevel], key: str) -> float:
    """1 ÷ how much more a rate's probes' counts over one limit scatter than independent requests' would: the
    squared gaps between each probe's count and its requests × the pooled share over the limit, against the binomial
    variance, per degree of freedom (1 when they scatter no more, or with fewer than two probes or no count over).

    The probes at a rate are independent runs (each its own seed, from an idle server), so their scatter measures
    what one probe's autocorrelation time cannot: near capacity the requests over a limit come in backlogs rarer
    than a probe is long. On the simulator's CI profile τ of "over the TTFT limit" is about 16 requests in
    20,000-request runs at 1.0-1.07× the true capacity, while every estimate from one 145-request probe (Sokal's
    window, Geyer's initial positive sequence, batch means, on the latency, its log, its ranks or the indicator)
    read a median of 3-4, and 1.4-2.5 in the four probes in ten that saw no request over: three such probes with
    counts 3, 0, 0 once decided 'meets' 1.5 % above the truth."""
    counts = [(judged_requests(lv), by_key(lv.exceed, key, 0)) for lv in levels]
    counts = [(n, over) for n, over in counts if n > 0]
    total = sum(n for n, _ in counts)
    share = sum(over for _, over in counts) / total if total else 0.0
    if len(counts) < 2 or not 0 < share < 1:
        return 1.0
    scatter = sum((over - n * share) ** 2 / (n * share * (1 - share)) for n, over in counts) / (len(counts) - 1)
    return 1 / scatter if scatter > 1 else 1.0


def by_key(values: Mapping[Any, float] | None, key: str, default: float) -> float:
    """A per-limit figure of a level, by goodput key."""
    return float((values or {}).get(key, default))


def judged_requests(level: RateLevel) -> int:
    """Requests of a level the early-stopping rule counts (all completed ones for a file without the warm-up)."""
    return level.judged if level.judged is not None else level.completed or 0


def ms(value: float) -> str:
    """Whole milliseconds with thousands separators; three significant figures below 10 ms."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.3g}"
