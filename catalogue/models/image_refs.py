"""Image references as docker normalises them: `x`, `library/x`, `docker.io/library/x:tag` and
`index.docker.io/library/x@sha256:...` all name the repository `docker.io/library/x`."""

from __future__ import annotations

import re

DOCKER_HUB = "docker.io"
HUB_ALIASES = ("docker.io", "index.docker.io", "registry-1.docker.io")
"""Spellings of Docker Hub's registry that docker treats as the same."""
DIGEST = re.compile(r"^(?P<name>[^@\s]+)@sha256:[0-9a-f]{64}$")
"""`repository@sha256:<64 hex>`: a registry digest, as `docker image inspect` lists it in RepoDigests."""


def repository(reference: str) -> str:
    """The repository an image reference names, tag and digest stripped, registry and `library/` made explicit."""
    name = reference.strip().split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:  # a tag (a `:` before the last `/` is a registry port)
        name = name[: len(name) - len(last[-1]) + last[-1].index(":")]
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, path = first.lower(), rest
    else:
        registry, path = DOCKER_HUB, name
    if registry in HUB_ALIASES:
        registry = DOCKER_HUB
        if "/" not in path:
            path = f"library/{path}"
    return f"{registry}/{path}"


def same_repository(a: str, b: str) -> bool:
    """Whether two references name one repository (any tag or digest)."""
    return repository(a) == repository(b)


def digest_of(digest: str, image: str) -> bool:
    """Whether `digest` is a registry digest (`repo@sha256:...`) of `image`'s repository."""
    match = DIGEST.match(digest.strip())
    return match is not None and same_repository(match.group("name"), image)
