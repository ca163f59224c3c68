"""catalogue.policy.file_secrets, fast and on made-up files: every string of parsed JSON with its location (a
credential also found by the name it is stored under, an argv as one line), model text searched for credential
formats only, each credential once, its line in the file, and the one-line error that names file, field and line
with the value masked; JSON, JSON Lines and plain text files; mask_text."""

from __future__ import annotations

import json

import pytest

from catalogue.models.bounded import MAX_DEPTH
from catalogue.models.errors import CatalogueError
from catalogue.policy.file_secrets import (
    check_json,
    file_secret_errors,
    json_secret_errors,
    json_secrets,
    json_strings,
    mask_text,
    text_line,
)

HF = "hf_" + "FileSecretsToken0123456789ab"
HF2 = "hf_" + "OtherSecretsToken987654321zy"
WORDS = "abcdefgh12345678"
HOW = "the catalogue never keeps a credential: remove it from the file"


def test_json_strings_walks_every_string_with_its_location():
    data = {
        "a": "x",
        "HF_TOKEN": "v",
        "l": ["--key", "q", "w"],
        "p": ["p", "q"],
        "n": 1,
        "m": [1, "s"],
        "e": [],
        7: {"k": None},
    }
    assert list(json_strings(data)) == [
        (("a",), "a"),
        (("a",), "x"),
        (("HF_TOKEN",), "HF_TOKEN"),
        (("HF_TOKEN",), "HF_TOKEN: v"),  # found by the name it is stored under
        (("HF_TOKEN",), "v"),
        (("l",), "l"),
        (("l", 0), "--key"),
        (("l", 1), "q"),
        (("l", 2), "w"),
        (("l",), "--key q"),  # an argv: a flag and its value are two words, joined as one line
        (("p",), "p"),
        (("p", 0), "p"),
        (("p", 1), "q"),  # no flag among them: no joined line
        (("n",), "n"),
        (("m",), "m"),
        (("m", 1), "s"),
        (("e",), "e"),
        (("7",), "7"),
        (("7", "k"), "k"),
    ]
    assert list(json_strings("top", ("r",))) == [(("r",), "top")]
    assert list(json_strings(3)) == [] and list(json_strings(None)) == []
    assert list(json_strings(["-x", 5, "-y", "z"])) == [((0,), "-x"), ((2,), "-y"), ((3,), "z"), ((), "-y z")]


def test_a_secret_name_with_a_value_that_is_not_text_is_not_a_pair():
    assert list(json_strings({"HF_TOKEN": 5})) == [(("HF_TOKEN",), "HF_TOKEN")]
    assert list(json_strings({"HF_TOKEN": ["a"]})) == [
        (("HF_TOKEN",), "HF_TOKEN"),
        (("HF_TOKEN", 0), "a"),
    ]


def test_json_secrets_reports_each_credential_once_at_its_first_string():
    data = {"notes": [f"first {HF}", f"again {HF}"], "env": {"HF_TOKEN": WORDS}, "argv": ["--api-key", HF2]}
    found = json_secrets(data)
    assert [(loc, s.kind, s.value) for loc, s in found] == [
        (("notes", 0), "Hugging Face Token", HF),
        (("env", "HF_TOKEN"), "keyword HF_TOKEN", WORDS),
        (("argv", 1), "Hugging Face Token", HF2),
    ]
    assert json_secrets({"notes": ["nothing", "here"]}) == []


def test_model_text_is_searched_for_credential_formats_only():
    written = {"generated_text": f"password: {WORDS}", "outputs": [f"api_key = {WORDS}"]}
    assert json_secrets(written) == []  # a random model writes `name: value` pairs by chance
    (hit,) = json_secrets({"requests": [{"prompt": f"use {HF}"}]})
    assert hit[0] == ("requests", 0, "prompt") and hit[1].value == HF
    (prose,) = json_secrets({"notes": f"password: {WORDS}"})
    assert prose[1].kind == "keyword password"


