"""catalogue.policy.images: the trust list (a repository, or a namespace ending in '/', normalised as docker names
images), the publisher named in the why, and the consent an untrusted image needs."""

from __future__ import annotations

import pytest

from catalogue.policy.images import check_image, image_option, is_trusted, publisher, trust_entry


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("vllm/vllm-openai", "docker.io/vllm/vllm-openai"),
        ("ubuntu", "docker.io/library/ubuntu"),
        ("nvcr.io/nvidia/", "nvcr.io/nvidia/"),
        ("vllm/", "docker.io/vllm/"),
        ("ghcr.io/a/b:tag", "ghcr.io/a/b"),
        ("localhost:5000/", "localhost:5000/"),
        ("index.docker.io/", "docker.io/library/"),
        ("ghcr.io/teamX/", "ghcr.io/teamX/"),
    ],
)
def test_trust_entry_normalises_and_keeps_a_namespace_slash(entry, expected):
    assert trust_entry(entry) == expected


@pytest.mark.parametrize(
    ("image", "trusted", "expected"),
    [
        ("vllm/vllm-openai:v0.9", ["vllm/vllm-openai"], True),
        ("docker.io/vllm/vllm-openai@sha256:" + "0" * 64, ["vllm/vllm-openai"], True),
        ("vllm/vllm-openai-evil", ["vllm/vllm-openai"], False),
        ("nvcr.io/nvidia/vllm:25.09", ["nvcr.io/nvidia/"], True),
        ("nvcr.io/nvidiax/vllm", ["nvcr.io/nvidia/"], False),
        ("nvcr.io/nvidia", ["nvcr.io/nvidia/"], False),
        ("ghcr.io/x/y", [], False),
        ("ghcr.io/x/y", ["other/z", "ghcr.io/x/y"], True),
        ("ubuntu", ["library/ubuntu"], True),
        ("localhost:5000/team/img:1", ["localhost:5000/"], True),
        ("localhost:5001/team/img", ["localhost:5000/"], False),
    ],
)
def test_is_trusted(image, trusted, expected):
    assert is_trusted(image, trusted) is expected


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("ghcr.io/someone/img:1", "ghcr.io/someone/"),
        ("ubuntu", "docker.io/library/"),
        ("a/b/c", "docker.io/a/b/"),
    ],
)
def test_publisher_is_the_namespace(image, expected):
    assert publisher(image) == expected


def test_image_option_names_the_repository():
    assert image_option("ghcr.io/x/y:tag") == "image ghcr.io/x/y"


def test_a_trusted_image_or_none_needs_no_consent():
    assert check_image(None, [], {}) == []
    assert check_image("vllm/vllm-openai:v1", ["vllm/vllm-openai"], {}) == []


def test_an_untrusted_image_is_an_undeclared_consent():
    (finding,) = check_image("ghcr.io/x/y:1", ["vllm/vllm-openai"], {})
    assert finding.cls == "consent"
    assert finding.option == "image ghcr.io/x/y"
    assert finding.why == "runs the code of an image the trust list does not name (publisher ghcr.io/x/)"
    assert finding.basis == "catalogue image rule (CIS 4.1, 5: the image decides the code)"
    assert finding.field == ("serving", "image")
    assert finding.reason is None and finding.is_error


def test_the_owners_variables_are_named_once_each_in_order():
    (finding,) = check_image("ghcr.io/x/y", [], {}, env_from_host=["HF_TOKEN", "B", "HF_TOKEN"])
    assert finding.why.endswith("(publisher ghcr.io/x/); the owner's HF_TOKEN, B would go into it")


def test_a_declared_consent_carries_its_reason():
    (finding,) = check_image("ghcr.io/x/y", [], {"image ghcr.io/x/y": "built here"}, image_source="elsewhere")
    assert finding.reason == "built here"
    assert not finding.is_error


def test_an_image_source_declares_the_consent():
    (finding,) = check_image("ghcr.io/x/y", [], {}, image_source="docker build .")
    assert finding.reason == "serving.image_source: docker build ."
    assert not finding.is_error


def test_an_empty_image_source_declares_nothing():
    (finding,) = check_image("ghcr.io/x/y", [], {}, image_source="")
    assert finding.reason is None


def test_the_declared_mapping_is_not_changed():
    declared: dict[str, str] = {}
    check_image("ghcr.io/x/y", [], declared, image_source="s")
    assert declared == {}
