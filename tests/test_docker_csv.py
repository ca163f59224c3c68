"""docker's CLI reads `--mount` with Go's encoding/csv, first record only: the cases below are Go's documented
behaviour (its reader_test.go table: quotes, bare quotes, empty lines, CRLF, multi-line quoted fields). The fuzzer
(tests/test_policy_fuzz.py) checks the same reading against the real docker CLI."""

from __future__ import annotations

import pytest

from catalogue.policy.docker_csv import CsvError, first_record


@pytest.mark.parametrize(
    ("value", "fields"),
    [
        ("a,b,c\n", ["a", "b", "c"]),
        ('"a ""quoted"" field",b', ['a "quoted" field', "b"]),
        ("\n\na,b", ["a", "b"]),
        ("\r\na,b", ["a", "b"]),
        ("a,b\r\n", ["a", "b"]),
        ('"a\nb",c', ["a\nb", "c"]),
        ('"a\r\nb",c', ["a\nb", "c"]),
        ("a,b\nc,d", ["a", "b"]),
        ("type=bind,source=/etc,target=/x\n,type=volume,target=/d", ["type=bind", "source=/etc", "target=/x"]),
        (",", ["", ""]),
        ('a,"b"', ["a", "b"]),
        ('"a"', ["a"]),
        ("a\r", ["a"]),
        ("a\rb,c", ["a\rb", "c"]),
        (" a , b ", [" a ", " b "]),
        ('"src=/a,b",dst=/c', ["src=/a,b", "dst=/c"]),
    ],
)
def test_the_first_record_as_go_reads_it(value, fields):
    assert first_record(value) == fields


@pytest.mark.parametrize("value", ['a "word",b', '"a "word","b"', '"abc', "", "\n\n", 'a,"b"c', '"a"\rb'])
def test_what_go_refuses_is_refused(value):
    with pytest.raises(CsvError):
        first_record(value)


@pytest.mark.parametrize(
    ("value", "fields"),
    [
        ("ab\r", ["ab"]),
        ('"",b', ["", "b"]),
        ('a,""', ["a", ""]),
        ('"a"\nnext', ["a"]),
        ('a,"b""c"', ["a", 'b"c']),
        ('"x\ny""z"', ['x\ny"z']),
    ],
)
def test_edges_of_the_first_record(value, fields):
    assert first_record(value) == fields


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "no record (an empty value)"),
        ("\n", "no record (an empty value)"),
        ('a "word",b', 'a bare " in the unquoted field \'a "word"\''),
        ('"a"b', 'an extraneous or missing " in a quoted field'),
        ('"abc', 'a quoted field with no closing "'),
        ('"', 'a quoted field with no closing "'),
        ('"abc\n', 'a quoted field with no closing "'),
        ('"abc\ndef', 'a quoted field with no closing "'),
    ],
)
def test_each_refusal_says_why(value, message):
    with pytest.raises(CsvError) as caught:
        first_record(value)
    assert str(caught.value) == message