def test_text_line_finds_the_value_as_written_or_json_escaped():
    text = 'line one\n  "k": "a\\"b"\n  "u": "caf\\u00e9 x"\nplain é y\n'
    assert text_line(text, 'a"b') == 2
    assert text_line(text, "café x") == 3
    assert text_line(text, "é y") == 4
    assert text_line(text, "line one") == 1
    assert text_line(text, "absent") is None
    assert text_line(text, "") is None


def test_json_secret_errors_name_file_field_and_line_masked():
    data = {"provenance": {"hosts": [{"note": f"pull with {HF}"}]}, "env": {"HF_TOKEN": WORDS}}
    text = json.dumps(data, indent=2)
    errors = json_secret_errors("run.json", text, data)
    assert [str(e) for e in errors] == [
        f"run.json:5: provenance.hosts[0].note: a secret in the file (Hugging Face Token: hf_********); {HOW}",
        f"run.json:10: env.HF_TOKEN: a secret in the file (keyword HF_TOKEN: abc********); {HOW}",
    ]
    assert HF in text.splitlines()[4] and WORDS in text.splitlines()[9]


def test_an_argv_at_the_top_has_no_field():
    data = ["--api-key", "sk-" + "proj-abcdefgh12345678"]
    (error,) = json_secret_errors("cmd.json", json.dumps(data), data)
    assert error.field is None and error.line == 1
    assert str(error) == f"cmd.json:1: a secret in the file (keyword --api-key: sk-********); {HOW}"


def test_check_json_raises_the_first_credential():
    data = {"a": f"x {HF}", "b": f"y {HF2}"}
    with pytest.raises(CatalogueError) as caught:
        check_json("r.json", json.dumps(data), data)
    assert caught.value.field == "a" and HF not in str(caught.value)
    assert check_json("r.json", "{}", {"a": "clean"}) is None


def test_a_json_file_is_scanned_string_by_string(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"notes": ["ok", f"token \\u0068 {HF}"]}, indent=1))
    (error,) = file_secret_errors(path)
    assert (error.path, error.field, error.line) == (path, "notes[1]", 4)
    escaped = tmp_path / "escaped.json"
    escaped.write_text('{"notes": ["\\u0068' + HF[1:] + '"]}')
    (decoded,) = file_secret_errors(escaped)
    assert decoded.field == "notes[0]" and "Hugging Face Token" in decoded.message


