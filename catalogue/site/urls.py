"""Where a generated page is served, and the relative link from one page to another.

Pages are written with MkDocs' directory URLs: `recipes/x.md` is served at `recipes/x/`.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalogue.models.loading import Entry

INDEX, COMPARE_INDEX, METHODOLOGY = "index.md", "compare/index.md", "methodology/index.md"
MODELS = "models"


def methodology(topic: str = "index") -> str:
    """A methodology page: 'index' (the overview), 'workloads', 'open-loop', 'capacity', 'quality', 'regression',
    'run-policy', 'passport' or 'cost' (site_src/docs/methodology/<topic>.md)."""
    return f"methodology/{topic}.md"


def model_path(model: str) -> str:
    """Where a model's page goes: 'openai/gpt-oss-120b' -> 'models/openai-gpt-oss-120b.md'."""
    return f"{MODELS}/{model.replace('/', '-').lower()}.md"


def recipe_path(entry: Entry) -> str:
    """Where a recipe's page goes: published recipes under recipes/, the others under examples/."""
    return f"{'recipes' if entry.recipe.publish else 'examples'}/{entry.id}.md"


def page_url(path: str) -> str:
    """The site-relative URL of a page: 'index.md' -> '', 'compare/index.md' -> 'compare/', 'a/b.md' -> 'a/b/'."""
    stem = path.removesuffix(".md")
    if stem == "index":
        return ""
    if stem.endswith("/index"):
        return stem.removesuffix("index")
    return stem + "/"


def link(from_path: str, to_path: str, anchor: str = "") -> str:
    """A relative URL from the page at `from_path` to the page at `to_path`."""
    here = page_url(from_path) or "."
    there = page_url(to_path) or "."
    rel = posixpath.relpath(there, here)
    url = "./" if rel == "." else rel + "/"
    return url + (f"#{anchor}" if anchor else "")


def file_link(from_path: str, file_path: str) -> str:
    """A relative URL from the page at `from_path` to a file served as it is (`sparkrun/x.yaml`)."""
    return posixpath.relpath(file_path, page_url(from_path) or ".")
