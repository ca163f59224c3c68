"""runner.hosts.raw_files: the runner's writes into and reads from a run's raw folder, which the benchmark client's
container can write (links, FIFOs, huge or malformed files planted there by the recipe's image)."""

from __future__ import annotations

import io
import json
import os

import pytest

from catalogue.models.errors import CatalogueError
from runner.hosts import raw_files as rf

VICTIM = "ssh-ed25519 AAAA owner@host\n"


@pytest.fixture
def victim(tmp_path):
    """A file outside the raw folder that a planted link names (as ~/.ssh/authorized_keys)."""
    path = tmp_path / "authorized_keys"
    path.write_text(VICTIM)
    return path


def test_appending_never_follows_a_link_and_refuses_what_is_not_one_regular_file(tmp_path, victim):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "server.log").symlink_to(victim)
    with pytest.raises(CatalogueError, match=r"server\.log: a symbolic link: the runner never writes through a link"):
        rf.open_append(raw / "server.log")
    os.link(victim, raw / "hard.log")  # a second name of a file elsewhere on the same file system
    with pytest.raises(CatalogueError, match="not a regular file with one name"):
        rf.open_append(raw / "hard.log")
    os.mkfifo(raw / "fifo.log")
    with pytest.raises(CatalogueError, match=r"fifo\.log: cannot write: No such device"):
        rf.open_append(raw / "fifo.log")  # refused at once (O_NONBLOCK: ENXIO with no reader), never a wait
    assert victim.read_text() == VICTIM
    with rf.open_append(raw / "new.log") as log:
        log.write(b"one\n")
    with rf.open_append(raw / "new.log") as log:
        log.write(b"two\n")
    assert (raw / "new.log").read_text() == "one\ntwo\n"
    with pytest.raises(CatalogueError, match="already there"):
        rf.open_append(raw / "new.log", fresh=True)


def test_events_are_read_within_the_limits_and_a_bad_line_names_the_file(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text('{"kind": "ready"}\n{"kind": "level", "na')
    assert rf.read_lines(events) == ([{"kind": "ready"}], False)  # the line still being written waits
    for text, why in [
        ("not json\n", "events.jsonl:1: not JSON: Expecting value"),
        ('{"kind": "ready"}\n5\n', "events.jsonl:2: not an event"),
        ("[" * 3000 + "]" * 3000 + "\n", "nested more than 64 deep"),
    ]:
        events.write_text(text)
        with pytest.raises(CatalogueError, match=why):
            rf.read_lines(events)
    events.unlink()
    events.symlink_to("/dev/zero")  # was read_text(): memory exhausted
    with pytest.raises(CatalogueError, match="a symbolic link"):
        rf.read_lines(events)
    events.unlink()
    os.mkfifo(events)  # was a hang
    with pytest.raises(CatalogueError, match="not a regular file"):
        rf.read_lines(events)
    events.unlink()
    events.write_text('{"kind": "x"}\n' * 2000)
    with pytest.raises(CatalogueError, match="larger than 16 KB"):
        rf.read_lines(events, limit=16 << 10)


def test_a_kept_report_replaces_a_planted_link_and_never_writes_through_it(tmp_path, victim):
    made = tmp_path / "scratch.json"
    made.write_text(json.dumps({"final_score": 1}))
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "report.json").symlink_to(victim)
    assert rf.keep_json(made, raw / "report.json") == {"final_score": 1}
    assert victim.read_text() == VICTIM and not (raw / "report.json").is_symlink()
    (raw / "level").symlink_to(tmp_path)  # a folder name planted as a link to a folder elsewhere
    with pytest.raises(CatalogueError, match="not a folder"):
        rf.raw_folder(raw / "level")
    with pytest.raises(CatalogueError, match="not a folder"):
        rf.keep_file(made, raw / "level" / "authorized_keys")
    assert victim.read_text() == VICTIM


def test_a_log_is_shown_only_from_a_regular_file_and_only_its_end(tmp_path, victim):
    log = tmp_path / "x.log"
    log.write_text("a\n" * 100 + "last\n")
    assert rf.read_tail(log, 10) == "\na\na\nlast\n"
    assert rf.read_tail(log, 4, tail=False) == "a\na\n"
    link = tmp_path / "link.log"
    link.symlink_to(victim)
    assert rf.read_tail(link) == ""


def test_a_reply_is_read_within_its_limit_and_its_shape_checked():
    assert rf.reply_text(rf.read_reply(io.BytesIO(b'{"choices": [{"text": " 4"}]}'), "u"), "u") == " 4"
    with pytest.raises(CatalogueError, match="u: a reply larger than 1 KB"):
        rf.read_reply(io.BytesIO(b" " * 2000), "u", limit=1024)
    for body in ({"choices": 5}, {"choices": []}, {"choices": [{"text": None}]}, [1]):
        with pytest.raises(CatalogueError, match="u: a reply without `choices"):
            rf.reply_text(body, "u")
    assert rf.reply_version(io.BytesIO(b'{"version": "0.32.0"}'), "u") == "0.32.0"
    assert rf.reply_version(io.BytesIO(b'["0.32.0"]'), "u") is None