def test_a_json_file_that_is_not_json_is_scanned_as_text(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text(f'{{"a": 1,\n"b": "{HF}"\n')
    (error,) = file_secret_errors(path)
    assert (error.field, error.line) == (None, 2)
    assert str(error).startswith(f"{path}:2: a secret in the file (")
    assert str(error).endswith(": hf_********); " + HOW) and HF not in str(error)


def test_a_json_file_nested_too_deep_is_refused_unparsed(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * (MAX_DEPTH + 1) + f'"{HF}"' + "]" * (MAX_DEPTH + 1))
    (error,) = file_secret_errors(path)
    assert str(error) == f"{path}: nested more than {MAX_DEPTH} deep: refused unparsed"
    shallow = tmp_path / "shallow.json"
    shallow.write_text("[" * MAX_DEPTH + f'"{HF}"' + "]" * MAX_DEPTH)
    assert [e.line for e in file_secret_errors(shallow)] == [1]


def test_json_lines_are_scanned_record_by_record(tmp_path):
    path = tmp_path / "requests.jsonl"
    lines = [
        json.dumps({"prompt": "hello"}),
        "",
        json.dumps({"notes": f"x {HF}"}),
        f"not json {HF2}",
        json.dumps({"generated_text": f"password: {WORDS}"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    errors = file_secret_errors(path)
    assert [(e.field, e.line) for e in errors] == [("notes", 3), (None, 4)]
    assert [e.message.split(";")[0] for e in errors] == [
        "a secret in the file (Hugging Face Token: hf_********)",
        "a secret in the file (Hugging Face Token: hf_********)",
    ]


def test_a_json_lines_record_nested_too_deep_names_its_line(tmp_path):
    path = tmp_path / "requests.jsonl"
    path.write_text(json.dumps({"notes": f"x {HF}"}) + "\n" + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n")
    (error,) = file_secret_errors(path)
    assert str(error) == f"{path}:2: nested more than {MAX_DEPTH} deep: refused unparsed"


def test_a_text_file_is_scanned_line_by_line(tmp_path):
    path = tmp_path / "server.log"
    path.write_text(f"start\nHF_TOKEN={WORDS}\nok\nusing {HF}\n")
    assert [str(e) for e in file_secret_errors(path)] == [
        f"{path}:2: a secret in the file (keyword HF_TOKEN: abc********); {HOW}",
        f"{path}:4: a secret in the file (Hugging Face Token: hf_********); {HOW}",
    ]
    clean = tmp_path / "clean.txt"
    clean.write_text("nothing here\n")
    assert file_secret_errors(clean) == []


def test_a_file_that_is_not_text_is_one_error(tmp_path):
    path = tmp_path / "blob.json"
    path.write_bytes(b'{"a": "\xff\xfe"}')
    (error,) = file_secret_errors(path)
    assert str(error) == f"{path}: cannot read: not UTF-8 text (invalid start byte at byte 7)"


def test_mask_text_masks_every_credential_and_lists_each_once():
    text = f"a {HF}\nHF_TOKEN={WORDS}\nagain {HF} and {HF2}\n"
    masked, found = mask_text(text)
    assert masked == "a hf_********\nHF_TOKEN=abc********\nagain hf_******** and hf_********\n"
    assert [s.value for s in found] == [HF, WORDS, HF2]
    assert mask_text("nothing to hide\n") == ("nothing to hide\n", [])


def test_text_line_tries_each_escaped_form_whole():
    """A value as JSON writes it, non-ASCII escaped or kept: the whole form, not a part of it."""
    text = 'z\\"b\na\\"b\n'  # line 1 holds only the end of the escaped form of 'a"b'
    assert text_line(text, 'a"b') == 2
    kept = 'é\\"x!\nq\\"xy\né\\"xy\n'  # the form with é kept and the quote escaped is whole on line 3 only
    assert text_line(kept, 'é"xy') == 3


def test_the_error_names_the_file_it_was_read_from(tmp_path):
    data = {"a": f"x {HF}"}
    with pytest.raises(CatalogueError) as caught:
        check_json("runs/r.json", json.dumps(data), data)
    assert caught.value.path == "runs/r.json"
    path = tmp_path / "requests.jsonl"
    path.write_text(json.dumps(data) + "\n" + f"not json {HF2}\n")
    assert [(e.path, e.line) for e in file_secret_errors(path)] == [(path, 1), (path, 2)]


def test_a_text_is_scanned_as_the_kind_of_file_it_is(tmp_path):
    """detect-secrets reads `name => "value"` as a credential in a log, not in YAML: the file's own name decides."""
    line = 'pwd => "Zq8vLmN3pRt"'
    log = tmp_path / "server.log"
    log.write_text(f"start\n{line}\n")
    assert [(e.line, e.message.split(";")[0]) for e in file_secret_errors(log)] == [
        (2, "a secret in the file (Secret Keyword: ********)")
    ]
    lines = tmp_path / "requests.jsonl"
    lines.write_text(f"{line}\n")
    assert [e.line for e in file_secret_errors(lines)] == [1]
    yaml_file = tmp_path / "notes.yaml"
    yaml_file.write_text(f"{line}\n")
    assert file_secret_errors(yaml_file) == []


def test_a_file_of_many_credentials_reports_the_first_twenty_once_each():
    """Each reported credential costs a search of the file for its line: a stranger's file of thousands of distinct
    ones is cut at MAX_REPORTED (a review timed 8,000 at 2.7 s, growing with their square)."""
    from catalogue.policy.file_secrets import MAX_REPORTED

    tokens = [f"hf_{i:04d}" + "FileSecretsManyTokensAbcdefgh" for i in range(50)]
    found = json_secrets({"notes": [*tokens, tokens[0]]})
    assert MAX_REPORTED == 20
    assert [s.value for _, s in found] == tokens[:20]
    assert [loc for loc, _ in found] == [("notes", i) for i in range(20)]
