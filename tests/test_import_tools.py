"""The real tools against the simulated server (simulator/, CI profile; one start for the module), then `catalogue
import` of what they wrote, then the page or the run file: every figure equals the tool's own number, and the tool is
named. Closed loop: `vllm bench serve` at c=1/2, llama-benchy, `vllm bench sweep serve`; open loop: `vllm bench serve
--request-rate`, `vllm bench sweep serve_workload`, GuideLLM (sweep profile) and AIPerf (--request-rate)."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.imports import llama_benchy
from catalogue.models.loading import load_entry
from catalogue.site.pages import render_recipe
from catalogue.site.templating import fmt_num
from runner.hosts.server import healthy, session_members, start, stop_group
from tests.needs import missing, needs_vllm, tool
from tests.test_runner import free_port

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "tiny-cpu" / "model"
VLLM = str(Path(sys.executable).parent / "vllm")
ENV = {"HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1"}
pytestmark = [needs_vllm, pytest.mark.simulator]  # one simulated server for the module; the tools are real


def serve_argv(port: int) -> list[str]:
    """The simulator (simulator/, its CI profile) as the tools' server: they need a server that answers as vLLM does,
    not a model's speed, and its start takes a second where vllm-cpu's took some 30 s of CI's serial phase."""
    return [
        sys.executable, "-m", "simulator", str(MODEL), "--served-model-name", "tiny", "--host", "127.0.0.1",
        "--port", str(port), "--max-model-len", "512", "--profile", "ci", "--seed", "7",
    ]  # fmt: skip


def bench_argv(port: int, prompts: int = 8, percentiles: str = "50,90,99") -> list[str]:
    return [
        VLLM, "bench", "serve", "--backend", "openai", "--base-url", f"http://127.0.0.1:{port}",
        "--endpoint", "/v1/completions", "--model", "tiny", "--tokenizer", str(MODEL), "--dataset-name", "random",
        "--random-input-len", "64", "--random-output-len", "16", "--num-prompts", str(prompts), "--ignore-eos",
        "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", percentiles,
    ]  # fmt: skip


def run(argv: list[str], log: Path, timeout: int = 600, env: dict[str, str] | None = None, attempts: int = 1) -> None:
    """Run a tool to the end in its own session; one that outlives `timeout` is killed with every process it
    started (its workers too) and, while `attempts` remain, run again."""
    env = {**os.environ, **ENV} if env is None else env
    for attempt in range(1, attempts + 1):
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                stop_group(proc, grace_s=2.0)  # the whole session: GuideLLM's spawned workers outlive a plain kill
                out.write(f"\n[test] killed after {timeout} s (attempt {attempt} of {attempts})\n".encode())
                continue
        assert code == 0, log.read_text()[-3000:]
        return
    raise AssertionError(f"{Path(argv[0]).name} did not finish in {timeout} s, {attempts} time(s): {log}")


GOODPUT = {"ttft": 30.0, "tpot": 12.0}
"""Limits the simulator's CI profile (an engine step of about 10 ms alone, 20 ms with 16 sequences) meets at low load
and misses at higher rates: the verdicts differ from level to level."""


def verdict_from(p95: dict[str, float], offered: float | None, achieved: float | None, failed: int = 0) -> str:
    """The verdict that the tool's own figures call for under GOODPUT, worked out here from the rule the run file
    states (not by catalogue.stats.capacity): a failed request fails the level; a level that completed under 90 % of the
    offered rate saturated; else the limit furthest over (p95 ÷ limit) is named with its figure, or it "meets"."""
    if failed:
        return f"{failed} of "  # the verdict starts so; the total is the importer's count
    if offered and achieved is not None and achieved < 0.9 * offered:
        return f"saturated: achieved {achieved:.3g} of {offered:.3g} req/s offered"
    key = max(GOODPUT, key=lambda k: p95[k] / GOODPUT[k])
    if p95[key] <= GOODPUT[key]:
        return "meets"
    shown = f"{p95[key]:,.0f}" if p95[key] >= 10 else f"{p95[key]:.3g}"
    return f"p95 {key.upper()} {shown} ms > {GOODPUT[key]:g} ms"


TTFT_TPOT = {"ttft": "time_to_first_token_ms", "tpot": "inter_token_latency_ms"}
"""GuideLLM's metric of each limit (its ITL is vLLM's TPOT: the time between output tokens after the first)."""


