"""catalogue.policy.secret_scan, function by function: the masks, which names and values count, the paths the
entropy detector must not flag, the keyword reading of a line, one hit per line, and the formats-only scan of
text a model wrote."""

from __future__ import annotations

import signal
import time
from contextlib import contextmanager
from itertools import pairwise

import pytest

from catalogue.policy.secret_scan import (
    OVERLAP,
    WINDOW,
    _word_at,
    is_literal,
    is_path,
    is_secret_name,
    keyword_hits,
    mask,
    plugin_hits,
    quiet_names,
    redact,
    scan_text,
    scan_texts,
    value_is_secret,
    windows,
)

HF = "hf_SeCrEtToKeN1234567890"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_mask_keeps_three_characters_of_a_value_of_twelve_or_more():
    assert mask("abcdefghijkl") == "abc********"
    assert mask("abcdefghijk") == "********"
    assert mask("") == "********"


def test_redact_masks_the_longest_value_first_and_skips_empty_ones():
    text = "x abcdefghijklmnop y abcdefghijkl z"
    assert redact(text, ["abcdefghijkl", "abcdefghijklmnop", ""]) == "x abc******** y abc******** z"
    assert redact("abc", []) == "abc"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("HF_TOKEN", True),
        ("token", True),
        ("OPENAI_API_KEY", True),
        ("api-key", True),
        ("AWS_SECRET", True),
        ("DB_Password", True),
        ("X_PASSWD", True),
        ("MYAPIKEY", False),
        ("X_APIKEY", True),
        ("HF_HUB_DISABLE_IMPLICIT_TOKEN_X", False),
        ("TIKTOKEN", False),
        ("KEYS", False),
    ],
)
def test_is_secret_name(name, expected):
    assert is_secret_name(name) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", False),
        ("  ", False),
        ("1", False),
        ("TRUE", False),
        ("off", False),
        ("null", False),
        ("TODO later", False),
        ("$HF_TOKEN", False),
        ("os.environ/OPENAI_KEY", False),
        ("<your token>", False),
        ("hf_********", False),
        ("****", False),
        ("xxxx", False),
        ("...", False),
        ("~0.1s", False),
        ("30", False),
        ("250ms", False),
        ("95%", False),
        ("1234567", True),
        ("s3cret", True),
        ("2", False),
        ("a", True),
    ],
)
def test_is_literal(value, expected):
    assert is_literal(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("examples/tiny-cpu/runs/20261125T043519Z", True),
        ("./runs/x", True),
        ("~/cache/a", True),
        ("../abc/", False),
        ("aB3dE5gH/iJ8kL0mN/oP2qR4sT", False),
        ("nowords", False),
        ("/abcd", False),
    ],
)
def test_is_path(value, expected):
    assert is_path(value) is expected


def test_word_at_widens_a_part_to_its_whole_word():
    assert _word_at("key: [abcXYZdef, 'q']", "XYZ") == "abcXYZdef"
    assert _word_at("key: value", "missing") == "missing"
    assert _word_at("a = b", "=") == "="


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("HF_TOKEN: s3cr3tvalue", [("keyword HF_TOKEN", "s3cr3tvalue")]),
        ("HF_TOKEN='s3cr3tvalue'", [("keyword HF_TOKEN", "s3cr3tvalue")]),
        ('"api-key" : "abc123"', [("keyword api-key", "abc123")]),
        ("--api-key=abc123 and --api-key 'def456'", [("keyword --api-key", "abc123"), ("keyword --api-key", "def456")]),
        ("options: [--api-key, abc123]", [("keyword --api-key", "abc123")]),
        ("HF_TOKEN: $HF_TOKEN", []),
        ("--api-key $KEY", []),
        ("HOST: 0.0.0.0", []),
        ("A_TOKEN: x, C_TOKEN: x9, B_KEY: yyyy", [("keyword C_TOKEN", "x9"), ("keyword B_KEY", "yyyy")]),
    ],
)
def test_keyword_hits(line, found):
    hits = keyword_hits(line, 4)
    assert [(h.kind, h.value) for h in hits] == found
    assert all(h.line == 4 and h.masked == mask(h.value) for h in hits)


def test_plugin_hits_finds_formats_with_their_line():
    (hit,) = [h for h in plugin_hits(f"status: {HF}", 3) if h.kind == "Hugging Face Token"]
    assert (hit.line, hit.value, hit.masked) == (3, HF, "hf_********")
    assert plugin_hits("a plain sentence") == []


def test_an_entropy_hit_that_is_a_path_is_dropped():
    assert scan_text("path: examples/tiny-cpu/runs/20261125T043519Z/a1B2c3D4e5F6g7H8") == []


def test_scan_text_gives_one_hit_per_line_with_its_number():
    text = f"a: 1\nHF_TOKEN: {HF} OPENAI_API_KEY: abcdef123\n# yaml-language-server: $schema=x {HF}\nz: {GITHUB}"
    found = scan_text(text)
    assert [(s.line, s.kind) for s in found] == [(2, "keyword HF_TOKEN"), (4, "GitHub Token")]


def test_a_comment_is_scanned_unless_it_is_the_schema_line():
    assert [s.line for s in scan_text(f"# note {HF}")] == [1]


