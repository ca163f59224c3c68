"""Image references compared as docker normalises them."""

from __future__ import annotations

import pytest

from catalogue.models.image_refs import digest_of, repository, same_repository

DIGEST = "@sha256:" + "0f" * 32


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("busybox", "docker.io/library/busybox"),
        ("busybox:1.36", "docker.io/library/busybox"),
        ("library/busybox", "docker.io/library/busybox"),
        ("docker.io/library/busybox:latest", "docker.io/library/busybox"),
        ("index.docker.io/library/busybox" + DIGEST, "docker.io/library/busybox"),
        ("vllm/vllm-openai:v0.11.0", "docker.io/vllm/vllm-openai"),
        ("nvcr.io/nvidia/vllm:25.09-py3", "nvcr.io/nvidia/vllm"),
        ("localhost:5000/vllm:dev", "localhost:5000/vllm"),
        ("localhost/vllm", "localhost/vllm"),
        ("registry.example.com:443/team/vllm" + DIGEST, "registry.example.com:443/team/vllm"),
        ("local/vllm-cpu:0.32.0", "docker.io/local/vllm-cpu"),
    ],
)
def test_repository(reference, expected):
    assert repository(reference) == expected


def test_same_repository_and_digests():
    assert same_repository("docker.io/library/ubuntu:24.04", "ubuntu")
    assert not same_repository("ubuntu", "evil/ubuntu")
    assert not same_repository("nvcr.io/nvidia/vllm", "docker.io/nvidia/vllm")
    assert digest_of("nvcr.io/nvidia/vllm" + DIGEST, "nvcr.io/nvidia/vllm:25.09-py3")
    assert not digest_of("nvcr.io/evil/vllm" + DIGEST, "nvcr.io/nvidia/vllm:25.09-py3")
    assert not digest_of("nvcr.io/nvidia/vllm:25.09-py3", "nvcr.io/nvidia/vllm:25.09-py3")  # a tag, no digest
    assert not digest_of("nvcr.io/nvidia/vllm@sha256:abc", "nvcr.io/nvidia/vllm")  # not 64 hex digits