def check_verdict(verdict: str | None, expected: str) -> None:
    assert verdict is not None and (verdict.startswith(expected) if expected.endswith(" of ") else verdict == expected)


def shared_server_cmd(port: int) -> str:
    """A `--serve-cmd` for `vllm bench sweep` that starts no second server: the sweep waits on /health at the host
    and port it reads from this command, so it benchmarks the module's server; it ends this idle process when
    done. Booting vLLM again would add half a minute and test nothing of the import."""
    idle = "import time; time.sleep(3600)"
    return shlex.join([sys.executable, "-c", idle, "--host", "127.0.0.1", "--port", str(port)])


def vllm_outputs(port: int, out: Path, found: dict[str, Path]) -> None:
    """vLLM's own client: `vllm bench serve` at c=1 and c=2, a 2-level `vllm bench sweep serve`, `vllm bench serve`
    at 8 req/s and a 3-level serve_workload sweep."""
    for c in (1, 2):
        argv = [*bench_argv(port), "--max-concurrency", str(c), "--save-result", "--result-dir", str(out)]
        run([*argv, "--result-filename", f"c{c}.json"], out / "bench.log")
        found[f"c{c}"] = out / f"c{c}.json"
    params = out / "bench-params.json"
    params.write_text(json.dumps([{"max_concurrency": 1}, {"max_concurrency": 2}]))
    run(
        [VLLM, "bench", "sweep", "serve", "--serve-cmd", shared_server_cmd(port), "--after-bench-cmd", "true",
         "--bench-cmd", shlex.join(bench_argv(port)), "--bench-params", str(params), "--num-runs", "1",
         "-o", str(out / "sweep"), "-e", "tiny"],
        out / "sweep.log",
    )  # fmt: skip
    found["sweep"] = out / "sweep" / "tiny"
    goodput = [f"{k}:{v:g}" for k, v in GOODPUT.items()]
    rate = [*bench_argv(port, 24, "50,90,95,99"), "--request-rate", "8", "--burstiness", "1.0", "--goodput", *goodput]
    run([*rate, "--save-result", "--result-dir", str(out), "--result-filename", "r8.json"], out / "bench.log")
    found["r8"] = out / "r8.json"
    workload = [*bench_argv(port, 4, "50,90,95,99"), "--goodput", *goodput]
    run(
        [VLLM, "bench", "sweep", "serve_workload", "--serve-cmd", shared_server_cmd(port), "--after-bench-cmd", "true",
         "--bench-cmd", shlex.join(workload), "--workload-var", "request_rate", "--workload-iters", "3",
         "--num-runs", "1", "-o", str(out / "workload"), "-e", "tiny"],
        out / "workload.log",
    )  # fmt: skip
    found["workload"] = out / "workload" / "tiny"


