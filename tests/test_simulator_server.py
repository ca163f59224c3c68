"""The simulated server over HTTP: vLLM's stream format and metric names, the command line vLLM's way, the model's
timing at one stream, the prefix-cache counters, failure injection. One boot for the module (about a second)."""

from __future__ import annotations

import itertools
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from catalogue.stats.engine_timing import TPOT, TTFT, parse_sums
from catalogue.stats.prometheus import samples
from catalogue.stats.spec_decode import Counters, parse_counters
from simulator.server import Lateness
from tests.site_support import REPO

MODEL = REPO / "examples" / "tiny-cpu" / "model"
pytestmark = pytest.mark.simulator


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(*extra: str) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    argv = [sys.executable, "-m", "simulator", str(MODEL), "--port", str(port), "--host", "127.0.0.1"]
    process = subprocess.Popen([*argv, *extra], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{url}/health", timeout=1).close()
            return process, url
        except OSError:
            if process.poll() is not None:
                raise AssertionError(process.stdout.read() if process.stdout else "exited") from None
            time.sleep(0.05)
    process.kill()
    raise AssertionError("the simulator did not answer /health")


@pytest.fixture(scope="module")
def server():
    # vLLM flags it does not model are accepted and ignored, as vllm serve's own parser would accept them
    process, url = _start(
        "--profile", "ci", "--served-model-name", "sim", "--seed", "4", "--max-num-seqs", "8",
        "--enforce-eager", "--dtype", "float32", "--gpu-memory-utilization", "0.7",
    )  # fmt: skip
    yield url
    process.terminate()
    process.wait(timeout=10)


def _post(url: str, path: str, body: dict) -> urllib.request.Request:
    return urllib.request.Request(f"{url}{path}", data=json.dumps(body).encode(), method="POST")


def _events(url: str, path: str, body: dict) -> list[tuple[float, str]]:
    """(arrival time, data) of every SSE event, read line by line as they come."""
    with urllib.request.urlopen(_post(url, path, body), timeout=30) as response:
        return [(time.perf_counter(), line[6:].decode().strip()) for line in response if line.startswith(b"data: ")]


def test_completions_stream_one_event_a_token_then_usage_then_done(server):
    body = {
        "model": "sim",
        "prompt": "a b c d",
        "max_tokens": 5,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    events = _events(server, "/v1/completions", body)
    assert events[-1][1] == "[DONE]"
    chunks = [json.loads(data) for _, data in events[:-1]]
    tokens = [c for c in chunks if c["choices"]]
    assert len(tokens) == 5 and all(c["object"] == "text_completion" and c["model"] == "sim" for c in chunks)
    assert [c["choices"][0]["finish_reason"] for c in tokens] == [None] * 4 + ["length"]
    assert chunks[-1]["usage"]["completion_tokens"] == 5 and chunks[-1]["usage"]["prompt_tokens"] >= 1


def test_chat_streams_deltas_and_answers_whole_without_stream(server):
    body = {"model": "sim", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3, "stream": True}
    chunks = [json.loads(data) for _, data in _events(server, "/v1/chat/completions", body)[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert all("content" in c["choices"][0]["delta"] for c in chunks)
    with urllib.request.urlopen(_post(server, "/v1/chat/completions", {**body, "stream": False}), timeout=30) as r:
        whole = json.load(r)
    assert whole["object"] == "chat.completion" and whole["usage"]["completion_tokens"] == 3


def test_models_and_bad_requests(server):
    with urllib.request.urlopen(f"{server}/v1/models", timeout=5) as r:
        assert [m["id"] for m in json.load(r)["data"]] == ["sim"]
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(_post(server, "/v1/completions", {"prompt": "x", "max_tokens": 0}), timeout=5)
    assert error.value.code == 400


def test_one_stream_gets_the_models_step_times(server):
    """The CI profile, one request of 32 prompt tokens alone: decode steps of 8 + 0.6 + 0.5 × ~40/1000 ms."""
    prompt = list(range(32))
    events = _events(server, "/v1/completions", {"prompt": prompt, "max_tokens": 40, "stream": True})
    times = [t for t, data in events[:-1]]
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(times)]
    assert 0.85 * 8.62 <= sum(gaps) / len(gaps) <= 1.3 * 8.62


def test_metrics_carry_vllms_names_and_count_prefix_hits(server):
    prompt = list(range(100, 140))  # 40 tokens: 2 full blocks usable
    for _ in range(2):
        urllib.request.urlopen(_post(server, "/v1/completions", {"prompt": prompt, "max_tokens": 2}), timeout=30)
    with urllib.request.urlopen(f"{server}/metrics", timeout=5) as r:
        text = r.read().decode()
    values = {s.name: s.value for s in samples(text)}
    assert values["vllm:prefix_cache_hits_total"] >= 32
    assert values["vllm:prefix_cache_queries_total"] >= 80
    assert {"vllm:num_requests_running", "vllm:num_requests_waiting"} <= values.keys()
    sums = parse_sums(text)
    assert sums[f"{TTFT}_count"] >= 2 and sums[f"{TPOT}_sum"] > 0


def test_failure_injection_and_a_bad_profile():
    process, url = _start("--profile", "ci", "--fail-share", "0.99", "--seed", "1")
    try:
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(_post(url, "/v1/completions", {"prompt": "x", "max_tokens": 2}), timeout=5)
        assert error.value.code == 500
    finally:
        process.terminate()
        process.wait(timeout=10)
    done = subprocess.run(
        [sys.executable, "-m", "simulator", "--profile", "nope"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 2 and "no simulator profile 'nope'" in done.stderr


def test_the_log_says_how_late_its_steps_ran():
    """The server times each step's end against its plan and says so when it stops (SIGTERM, as the runner stops
    it): a request of 16 tokens takes 16 steps at least; the counts by hand from three steps."""
    process, url = _start("--profile", "ci", "--seed", "2")
    try:
        urllib.request.urlopen(_post(url, "/v1/completions", {"prompt": [1, 2, 3], "max_tokens": 16}), timeout=30)
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=10)
    line = next(line for line in out.splitlines() if line.startswith("simulator: lateness: "))
    assert int(line.split()[2]) >= 16 and "ended more than 1 ms after their planned end" in line
    lateness = Lateness()
    for late in (0.0002, 0.004, -0.0001):
        lateness.record(late)
    assert lateness.text() == (
        "simulator: lateness: 3 steps, 1 (33.3%) ended more than 1 ms after their planned end, the latest by 4.0 ms"
    )


def test_speculative_decoding_streams_every_token_and_exports_vllms_counters():
    """With `--speculative-config` a step gives several tokens: each is still its own event, the last one ends the
    stream, and /metrics carries the counters the runner reads (catalogue.stats.spec_decode), which vLLM exports only
    when drafting. Ten requests of 32 tokens at the ci profile's acceptance 0.6 with 3 drafts: a mean accepted
    length of 1 + 0.6 + 0.36 + 0.216 = 2.18 tokens a step, so the acceptance rate lands near 0.39."""
    process, url = _start("--profile", "ci", "--seed", "5", "--speculative-config", '{"num_speculative_tokens": 3}')
    try:
        with urllib.request.urlopen(f"{url}/metrics", timeout=5) as r:
            assert parse_counters(r.read().decode()) == Counters(0, 0, 0, {0: 0, 1: 0, 2: 0})
        for _ in range(10):
            body = {"prompt": [7, 8, 9], "max_tokens": 32, "stream": True}
            chunks = [json.loads(data) for _, data in _events(url, "/v1/completions", body)[:-1]]
            assert len(chunks) == 32 and [c["choices"][0]["finish_reason"] for c in chunks][-2:] == [None, "length"]
        with urllib.request.urlopen(f"{url}/metrics", timeout=5) as r:
            found = parse_counters(r.read().decode())
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert found is not None and found.draft_tokens == 3 * found.drafts
    assert sum(found.per_position.values()) == found.accepted
    assert 0.25 <= found.accepted / found.draft_tokens <= 0.55 and 100 <= found.drafts <= 200
    assert parse_counters("vllm:num_requests_running 0\n") is None  # the plain server exports none