def test_scan_texts_looks_only_for_formats_in_generated_text():
    texts = ["password = hunter2hunter2", "password = hunter2hunter2", f"out {HF}"]
    found = scan_texts(texts, generated=[False, True, True])
    assert found[0] and found[0][0].value == "hunter2hunter2"
    assert found[1] == []
    assert [s.kind for s in found[2]] == ["Hugging Face Token"]
    assert scan_texts(texts[:1]) == [scan_text(texts[0], "run.json")]


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("HF_TOKEN", "abc", True),
        ("HF_TOKEN", "$HF_TOKEN", False),
        ("ANY", GITHUB, True),
        ("ANY", "DEBUG", False),
        ("password", "hunter2hunter2", True),
        ("VLLM_LOGGING_LEVEL", "", False),
    ],
)
def test_value_is_secret(name, value, expected):
    assert value_is_secret(name, value) is expected


def test_word_at_takes_the_first_place_and_only_a_word_holding_it():
    assert _word_at("ab abc", "ab") == "ab"
    assert _word_at("abcdef", "abc") == "abcdef"
    assert _word_at("ab=cd", "=cd") == "=cd"


def test_redact_masks_a_longer_value_before_one_inside_it():
    assert redact("x abcdefghijklmnopq y", ["bcdefghijklm", "abcdefghijklmnopq"]) == "x abc******** y"


def test_a_token_inside_a_path_is_still_a_token():
    kinds = [s.kind for s in scan_text(f"at: cache/{HF}/token")]
    assert kinds == ["Hugging Face Token"]


def test_an_indented_schema_comment_is_skipped():
    assert scan_text(f"  # yaml-language-server: $schema={HF}") == []


def test_line_numbers_by_default_and_in_generated_text():
    assert [h.line for h in plugin_hits(f"status: {HF}")] == [1]
    (found,) = scan_texts([f"a\nout {HF}"], generated=[True])
    assert [s.line for s in found] == [2]


@contextmanager
def deadline(seconds: int):
    """Fail (not hang) when the block runs longer than `seconds`: the quadratic scan took 82 s on 20 KB."""

    def expired(*_):
        raise TimeoutError(f"took over {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("word", ["api_key", "a", "-1a"])
def test_keyword_hits_read_a_long_line_of_name_characters_in_linear_time(word):
    line = word * (200_000 // len(word)) + " HF_TOKEN=" + HF
    start = time.monotonic()
    with deadline(20):  # before: about 80 minutes (quadratic, 82 s at 20 KB)
        hits = keyword_hits(line)
    assert [hit.value for hit in hits] == [HF], time.monotonic() - start


@pytest.mark.parametrize("word", ["api_key", "password", "pwd:=0 "])
def test_the_detectors_read_a_long_line_of_keyword_names_in_bounded_time(word):
    line = word * (200_000 // len(word))
    with deadline(30):  # before: hours (detect-secrets' keyword patterns, quadratic in a word's names)
        assert scan_text(line + " " + GITHUB)[0].value == GITHUB


def test_windows_overlap_and_cover_the_line():
    line = "".join(chr(65 + i % 26) for i in range(5 * WINDOW + 17))
    parts = windows(line)
    assert all(len(window) <= WINDOW and line[start : start + WINDOW] == window for start, window in parts)
    assert parts[0][0] == 0 and parts[-1][0] + len(parts[-1][1]) == len(line)
    assert all(b[0] == a[0] + WINDOW - OVERLAP for a, b in pairwise(parts))
    assert windows("short") == [(0, "short")] and windows("") == [(0, "")]


@pytest.mark.parametrize("border", [WINDOW, 2 * WINDOW - OVERLAP, 3 * WINDOW - 2 * OVERLAP])
@pytest.mark.parametrize("before", [1, len(GITHUB) // 2, len(GITHUB) - 1])
def test_a_token_across_a_window_border_is_found_whole(border, before):
    filler = "lorem ipsum " * (4 * WINDOW // 12)
    line = filler[: border - before - 1] + " " + GITHUB + " " + filler
    assert line.index(GITHUB) < border < line.index(GITHUB) + len(GITHUB)
    assert [(hit.kind, hit.value) for hit in plugin_hits(line)] == [("GitHub Token", GITHUB)]
    assert scan_text("x: 1\n" + line)[0].line == 2


def test_a_keyword_pair_across_a_window_border_is_found_by_the_keyword_detector():
    line = "lorem ipsum " * (WINDOW // 12) + 'db_password = "Zq8vLm2Rt" ' + "lorem ipsum " * 200
    assert any(hit.kind == "Secret Keyword" and hit.value == "Zq8vLm2Rt" for hit in plugin_hits(line))


def test_quiet_names_zeroes_only_a_word_of_two_or_more_names_and_keeps_the_length():
    text = 'x_password = "v" api_keyapi_key pwdsecret ab'
    quiet = quiet_names(text)
    assert len(quiet) == len(text) and quiet.startswith('x_password = "v" ') and quiet.endswith(" ab")
    assert "api_key" not in quiet and "pwd" not in quiet and "0" * 14 in quiet


def test_a_line_of_many_distinct_tokens_is_read_in_linear_time():
    tokens = [f"hf_{i:08d}SeCrEtToKeN{i:08d}" for i in range(20_000)]
    with deadline(20):  # each hit was compared with every earlier one: about 2e8 comparisons
        hits = plugin_hits(" ".join(tokens))
    assert sorted(hit.value for hit in hits if hit.kind == "Hugging Face Token") == tokens  # each once