def other_tool_outputs(port: int, out: Path, found: dict[str, Path]) -> None:
    """llama-benchy at c=1 and c=2, GuideLLM's sweep and AIPerf at 8 req/s."""
    benchy = tool("CATALOGUE_LLAMA_BENCHY", "llama-benchy")
    if benchy:
        corpus, url = serve_corpus(out)
        try:
            run(
                [benchy, "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "tiny", "--tokenizer", str(MODEL),
                 "--pp", "64", "--tg", "128", "--runs", "2", "--concurrency", "1", "2", "--exact-tg",
                 "--skip-coherence", "--book-url", url, "--format", "json",
                 "--save-result", str(out / "benchy.json")],
                out / "benchy.log",
            )  # fmt: skip
        finally:
            corpus.shutdown()
        found["benchy"] = out / "benchy.json"
    guidellm = tool("CATALOGUE_GUIDELLM", "GuideLLM")
    if guidellm:
        run(
            [guidellm, "run", "--backend",
             f"kind=openai_http,target=http://127.0.0.1:{port},model=tiny,request_format=/v1/completions",
             "--profile", "kind=sweep,sweep_size=3", "--constraint", "kind=max_duration,seconds=3",
             "--data", "kind=synthetic_text,prompt_tokens=32,output_tokens=16",
             "--tokenizer", f"kind=huggingface_auto,model={MODEL}",
             "--metrics", json.dumps({"kind": "generative", "slo": {f"{k}_ms": v for k, v in GOODPUT.items()}}),
             "--output", f"kind=json,path={out / 'guidellm' / 'benchmarks.json'}", "--disable-console-interactive"],
            out / "guidellm.log",
            # GuideLLM 0.8.1 once stalled here after its first requests, sending nothing for 10 min (a fresh-clone
            # CI run, 2026-11-23); its run takes well under a minute, so a stalled one is killed and run again
            timeout=240,
            attempts=2,
        )  # fmt: skip
        found["guidellm"] = out / "guidellm" / "benchmarks.json"
    aiperf = tool("CATALOGUE_AIPERF", "AIPerf")
    if aiperf:
        # AIPerf loads a local tokenizer folder only online: offline it looks the path up in the hub cache
        env = {k: v for k, v in {**os.environ, **ENV}.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
        run(
            [aiperf, "profile", "--model", "tiny", "--url", f"http://127.0.0.1:{port}", "--endpoint-type",
             "completions", "--streaming", "--tokenizer", str(MODEL), "--request-rate", "8", "--request-count", "24",
             "--isl", "32", "--osl", "16", "--extra-inputs", "ignore_eos:true",
             "--goodput", f"time_to_first_token:{GOODPUT['ttft']:g} inter_token_latency:{GOODPUT['tpot']:g}",
             "--artifact-dir", str(out / "aiperf"), "--ui-type", "none"],
            out / "aiperf.log",
            env=env,
        )  # fmt: skip
        found["aiperf"] = out / "aiperf" / "profile_export_aiperf.json"


def serve_corpus(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """llama-benchy's --book-url: a text file served on 127.0.0.1."""
    vocabulary = ["the", "catalogue", "measures", "how", "fast", "a", "model", "serves", "each", "request", "at"]
    lines = (" ".join(vocabulary[(i + j) % len(vocabulary)] for j in range(12)) + "." for i in range(2000))
    (folder / "book.txt").write_text("\n".join(lines))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/book.txt"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, Path]:
    """`vllm bench serve` at c=1 and c=2, llama-benchy at c=1 and c=2, a 2-level `vllm bench sweep serve`, and the
    open-loop outputs, all against one server."""
    out = tmp_path_factory.mktemp("tool-outputs")
    port = free_port()
    server = start(serve_argv(port), ENV, out / "server.log")
    found: dict[str, Path] = {}
    try:
        deadline = time.monotonic() + 300
        while not healthy(f"http://127.0.0.1:{port}/health"):
            assert server.poll() is None and time.monotonic() < deadline, (out / "server.log").read_text()[-3000:]
            time.sleep(1)
        # Two lanes at once: vLLM's client, and the other tools. Each tool's run is mostly its own start (a vLLM
        # import is ~10 s of one core) and the simulator has cores to spare, so one after another took 188 s of
        # CI's serial phase. What the tests read is each tool's own file, whatever load it met.
        errors: list[BaseException] = []

        def lane(work: Callable[[int, Path, dict[str, Path]], None]) -> None:
            try:
                work(port, out, found)
            except BaseException as error:  # re-raised below, in the test's thread
                errors.append(error)

        lanes = [threading.Thread(target=lane, args=(work,)) for work in (vllm_outputs, other_tool_outputs)]
        for thread in lanes:
            thread.start()
        for thread in lanes:
            thread.join()
        if errors:
            raise errors[0]
    finally:
        stop_group(server)
    assert not session_members(server.pid), "the simulator's session outlived it"
    return found


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "examples" / "tiny-cpu", root / "tiny-cpu", ignore=shutil.ignore_patterns("runs"))
    return root, root / "tiny-cpu"


def perf_table(html: str) -> dict[int, list[str]]:
    """The page's performance table: concurrency -> cell texts (tags stripped)."""
    table = html.split('<table class="rc-perf">', 1)[1].split("</table>", 1)[0]
    rows = {}
    for row in re.findall(r"<tr><td>(.*?)</tr>", table.split("<tbody>", 1)[1], re.S):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in row.split("</td><td>")]
        rows[int(cells[0])] = [c.removesuffix("</td>").strip() for c in cells[1:]]
    return rows


def page_of(folder: Path):
    entry = load_entry(folder)
    return entry, render_recipe(entry).body


