"""The way out of Material for MkDocs stays open: build `catalogue export` with Zensical and check the pages.

Usage: python tools/zensical_check.py OUT_DIR (run by `nox -s zensical`, in a venv with zensical).
Exports every page (no MkDocs), adds the static pages and assets of site_src/docs, writes a plain
mkdocs.yml (no hooks), builds with `zensical build --strict`, then checks that recipe pages carry
their performance tables, charts and launch commands, and comparison pages their tables.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = """site_name: LLM inference recipes
theme:
  name: material
extra_css: [assets/catalogue.css]
extra_javascript: [assets/catalogue.js]
markdown_extensions: [admonition, attr_list, md_in_html]
nav:
  - Recipes: index.md
  - Comparisons: compare/index.md
  - Methodology: methodology/index.md
"""
CHECKS = {
    "recipes/gptoss-120b": [
        '<table class="rc-perf">',
        'class="rc-chart"',
        "vllm serve openai/gpt-oss-120b",
        "rc-drift",
    ],
    "recipes/gptoss-120b-topology-cluster-tp2": ["--node-rank", "--headless", 'class="rc-chart"'],
    "examples/tiny-cpu-replicas": ["routing_strategy", 'class="rc-chart"'],
    "compare/openai-gpt-oss-120b--dgx-spark": ['class="rc-perf rc-compare"', 'class="rc-chart"', "Not compared"],
    "": ['id="rc-index"'],
}


def main(out: Path) -> int:
    out = out.resolve()
    if out.exists():
        shutil.rmtree(out)
    docs = out / "docs"
    shutil.copytree(REPO / "site_src" / "docs", docs)
    export = out / "export"
    subprocess.run(
        [sys.executable, "-m", "catalogue", "--root", "recipes", "--root", "examples", "export", str(export)],
        cwd=REPO,
        check=True,
    )
    shutil.copytree(export, docs, dirs_exist_ok=True)
    (out / "mkdocs.yml").write_text(CONFIG)
    start = time.perf_counter()
    subprocess.run(["zensical", "build", "--strict", "-f", str(out / "mkdocs.yml")], cwd=out, check=True)
    took = time.perf_counter() - start
    problems = []
    for page, needles in CHECKS.items():
        path = out / "site" / page / "index.html"
        if not path.exists():
            problems.append(f"{page or 'index'}: not built")
            continue
        text = path.read_text(encoding="utf-8")
        problems += [f"{page or 'index'}: lacks {n!r}" for n in needles if n not in text]
        if "&lt;table" in text or "&lt;div" in text:
            problems.append(f"{page or 'index'}: HTML shown as text")
    pages = len(list((out / "site").rglob("index.html")))
    for line in problems:
        print(f"zensical: {line}", file=sys.stderr)
    print(f"zensical built {pages} pages in {took:.2f} s; {len(CHECKS)} pages checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "build" / "zensical"))
