"""MkDocs glue: add the generated pages at build time (nothing is written into docs_dir)."""

from __future__ import annotations

import importlib
import logging
import os
import sys
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.hooks.catalogue")
_code_stamp: float | None = None
_checker = None
_blocks: dict[str, list[str]] = {}


def _fresh_build_module():
    """Import catalogue.site.build, re-importing the package when its code changed (mkdocs serve)."""
    global _code_stamp
    package = Path(__file__).resolve().parents[1] / "catalogue"
    stamp = max(p.stat().st_mtime for p in package.rglob("*.py"))
    if _code_stamp is not None and stamp != _code_stamp:
        for name in [m for m in sys.modules if m == "catalogue" or m.startswith("catalogue.")]:
            del sys.modules[name]
    _code_stamp = stamp
    return importlib.import_module("catalogue.site.build")


def recipe_roots(config) -> list[Path]:
    """Recipe folders: $CATALOGUE_RECIPE_ROOTS (os.pathsep-separated) or `extra.recipe_roots`."""
    base = Path(config["config_file_path"]).parent
    override = os.environ.get("CATALOGUE_RECIPE_ROOTS")
    names = override.split(os.pathsep) if override else config["extra"].get("recipe_roots", ["recipes"])
    return [base / name for name in names]


def on_serve(server, config, builder):
    """Reload on any edit under the recipe folders, wherever they are."""
    for root in recipe_roots(config):
        server.watch(str(root))
    return server


@event_priority(100)
def on_files(files: Files, config) -> Files:
    global _checker
    build_module = _fresh_build_module()
    from catalogue.flags.select import upstream_checker

    if _checker is None:
        _checker = upstream_checker()
        log.info("catalogue: flags checked against %s", _checker.source)
    roots = recipe_roots(config)
    build = build_module.generate(roots, _checker)
    for line in build.refused:
        log.error("catalogue: not published: %s", line)
    from catalogue.site.slots import lift

    _blocks.clear()
    for path, content in build.pages.items():
        content, blocks = lift(content)
        if blocks:
            _blocks[path] = blocks
        files.append(File.generated(config, path, content=content))
    return files


def on_post_page(output: str, page, config) -> str:
    """Put the lifted charts and tables back into the finished page."""
    blocks = _blocks.get(page.file.src_uri)
    if not blocks:
        return output
    from catalogue.site.slots import splice

    return splice(output, blocks)