def test_bench_serve_results_show_on_the_page_as_the_client_wrote_them(outputs, tiny):
    root, folder = tiny
    files = [str(outputs["c1"]), str(outputs["c2"])]
    stated = ["--dataset", "random", "--input-len", "64", "--output-len", "16", "--vllm-version", "0.32.0"]
    assert main(["--root", str(root), "import", "tiny-cpu", *files, *stated]) == 0
    _entry, body = page_of(folder)
    assert "tool: vllm bench serve" in body and "vllm bench serve --save-result" in body
    rows = perf_table(body)
    for c in (1, 2):
        raw = json.loads(outputs[f"c{c}"].read_text())
        cells = " | ".join(rows[c])
        for key in ("output_throughput", "total_token_throughput", "mean_ttft_ms", "mean_itl_ms", "mean_e2el_ms"):
            assert fmt_num(raw[key]) in cells, (key, cells)


def test_sweep_folder_results_show_on_the_page(outputs, tiny):
    root, folder = tiny
    stated = ["--dataset", "random", "--input-len", "64", "--output-len", "16"]
    assert main(["--root", str(root), "import", "tiny-cpu", str(outputs["sweep"]), *stated]) == 0
    entry, body = page_of(folder)
    rows = perf_table(body)
    for c in (1, 2):
        (result,) = outputs["sweep"].glob(f"*max_concurrency={c}/run=0.json")
        raw = json.loads(result.read_text())
        assert fmt_num(raw["output_throughput"]) in " | ".join(rows[c])
    assert "sweep serve` output folder" in entry.runs[0].provenance.imported_with


def test_llama_benchy_report_shows_on_the_page_with_its_spread(outputs, tiny):
    if "benchy" not in outputs:
        missing("llama-benchy not installed (CATALOGUE_LLAMA_BENCHY); nox -s tests installs it")
    root, folder = tiny
    assert main(["--root", str(root), "import", "tiny-cpu", str(outputs["benchy"])]) == 0
    entry, body = page_of(folder)
    assert "tool: llama-benchy 0.4.0" in body and "time to first response − latency" in body
    report = json.loads(outputs["benchy"].read_text())
    rows = perf_table(body)
    for bench in report["benchmarks"]:
        cells = " | ".join(rows[bench["concurrency"]])
        for name in ("pp_throughput", "tg_throughput", "e2e_ttft"):
            if bench.get(name):
                metric = bench[name]
                assert fmt_num(metric["mean"]) in cells, (name, cells)
                if metric["std"]:
                    assert f"± {fmt_num(metric['std'])}" in cells, (name, cells)
    assert entry.runs[0].workload.dataset == llama_benchy.DATASET


def imported_run(tiny, *args: str):
    root, folder = tiny
    assert main(["--root", str(root), "import", "tiny-cpu", *args]) == 0
    (run,) = load_entry(folder).runs
    return run


def limits_args() -> list[str]:
    return ["--goodput", *(f"{k}:{v:g}" for k, v in GOODPUT.items())]


def test_bench_serve_rate_result_imports_as_the_client_wrote_it(outputs, tiny):
    stated = ["--dataset", "random", "--input-len", "64", "--output-len", "16"]
    run = imported_run(tiny, str(outputs["r8"]), *stated, *limits_args())
    raw = json.loads(outputs["r8"].read_text())
    (level,) = run.rates
    assert (
        (level.offered_rps, level.burstiness, level.arrivals)
        == (8.0, 1.0, "poisson")
        == (raw["request_rate"], 1, "poisson")
    )
    assert level.achieved_rps == raw["completed"] / raw["duration"] and level.goodput_rps == raw["request_goodput"]
    assert level.attainment == pytest.approx(raw["request_goodput"] / raw["request_throughput"])
    for name, stats in (("ttft", level.ttft_ms), ("tpot", level.tpot_ms), ("e2el", level.e2e_ms)):
        assert (stats.p50, stats.p95, stats.p99) == (
            raw[f"p50_{name}_ms"],
            raw[f"p95_{name}_ms"],
            raw[f"p99_{name}_ms"],
        )
    assert run.slo.limits == GOODPUT
    p95 = {"ttft": raw["p95_ttft_ms"], "tpot": raw["p95_tpot_ms"]}
    check_verdict(level.verdict, verdict_from(p95, 8.0, raw["completed"] / raw["duration"], raw["failed"]))


