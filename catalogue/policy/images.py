"""The run policy on the image: an image is code. One whose repository a trust list names runs without consent; any
other is consent, named by its repository, and so are the owner's variables the recipe would pass it (HF_TOKEN...).

The trust list is the platform profile's `trusted_images` plus what the owner adds in the hosts file (each host's
`trusted_images`). An entry is a repository (`vllm/vllm-openai`: that repository, any tag or digest) or a namespace
ending in `/` (`nvcr.io/nvidia/`: every repository under it), normalised as docker names images
(catalogue.models.image_refs: `vllm/vllm-openai` is `docker.io/vllm/vllm-openai`, `local/x` is `docker.io/local/x`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from catalogue.models.image_refs import DOCKER_HUB, repository
from catalogue.policy.finding import PolicyFinding, consent

IMAGE_WHY = "runs the code of an image the trust list does not name (publisher {publisher})"
SECRETS_WHY = "; the owner's {names} would go into it"
IMAGE_BASIS = "catalogue image rule (CIS 4.1, 5: the image decides the code)"
IMAGE_HOW_SOURCE = "serving.image_source"


def trust_entry(entry: str) -> str:
    """A trust-list entry as docker normalises it; a namespace keeps its trailing `/`."""
    if entry.endswith("/"):
        return repository(entry.rstrip("/") + "/x")[: -len("x")]
    return repository(entry)


def is_trusted(image: str, trusted: Iterable[str]) -> bool:
    """Whether the image's repository is on the trust list (a repository exactly, or under a namespace)."""
    repo = repository(image)
    for entry in trusted:
        normal = trust_entry(entry)
        if repo == normal or (normal.endswith("/") and repo.startswith(normal)):
            return True
    return False


def publisher(image: str) -> str:
    """The namespace the image's repository lives in: `ghcr.io/someone/`, `docker.io/library/`."""
    repo = repository(image)
    return repo.rsplit("/", 1)[0] + "/" if "/" in repo else DOCKER_HUB + "/"


def image_option(image: str) -> str:
    """The consent name of an image: `image <repository>` (any tag or digest of that repository)."""
    return f"image {repository(image)}"


def check_image(
    image: str | None,
    trusted: Iterable[str],
    declared: Mapping[str, str],
    *,
    env_from_host: Iterable[str] = (),
    image_source: str | None = None,
) -> list[PolicyFinding]:
    """Consent for an image off the trust list, declared by serving.consent or by the recipe's image_source."""
    if image is None or is_trusted(image, trusted):
        return []
    name = image_option(image)
    why = IMAGE_WHY.format(publisher=publisher(image))
    names = list(dict.fromkeys(env_from_host))
    if names:
        why += SECRETS_WHY.format(names=", ".join(names))
    given = dict(declared)
    if name not in given and image_source:
        given[name] = f"{IMAGE_HOW_SOURCE}: {image_source}"
    return [consent(name, why, IMAGE_BASIS, given, ("serving", "image"), runs_code=True)]
