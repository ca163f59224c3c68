"""Process sessions: stopping ends everything a process started, even after the leader died first."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

from runner.hosts import server as srv


def test_stop_group_ends_the_session_when_its_leader_died_first(tmp_path):
    # the leader starts a child that outlives it, as vLLM's EngineCore and workers outlive the API server
    leader = srv.start(["sh", "-c", f"sleep 300 & echo $! > {tmp_path}/child.pid; exit 0"], {}, tmp_path / "x.log")
    leader.wait(timeout=10)
    deadline = time.monotonic() + 10
    while not (tmp_path / "child.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.session_members(leader.pid), "the child should still run in the leader's session"
    srv.stop_group(leader, grace_s=2)
    assert srv.session_members(leader.pid) == []
    assert (tmp_path / "sessions.txt").read_text().split()[0] == str(leader.pid)


def test_a_child_that_left_the_process_group_is_still_found_by_its_session(tmp_path):
    # The child says so once it has left the group (its pid, written to a file renamed into place): no guessed sleep.
    ready = tmp_path / "left.pid"
    script = (
        "import os, sys, time; os.setpgid(0, 0); "
        f"open('{ready}.tmp', 'w').write(str(os.getpid())); os.rename('{ready}.tmp', '{ready}'); time.sleep(300)"
    )
    leader = srv.start(["sh", "-c", f'python3 -c "{script}" & exit 0'], {}, tmp_path / "x.log")
    leader.wait(timeout=10)
    deadline = time.monotonic() + 60
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(ready.read_text())
    pgid = subprocess.run(["ps", "-o", "pgid=", "-p", str(child)], capture_output=True, text=True).stdout.strip()
    assert pgid == str(child) != str(leader.pid)  # a group of its own, outside the leader's
    members = srv.session_members(leader.pid)
    assert child in members
    srv.stop_group(leader, grace_s=2)
    assert srv.session_members(leader.pid) == []


def test_first_error_is_the_root_cause_not_a_warning_or_a_wrapper(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(
        "(APIServer pid=1) WARNING [system_utils.py:255] fd limit errors like "
        "`OSError: [Errno 24] Too many open files`\n"
        "(EngineCore pid=2) ERROR 11-22 [core.py:1510] ValueError: current platform cpu does not support ray.\n"
        "RuntimeError: Engine core initialization failed. See root cause above.\n"
    )
    assert srv.first_error(log) == "ValueError: current platform cpu does not support ray."
    failed = srv.failure("head on host a exited with code 1", log)
    assert (
        str(failed).splitlines()[0]
        == "head on host a exited with code 1: ValueError: current platform cpu does not support ray."
    )


def test_a_secret_a_process_prints_is_masked_before_its_log_is_written(tmp_path):
    """vLLM logs its non-default arguments at start-up; whatever a process prints passes the filter first."""
    log = tmp_path / "server.log"
    code = "print('non-default args: api_key=hf_Probe123 key=sk-probe'); print('ready', flush=True)"
    process = srv.start([sys.executable, "-c", code], {}, log, redact=["hf_Probe123", "sk-probe"])
    assert process.wait(timeout=30) == 0
    deadline = time.monotonic() + 30
    while "ready" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert log.read_text() == "non-default args: api_key=[redacted] key=[redacted]\nready\n"


def test_a_log_or_sessions_file_planted_as_a_link_is_never_written_through(tmp_path):
    # The client's container writes the raw folder: it planted /raw/server.log -> ~/.ssh/authorized_keys, and the
    # server's output (from the same image) was appended to the owner's file.
    victim = tmp_path / "authorized_keys"
    victim.write_text("ssh-ed25519 owner\n")
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "server.log").symlink_to(victim)
    with pytest.raises(srv.ServerFailed, match=r"server\.log: a symbolic link: the runner never writes through a link"):
        srv.start(["sh", "-c", "echo ssh-ed25519 attacker"], {}, raw / "server.log")
    assert not (raw / "sessions.txt").exists()  # nothing started
    (raw / "sessions.txt").symlink_to(victim)
    with pytest.raises(srv.ServerFailed, match=r"sessions\.txt: a symbolic link") as failed:
        srv.start(["sleep", "300"], {}, raw / "client.log")
    assert str(failed.value).startswith("sleep stopped: ") and victim.read_text() == "ssh-ed25519 owner\n"
    left = [p for p in psutil.Process().children(recursive=True) if p.cmdline() == ["sleep", "300"]]
    assert left == []  # the process it had started is ended, not left running