def test_serve_workload_folder_imports_each_explored_rate(outputs, tiny):
    stated = ["--dataset", "random", "--input-len", "64", "--output-len", "16"]
    run = imported_run(tiny, str(outputs["workload"]), *stated, *limits_args())
    results = sorted(outputs["workload"].glob("*/run=0.json"))
    assert len(run.rates) == len(results) == 3 and run.levels == []
    for result in results:
        raw = json.loads(result.read_text())
        level = next(lv for lv in run.rates if lv.offered_rps == raw["request_rate"])
        assert level.max_concurrency == raw["max_concurrency"] and level.completed == raw["completed"]
        assert level.ttft_ms.p95 == raw["p95_ttft_ms"] and level.goodput_rps == raw["request_goodput"]
    assert "sweep serve_workload` output folder" in run.provenance.imported_with


def test_guidellm_report_imports_as_guidellm_wrote_it(outputs, tiny):
    if "guidellm" not in outputs:
        missing("GuideLLM not installed (CATALOGUE_GUIDELLM); nox -s tests installs it")
    run = imported_run(tiny, str(outputs["guidellm"]))
    report = json.loads(outputs["guidellm"].read_text())
    assert run.provenance.tool == f"GuideLLM {report['metadata']['guidellm_version']}"
    assert (run.workload.input_len, run.workload.output_len, run.slo.limits) == (32, 16, GOODPUT)
    kinds = [b["config"]["strategy"]["type_"] for b in report["benchmarks"]]
    assert kinds == ["synchronous", "throughput", "constant"]
    for bench in report["benchmarks"]:
        strategy, metrics = bench["config"]["strategy"], bench["metrics"]
        if strategy["type_"] == "synchronous":
            level = run.level(1)
        else:
            level = next(lv for lv in run.rates if lv.offered_rps == strategy.get("rate"))
            assert level.achieved_rps == metrics["requests_per_second"]["successful"]["mean"]
            assert level.attainment == metrics["slo_attainment"]
            p95 = {k: metrics[name]["successful"]["percentiles"]["p95"] for k, name in TTFT_TPOT.items()}
            achieved = metrics["requests_per_second"]["successful"]["mean"]
            failed = metrics["request_totals"]["errored"]
            check_verdict(level.verdict, verdict_from(p95, strategy.get("rate"), achieved, failed))
        for field, name, scale in (("ttft_ms", "time_to_first_token_ms", 1), ("tpot_ms", "inter_token_latency_ms", 1),
                                   ("e2e_ms", "request_latency", 1000)):  # fmt: skip
            own = metrics[name]["successful"]
            stats = getattr(level, field)
            assert stats.mean == pytest.approx(own["mean"] * scale)
            assert stats.p95 == pytest.approx(own["percentiles"]["p95"] * scale)
        assert level.completed == metrics["request_totals"]["successful"]
    _entry, body = page_of(tiny[1])
    sync = report["benchmarks"][0]["metrics"]
    cells = " | ".join(perf_table(body)[1])
    assert fmt_num(sync["output_tokens_per_second"]["successful"]["mean"]) in cells, cells
    assert fmt_num(sync["time_to_first_token_ms"]["successful"]["mean"]) in cells, cells


def test_aiperf_export_imports_as_aiperf_wrote_it(outputs, tiny):
    if "aiperf" not in outputs:
        missing("AIPerf not installed (CATALOGUE_AIPERF); nox -s tests installs it")
    run = imported_run(tiny, str(outputs["aiperf"]))
    export = json.loads(outputs["aiperf"].read_text())
    assert export["schema_version"] == "1.4" and run.provenance.tool == f"AIPerf {export['aiperf_version']}"
    (level,) = run.rates
    assert level.offered_rps == 8.0 and level.achieved_rps == export["request_throughput"]["avg"]
    assert level.goodput_rps == export["goodput"]["avg"] and level.attainment == export["good_request_fraction"]["avg"]
    for field, name in (
        ("ttft_ms", "time_to_first_token"),
        ("tpot_ms", "inter_token_latency"),
        ("e2e_ms", "request_latency"),
    ):
        stats = getattr(level, field)
        assert (stats.mean, stats.p95, stats.p99) == tuple(export[name][k] for k in ("avg", "p95", "p99"))
    assert level.generation_tps == export["output_token_throughput"]["avg"]
    assert run.slo.limits == GOODPUT
    p95 = {"ttft": export["time_to_first_token"]["p95"], "tpot": export["inter_token_latency"]["p95"]}
    failed = int(export.get("error_request_count", {}).get("avg", 0))
    check_verdict(level.verdict, verdict_from(p95, 8.0, export["request_throughput"]["avg"], failed))
