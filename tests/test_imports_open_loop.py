"""`catalogue import` of open-loop outputs (tests/data/tool-outputs, real files of each tool): `vllm bench serve` at
a request rate, a `vllm bench sweep serve_workload` folder, GuideLLM reports and AIPerf exports; then bad inputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.imports import aiperf, guidellm, vllm_bench
from catalogue.models.loading import load_entry

REPO = Path(__file__).resolve().parents[1]
OUTPUTS = REPO / "tests" / "data" / "tool-outputs"
BAD = OUTPUTS / "bad"
STATED = ["--dataset", "random", "--input-len", "64", "--output-len", "16"]


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "examples" / "tiny-cpu", root / "tiny-cpu", ignore=shutil.ignore_patterns("runs"))
    return root, root / "tiny-cpu"


def imported(tiny, *args: str):
    root, folder = tiny
    assert main(["--root", str(root), "import", "tiny-cpu", *args]) == 0
    (run,) = load_entry(folder).runs
    return run


def read(name: str) -> dict:
    return json.loads((OUTPUTS / name).read_text())


def by_offered(run, rate):
    return next(lv for lv in run.rates if lv.offered_rps == rate)


def test_bench_serve_rates_join_the_concurrency_levels_of_their_workload(tiny):
    files = [str(OUTPUTS / n) for n in ("c1.json", "r4.json", "r8.json", "rinf.json")]
    run = imported(tiny, *files, *STATED, "--goodput", "ttft:30", "tpot:5")
    assert [lv.concurrency for lv in run.levels] == [1]
    assert [lv.offered_rps for lv in run.rates] == [4.0, 8.0, None]
    for name, rate in (("r4.json", 4.0), ("r8.json", 8.0), ("rinf.json", None)):
        raw = read(name)
        level = next(lv for lv in run.rates if lv.offered_rps == rate)
        assert level.achieved_rps == raw["completed"] / raw["duration"]
        assert level.goodput_rps == raw["request_goodput"]
        assert level.attainment == pytest.approx(raw["request_goodput"] / raw["request_throughput"])
        assert level.ttft_ms.p95 == raw["p95_ttft_ms"] and level.tpot_ms.p99 == raw["p99_tpot_ms"]
        assert level.e2e_ms.mean == raw["mean_e2el_ms"] and level.generation_tps == raw["output_throughput"]
        assert level.completed == raw["completed"] and level.failed == raw["failed"]
    assert by_offered(run, 4.0).arrivals == "poisson" and by_offered(run, 4.0).burstiness == 1.0
    fastest = run.rates[-1]
    assert fastest.arrivals is None and fastest.burstiness is None and fastest.max_concurrency is None
    assert run.slo is not None and run.slo.limits == {"ttft": 30.0, "tpot": 5.0} and run.slo.percentile == 95
    # The files' own p95s against ttft:30 tpot:5 (ratio to the limit; the worse one is named): r4 TTFT 71.4 ms (2.38x),
    # TPOT 10.9 ms (2.18x); r8 TTFT 57.5 ms (1.92x), TPOT 3.50 ms (within); rinf TTFT 72.2 ms (2.41x), TPOT 5.32 ms
    # (1.06x). Each achieved rate is within 3 % of the one offered: none saturated.
    verdicts = ["p95 TTFT 71 ms > 30 ms", "p95 TTFT 57 ms > 30 ms", "p95 TTFT 72 ms > 30 ms"]
    assert [lv.verdict for lv in run.rates] == verdicts
    assert run.workload.prompts_per_level == "8"  # from the concurrency level; the rate files size by rate
    assert "request_goodput ÷ request_throughput" in run.provenance.definitions


def test_goodput_without_its_limits_is_said_and_judges_nothing(tiny):
    run = imported(tiny, str(OUTPUTS / "r4.json"), *STATED)
    assert run.slo is None and run.rates[0].verdict is None
    assert any("not record" in note and "--goodput" in note for note in run.notes)


def test_the_stated_percentile_is_the_one_judged(tiny):
    run = imported(tiny, str(OUTPUTS / "r8.json"), *STATED, "--goodput", "ttft:60", "--slo-percentile", "50")
    (level,) = run.rates
    assert run.slo.percentile == 50 and level.ttft_ms.p50 <= 60 < level.ttft_ms.p99
    assert level.verdict == "meets"


def test_the_runner_maps_a_raw_rate_result_the_same_way():
    raw = read("r8.json")
    level = vllm_bench.rate_level_from_raw(raw, "stamp/r8.json")
    assert (level.offered_rps, level.raw) == (8.0, ["stamp/r8.json"])
    assert level.ttft_ms.p95 == raw["p95_ttft_ms"] and level.itl_ms.p90 == raw["p90_itl_ms"]
    assert level.peak_tps == raw["max_output_tokens_per_s"] and level.total_tps == raw["total_token_throughput"]


def test_serve_workload_folder_gives_a_rate_level_per_explored_rate(tiny):
    folder = OUTPUTS / "workload"
    run = imported(tiny, str(folder), *STATED, "--goodput", "ttft:30", "tpot:5")
    assert "sweep serve_workload` output folder" in run.provenance.imported_with
    assert vllm_bench.sweep_kind(folder) == vllm_bench.WORKLOAD_SWEEP
    assert vllm_bench.sweep_kind(OUTPUTS / "sweep") == vllm_bench.SWEEP
    assert run.levels == []
    for result in sorted(folder.glob("*/run=0.json")):
        raw = json.loads(result.read_text())
        level = by_offered(run, float(raw["request_rate"]))
        assert level.max_concurrency == raw["max_concurrency"]
        assert level.ttft_ms.p95 == raw["p95_ttft_ms"] and level.goodput_rps == raw["request_goodput"]
        assert f"{run.stamp}/workload/{result.parent.name}/summary.json" in level.raw
    assert by_offered(run, 1.0).max_concurrency == 1  # serve_workload's serial end runs one at a time


def test_guidellm_sweep_levels_are_the_tools_own_figures(tiny):
    run = imported(tiny, str(OUTPUTS / "guidellm-sweep.json"))
    report = read("guidellm-sweep.json")
    assert run.workload.model_dump(exclude_none=True) == {
        "tool": "GuideLLM",
        "tool_version": "0.8.1",
        "dataset": "GuideLLM synthetic text",
        "input_len": 32,
        "output_len": 16,
        "context_depth": 0,
        "prompts_per_level": "4 s of",
    }
    assert [lv.concurrency for lv in run.levels] == [1] and run.levels[0].label == "synchronous"
    assert [lv.label for lv in run.rates] == ["constant@42.62", "constant@65.00", "throughput@512"]
    for bench in report["benchmarks"]:
        strategy, metrics = bench["config"]["strategy"], bench["metrics"]
        if strategy["type_"] == "synchronous":
            level = run.level(1)
        else:
            level = next(lv for lv in run.rates if lv.offered_rps == strategy.get("rate"))
            assert level.achieved_rps == metrics["requests_per_second"]["successful"]["mean"]
            assert level.goodput_rps == metrics["request_goodput"]["successful"]["mean"]
            assert level.attainment == metrics["slo_attainment"]
            assert level.max_concurrency == strategy["max_concurrency"]
        ttft = metrics["time_to_first_token_ms"]["successful"]
        assert (level.ttft_ms.mean, level.ttft_ms.p95) == (ttft["mean"], ttft["percentiles"]["p95"])
        assert level.tpot_ms.p99 == metrics["inter_token_latency_ms"]["successful"]["percentiles"]["p99"]
        assert level.e2e_ms.p50 == pytest.approx(1000 * metrics["request_latency"]["successful"]["percentiles"]["p50"])
        assert level.generation_tps == metrics["output_tokens_per_second"]["successful"]["mean"]
        assert level.completed == metrics["request_totals"]["successful"] and level.duration_s == bench["duration"]
    assert run.rates[0].arrivals == "constant" and run.rates[-1].offered_rps is None
    assert run.slo.limits == {"ttft": 30.0, "tpot": 5.0}
    # From the report: 42.625 req/s offered, 39.25 achieved (92 %), p95 TTFT 98.5 ms against 30 (TPOT 12.7 ms
    # against 5: 2.5x, less than TTFT's 3.3x); 65 offered, 49 achieved (75 %): saturated; as fast as possible: p95
    # TTFT 2,271 ms.
    assert [lv.verdict for lv in run.rates] == [
        "p95 TTFT 98 ms > 30 ms",
        "saturated: achieved 49 of 65 req/s offered",
        "p95 TTFT 2,271 ms > 30 ms",
    ]
    assert "slo_attainment" in run.provenance.definitions and run.provenance.tool == "GuideLLM 0.8.1"
    assert any(note.startswith("GuideLLM warned at ") for note in run.notes)


def test_guidellm_poisson_and_concurrent_benchmarks(tiny):
    _root, folder = tiny
    run = imported(tiny, str(OUTPUTS / "guidellm-poisson.json"))
    assert [(lv.offered_rps, lv.arrivals, lv.burstiness) for lv in run.rates] == [(4, "poisson", 1), (8, "poisson", 1)]
    assert run.slo is None and run.workload.prompts_per_level == "3 s of"
    shutil.rmtree(folder / "runs")
    run = imported(tiny, str(OUTPUTS / "guidellm-concurrent.json"))
    report = read("guidellm-concurrent.json")
    assert [lv.concurrency for lv in run.levels] == [b["config"]["strategy"]["streams"] for b in report["benchmarks"]]
    assert run.rates == [] and run.workload.prompts_per_level == "20"
    ttft = report["benchmarks"][1]["metrics"]["time_to_first_token_ms"]["successful"]["mean"]
    assert run.level(2).prefill_tps == pytest.approx(2 * 32 / (ttft / 1000))


def test_aiperf_rate_and_concurrency_exports_become_one_run(tiny):
    run = imported(tiny, str(OUTPUTS / "aiperf-rate.json"), str(OUTPUTS / "aiperf-concurrency.json"))
    rate, closed = read("aiperf-rate.json"), read("aiperf-concurrency.json")
    (level,) = run.rates
    assert (level.offered_rps, level.arrivals) == (rate["input_config"]["phases"][0]["rate"], "poisson")
    assert level.achieved_rps == rate["request_throughput"]["avg"] and level.goodput_rps == rate["goodput"]["avg"]
    assert level.attainment == rate["good_request_fraction"]["avg"]
    assert level.ttft_ms.p95 == rate["time_to_first_token"]["p95"]
    assert level.e2e_ms.p99 == rate["request_latency"]["p99"]
    assert level.tpot_ms.mean == rate["inter_token_latency"]["avg"]
    assert level.generation_tps == rate["output_token_throughput"]["avg"]
    assert run.level(2).ttft_ms.p50 == closed["time_to_first_token"]["p50"]
    assert run.slo.limits == {"ttft": 30.0, "tpot": 5.0}
    assert (run.workload.tool, run.workload.input_len, run.workload.output_len) == ("AIPerf", 32, 16)
    assert any("tokenizing the text" in note for note in run.notes)  # the tiny model's text re-tokenizes longer


def test_aiperf_schema_1_5_reads_like_1_4(tiny, tmp_path):
    data = read("aiperf-rate.json")
    data["schema_version"] = "1.5"
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(data))
    assert imported(tiny, str(path)).rates[0].offered_rps == 8.0


def test_formats_are_told_apart():
    for name, reader in (("guidellm-sweep.json", guidellm), ("aiperf-rate.json", aiperf), ("r4.json", vllm_bench)):
        data = read(name)
        assert [r.looks_like(data) for r in (guidellm, aiperf)] == [reader is guidellm, reader is aiperf], name


def _edited(tmp: Path, name: str, edit) -> Path:
    data = read(name)
    edit(data)
    path = tmp / name
    path.write_text(json.dumps(data))
    return path


def _truncated_guidellm(tmp: Path) -> tuple[list[Path], str]:
    path = BAD / "guidellm-truncated.json"
    return [path], f"{path}:1: not valid JSON"


def _aiperf_other_schema(tmp: Path) -> tuple[list[Path], str]:
    path = BAD / "aiperf-schema-1.3.json"
    return [path], f"{path}: schema_version: AIPerf export schema version '1.3': this reader knows 1.4 and 1.5"


def _rate_zero(tmp: Path) -> tuple[list[Path], str]:
    path = BAD / "vllm-rate-zero.json"
    return [path], f"{path}: request_rate: not a positive request rate (req/s) or 'inf': 0"


def _guidellm_other_version(tmp: Path) -> tuple[list[Path], str]:
    path = _edited(tmp, "guidellm-poisson.json", lambda d: d["metadata"].update(version=3))
    return [path], f"{path}: metadata.version: GuideLLM report version 3 (GuideLLM 0.8.1): this reader knows version 2"


def _guidellm_trace(tmp: Path) -> tuple[list[Path], str]:
    path = _edited(
        tmp, "guidellm-poisson.json", lambda d: d["benchmarks"][1]["config"]["strategy"].update(type_="trace")
    )
    return [path], f"{path}: benchmarks[1].config.strategy.type_: a 'trace' benchmark has no level in the catalogue"


def _guidellm_missing_metric(tmp: Path) -> tuple[list[Path], str]:
    path = _edited(tmp, "guidellm-poisson.json", lambda d: d["benchmarks"][0]["metrics"]["request_totals"].clear())
    return [path], f"{path}: benchmarks[0].metrics.request_totals.successful: required field is missing"


def _aiperf_rate_series(tmp: Path) -> tuple[list[Path], str]:
    path = _edited(tmp, "aiperf-rate.json", lambda d: d["input_config"]["phases"][0].update(rate_series={"p": 1}))
    return [path], f"{path}: input_config.phases: a request rate that changes during the run has no one offered rate"


def _aiperf_unit(tmp: Path) -> tuple[list[Path], str]:
    path = _edited(tmp, "aiperf-rate.json", lambda d: d["time_to_first_token"].update(unit="ns"))
    return [path], f"{path}: time_to_first_token.unit: unit 'ns', expected 'ms'"


def _ramp_up(tmp: Path) -> tuple[list[Path], str]:
    ramp = {"ramp_up_strategy": "linear", "ramp_up_start_rps": 1, "ramp_up_end_rps": 8}
    path = _edited(tmp, "r4.json", lambda d: d.update(ramp))
    return [path], f"{path}: ramp_up_strategy: a linear ramp-up from 1 to 8 req/s has no one offered rate"


def _repeated_rate(tmp: Path) -> tuple[list[Path], str]:
    path = tmp / "again.json"
    shutil.copyfile(OUTPUTS / "r4.json", path)
    return [OUTPUTS / "r4.json", path], f"{path}: request_rate: the rate 4 req/s (poisson) is also in"


def _goodput_unknown_key(tmp: Path) -> tuple[list[Path], str]:
    return [OUTPUTS / "r4.json", "--goodput", "ttft:30", "itl:5"], "--goodput: 'itl' is not a limit vLLM's --goodput"


def _goodput_unlike_the_file(tmp: Path) -> tuple[list[Path], str]:
    path = OUTPUTS / "aiperf-rate.json"
    return [path, "--goodput", "ttft:2000"], f"{path}: slo: the file's goodput limits are ttft:30 tpot:5, --goodput"


def _limits_differ(tmp: Path) -> tuple[list[Path], str]:
    path = _edited(tmp, "aiperf-rate.json", lambda d: d["input_config"]["slos"].update(time_to_first_token=50))
    path = path.rename(tmp / "other.json")
    first = _edited(tmp, "aiperf-rate.json", lambda d: d["input_config"]["phases"][0].update(rate=4.0))
    return [first, path], f"{path}: slo: goodput limits ttft:50 tpot:5 differ from ttft:30 tpot:5 in {first}"


def _out_of_range(tmp: Path) -> tuple[list[Path], str]:
    path = _edited(tmp, "guidellm-sweep.json", lambda d: d["benchmarks"][2]["metrics"].update(slo_attainment=1.5))
    return [path], f"{path}: attainment: "


BAD_INPUTS = [
    _truncated_guidellm,
    _aiperf_other_schema,
    _rate_zero,
    _guidellm_other_version,
    _guidellm_trace,
    _guidellm_missing_metric,
    _aiperf_rate_series,
    _aiperf_unit,
    _ramp_up,
    _repeated_rate,
    _goodput_unknown_key,
    _goodput_unlike_the_file,
    _limits_differ,
    _out_of_range,
]


@pytest.mark.parametrize("make", BAD_INPUTS, ids=[f.__name__.strip("_") for f in BAD_INPUTS])
def test_bad_open_loop_input_is_one_line_and_writes_nothing(make, tiny, tmp_path, capsys):
    root, folder = tiny
    args, expected = make(tmp_path)
    assert main(["--root", str(root), "import", "tiny-cpu", *map(str, args)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"error: {expected}"), err
    assert not (folder / "runs").exists() or not any((folder / "runs").iterdir())
