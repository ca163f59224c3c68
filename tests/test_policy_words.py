"""catalogue.policy.words: which command-line words of a `serving` block are refused, what the line shows, and
the edges of each rule (C0/DEL/C1 control characters, the 60-character cut, '-' then a digit is a number)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from catalogue.models.recipe import Serving
from catalogue.policy.words import argv_strings, check_flag_values, check_image_word, check_words, control_char


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text", None),
        ("", None),
        ("a\nb", "U+000A"),
        ("\x00", "U+0000"),
        ("x\x7f", "U+007F"),
        ("x\x9b", "U+009B"),
        ("ok\x1b[31m\n", "U+001B"),
        ("é ü ñ 模型", None),
        ("é ü \u200b", "U+200B"),  # zero-width space (Cf): attack44d finding 8, these passed
        ("m\u202egnp.exe", "U+202E"),  # right-to-left override
        ("a\u2066b", "U+2066"),  # left-to-right isolate
        ("a\u2028b", "U+2028"),  # line separator (Zl): printed as a real newline inside the quoted word
        ("a\u2029b", "U+2029"),  # paragraph separator (Zp)
        ("\ufeffx", "U+FEFF"),  # byte-order mark (Cf)
    ],
)
def test_control_char_names_the_first_one(text, expected):
    assert control_char(text) == expected


def test_argv_strings_walks_every_command_line_string():
    serving = Serving(
        image="img",
        model_path="/m",
        container={"name": "box", "options": ["--ipc=host"]},
        env={"A": "1"},
        env_from_host=["HF_TOKEN"],
        flags={"served-model-name": ["a", "b"], "port": 8000},
    )
    found = list(argv_strings(serving))
    assert found == [
        (("serving", "container", "options", 0), "--ipc=host"),
        (("serving", "container", "name"), "box"),
        (("serving", "env"), "A"),
        (("serving", "env", "A"), "1"),
        (("serving", "env_from_host", 0), "HF_TOKEN"),
        (("serving", "flags"), "served-model-name"),
        (("serving", "flags", "served-model-name", 0), "a"),
        (("serving", "flags", "served-model-name", 1), "b"),
        (("serving", "flags"), "port"),
        (("serving", "image"), "img"),
        (("serving", "model_path"), "/m"),
    ]


def test_argv_strings_without_container_or_image():
    found = list(argv_strings(Serving(flags={"x": "y"})))
    assert found == [(("serving", "flags"), "x"), (("serving", "flags", "x"), "y")]


def test_a_container_without_a_name_yields_no_name():
    found = list(argv_strings(Serving(image="i", container={"options": []})))
    assert found == [(("serving", "image"), "i")]


def test_a_control_character_is_never_with_its_field_and_code_point():
    (finding,) = check_words(Serving(env={"A": "x\ny"}))
    assert finding.cls == "never"
    assert finding.field == ("serving", "env", "A")
    assert finding.option == "x\\ny"
    assert "(U+000A)" in finding.why
    assert finding.how.startswith("never allowed: write it on one line")
    assert finding.basis == "catalogue policy (docker's CSV reads one line)"


def test_the_shown_word_is_cut_after_60_characters():
    exact = "a" * 58 + "\n"  # shown as 60 characters: kept whole
    (kept,) = check_words(Serving(env={"A": exact}))
    assert kept.option == "a" * 58 + "\\n"
    (cut,) = check_words(Serving(env={"A": "a" * 59 + "\n"}))  # 61 characters shown
    assert cut.option == "a" * 57 + "..."


def test_each_bad_word_gives_one_finding():
    findings = check_words(Serving(env={"A": "\x00", "B": "ok"}, flags={"x": "\x1b"}))
    assert [f.field for f in findings] == [("serving", "env", "A"), ("serving", "flags", "x")]


def test_check_words_adds_the_image_and_flag_rules():
    findings = check_words(Serving(image="-v/etc:/x", flags={"served-model-name": ["m", "--worker-cls"]}))
    assert [f.field for f in findings] == [("serving", "image"), ("serving", "flags", "served-model-name")]


@pytest.mark.parametrize("image", ["-v/etc:/x", "-"])
def test_an_image_that_starts_with_a_dash_is_never(image):
    (finding,) = check_image_word(Serving(image=image))
    assert finding.cls == "never"
    assert finding.option == f"image {image}"
    assert finding.field == ("serving", "image")
    assert "starts with '-'" in finding.why
    assert finding.how.startswith("never allowed: write the image reference")
    assert finding.basis == "catalogue policy (a word of the command line means one thing)"


@pytest.mark.parametrize("image", ["vllm/vllm-openai latest", "a\u2003b", "x\u00a0y"])
def test_an_image_with_whitespace_is_never(image):
    (finding,) = check_image_word(Serving(image=image))
    assert finding.cls == "never"
    assert finding.option == f"image {image}"
    assert finding.why.startswith("whitespace in the image")
    assert finding.field == ("serving", "image")
    assert finding.how.startswith("never allowed: write the image reference")
    assert finding.basis == "catalogue policy (a word of the command line means one thing)"


def test_the_image_shown_is_cut_at_60_characters():
    (finding,) = check_image_word(Serving(image="-" + "a" * 80))
    assert finding.option == "image -" + "a" * 59


@pytest.mark.parametrize("image", [None, "vllm/vllm-openai:v0.9", "a-b/c-d", "-a\nb"])
def test_images_this_rule_leaves_alone(image):
    # a control character is the first rule's finding, not this one's
    assert check_image_word(Serving(image=image)) == []


@pytest.mark.parametrize("value", ["--worker-cls", "-x", ["m", "--worker-cls"], ("m", "-Z")])
def test_a_flag_value_that_reads_as_a_flag_is_never(value):
    (finding,) = check_flag_values(Serving.model_construct(flags={"name": value}, model_path=None))
    assert finding.cls == "never"
    assert finding.field == ("serving", "flags", "name")
    assert finding.why == "vLLM's parser reads a word that starts with '-' and a letter as a flag of its own"
    assert finding.how.startswith("never allowed: every flag is a key of serving.flags")
    assert finding.basis == "catalogue policy (docker's CSV reads one line)"
    assert finding.option.startswith("-")


@pytest.mark.parametrize("value", ["-1", "-0.5", "-.5", "-", "a-b", 3, -4, ["1", "-2"], True])
def test_numbers_and_plain_words_are_flag_values(value):
    assert check_flag_values(Serving.model_construct(flags={"name": value}, model_path=None)) == []


def test_a_model_path_that_reads_as_a_flag_is_never():
    (finding,) = check_flag_values(Serving(model_path="--trust-remote-code"))
    assert finding.field == ("serving", "model_path")
    assert finding.option == "--trust-remote-code"


def test_the_flag_value_shown_is_cut_at_60_characters():
    (finding,) = check_flag_values(Serving(flags={"name": "-" + "b" * 99}))
    assert finding.option == "-" + "b" * 59


def test_a_serving_block_without_image_or_model_path_fields():
    # the rules read `image` and `model_path` only where the block has them (a draft's serving block may not)
    bare = SimpleNamespace(container=None, env={"A": "\n"}, env_from_host=[], flags={"x": "--y"})
    assert [f.field for f in check_words(bare)] == [("serving", "env", "A"), ("serving", "flags", "x")]
    assert list(argv_strings(bare))[-1] == (("serving", "flags", "x"), "--y")


def test_the_attackers_bidi_served_model_name_is_never():
    """attack44d finding 8: findings/bidi-recipe.yaml's served-model-name validated with 0 errors."""
    (found,) = check_words(Serving(flags={"served-model-name": "gpt\u202eoss\u2028x"}))
    assert found.cls == "never" and found.field == ("serving", "flags", "served-model-name")
    assert "(U+202E)" in found.why and found.option == "gpt\\u202eoss\\u2028x"
