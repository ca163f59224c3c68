"""The runner's quality step without a server: the recipe's switch, tool-eval-bench's command, report and failures
(a stand-in script), and the accuracy check against a stand-in completions endpoint."""

from __future__ import annotations

import http.server
import json
import stat
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

from catalogue.models import quality as q
from runner.measuring import quality as rq

REPO = Path(__file__).resolve().parents[1]
REAL_REPORT = REPO / "examples" / "tiny-cpu" / "runs" / "20261125T071129Z" / "tool-eval.json"
"""tool-eval-bench 3.0.0's own --json-file report of the tiny example's committed run (random weights: 5 scenarios,
every one failed, final score 0)."""


def fake_tool(tmp_path: Path, body: str) -> str:
    """A `tool-eval-bench` that runs `body` with argv and the environment at hand."""
    script = tmp_path / "tool-eval-bench"
    script.write_text(f"#!{sys.executable}\nimport json, os, sys\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def writes(report: Path) -> str:
    """A stand-in's body: check how it was called, then write `report` where --json-file says."""
    return (
        "argv = sys.argv[1:]\n"
        "assert 'sk-secret' not in ' '.join(argv) and os.environ['TOOL_EVAL_API_KEY'] == 'sk-secret'\n"
        "assert 'TOOL_EVAL_MODEL' not in os.environ\n"
        f"open(argv[argv.index('--json-file') + 1], 'w').write(open({str(report)!r}).read())\n"
    )


def test_tool_calling_reads_the_report_and_never_puts_the_key_on_the_command_line(tmp_path, monkeypatch):
    monkeypatch.setenv("CATALOGUE_TOOL_EVAL", fake_tool(tmp_path, writes(REAL_REPORT)))
    monkeypatch.setenv("TOOL_EVAL_MODEL", "an owner's default")
    check = rq.tool_calling("http://127.0.0.1:9", "sk-secret", "tiny", tmp_path, "stamp")
    # the real report: final_score 0, scenarios TC-01, TC-02, TC-10, TC-11, TC-12, each with status "fail"
    assert (check.score, check.passed, check.items, check.raw) == (0.0, 0, 5, "stamp/tool-eval.json"), check.error
    assert json.loads((tmp_path / "tool-eval.json").read_text()) == json.loads(REAL_REPORT.read_text())


def test_tool_calling_counts_the_scenarios_that_passed(tmp_path, monkeypatch):
    """The real report with two scenarios marked passed and its score raised to 40, the one edit a model that
    passes them would make to it: passed counts them, the score is the report's own."""
    report = json.loads(REAL_REPORT.read_text())
    for scenario in report["scores"]["scenario_results"][1:3]:
        scenario.update(status="pass", points=2)
    report["final_score"] = 40
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(report))
    monkeypatch.setenv("CATALOGUE_TOOL_EVAL", fake_tool(tmp_path, writes(edited)))
    check = rq.tool_calling("http://127.0.0.1:9", "sk-secret", "tiny", tmp_path, "stamp")
    assert (check.score, check.passed, check.items) == (40.0, 2, 5), check.error


def test_a_failing_tool_gives_no_score(tmp_path, monkeypatch):
    body = "argv = sys.argv[1:]\nopen(argv[argv.index('--json-file') + 1], 'w').write('{\"error\": \"refused\"}')\n"
    monkeypatch.setenv("CATALOGUE_TOOL_EVAL", fake_tool(tmp_path, body + "sys.exit(1)"))
    check = rq.tool_calling("http://127.0.0.1:9", "k", "tiny", tmp_path, "stamp")
    assert check.score is None and "refused" in check.error
    monkeypatch.setenv("CATALOGUE_TOOL_EVAL", fake_tool(tmp_path, "sys.exit(0)"))  # exits without a report
    assert rq.tool_calling("http://127.0.0.1:9", "k", "tiny", tmp_path, "s").score is None


def test_accuracy_against_a_server_that_answers_every_item(monkeypatch):
    answers = {item.prompt: item.answer for item in q.accuracy_items()}
    wrong = set(list(answers)[:3])

    class Completions(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            assert body["temperature"] == 0 and self.headers["Authorization"] == "Bearer k"
            text = "x" if body["prompt"] in wrong else " " + answers[body["prompt"]]
            out = json.dumps({"choices": [{"text": text}]}).encode()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, format: str, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Completions)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        check = rq.accuracy(f"http://127.0.0.1:{server.server_address[1]}", "k", "tiny")
    finally:
        server.shutdown()
    assert (check.passed, check.items, check.score) == (17, 20, 85.0)
    assert rq.accuracy("http://127.0.0.1:9", "k", "tiny").error.startswith("URLError")


def replying(body: bytes) -> http.server.ThreadingHTTPServer:
    """A stand-in completions endpoint that answers every request with `body`."""

    class Reply(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Reply)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_reply_of_another_shape_size_or_depth_is_the_checks_error(monkeypatch):
    # {"choices": 5} was a TypeError that refresh re-raised as a traceback; deep JSON a RecursionError.
    cases = {
        b'{"choices": 5}': "a reply without `choices[0].text` as a string",
        b'{"choices": [{"text": 7}]}': "a reply without `choices[0].text` as a string",
        b"[" * 5000 + b"]" * 5000: "nested more than 64 deep: refused unparsed",
        b'{"choices": [{"text": "' + b"x" * (2 << 20) + b'"}]}': "a reply larger than 1024 KB: refused unread",
    }
    for body, why in cases.items():
        server = replying(body)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            check = rq.accuracy(url, "k", "tiny")
        finally:
            server.shutdown()
        assert check.score is None and check.error == f"CatalogueError: {url}/v1/completions: {why}", check.error


def test_tool_calling_never_writes_through_a_link_in_the_raw_folder(tmp_path, monkeypatch):
    # The benchmark client's container can write the raw folder: it may plant the report's or the log's name.
    monkeypatch.setenv("CATALOGUE_TOOL_EVAL", fake_tool(tmp_path, writes(REAL_REPORT) + "print('tool output')"))
    victim = tmp_path / "authorized_keys"
    victim.write_text("ssh-ed25519 owner\n")
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "tool-eval.json").symlink_to(victim)
    check = rq.tool_calling("http://127.0.0.1:9", "sk-secret", "tiny", raw, "stamp")
    assert check.score == 0.0, check.error
    assert victim.read_text() == "ssh-ed25519 owner\n" and not (raw / "tool-eval.json").is_symlink()
    (raw / "tool-eval.log").unlink()
    (raw / "tool-eval.log").symlink_to(victim)
    check = rq.tool_calling("http://127.0.0.1:9", "sk-secret", "tiny", raw, "stamp")
    assert (
        check.score is None
        and check.error == f"{raw / 'tool-eval.log'}: a symbolic link: the runner never writes through a link"
    )
    assert victim.read_text() == "ssh-ed25519 owner\n"


def test_a_recipe_that_turns_the_checks_off_records_its_reason(tmp_path):
    recipe = SimpleNamespace(
        sweep=SimpleNamespace(quality=q.QualitySetting(enabled=False, reason="an embedding model")),
        serving=SimpleNamespace(flags={"load-format": "dummy"}),
    )
    got = rq.run_checks(SimpleNamespace(), recipe, "k")
    assert got == q.Quality(skipped="an embedding model", random_weights=True)
