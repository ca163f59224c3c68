"""Split the one-file methodology (site_src/docs/methodology.md) into a page per topic under methodology/.

Mechanical on purpose: each `## ` section goes whole, in its order, to the page TOPICS names for it (a section
not named stays on the overview page, methodology/index.md); on a topic page the section's title becomes the
page's h1 and its sub-headings move up a level (their anchors, made from their text, do not change). A relative
link is rewritten for the page's new folder. Paragraphs added to the one-file page on another branch are moved
into their topic page by checking that file out again and running this once more:

    git checkout OTHER -- site_src/docs/methodology.md && python tools/split_methodology.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "site_src" / "docs"
SOURCE = DOCS / "methodology.md"
OUT = DOCS / "methodology"
TOPICS = {
    "Workload": "workloads",
    "Speculative decoding": "workloads",
    "Open loop and capacity": "open-loop",
    "The capacity search": "capacity",
    "Quality": "quality",
    "Regression check": "regression",
    "Run policy": "run-policy",
    "The machine's state: passport and gates": "passport",
    "Cost per token": "cost",
}
"""Section title (an h2, or the one h3 that gets a page of its own) -> topic page stem."""
TITLES = {
    "workloads": "Workloads",
    "open-loop": "Open loop and capacity",
    "capacity": "The capacity search",
    "quality": "Quality",
    "regression": "Regression check",
    "run-policy": "Run policy",
    "passport": "The machine's state: passport and gates",
    "cost": "Cost per token",
}
HEADING = re.compile(r"^(#{2,6}) (.*)$")
LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)\s]+)\)")


def sections(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The lines before the first h2, and each (title, lines) split at the h2s and at the h3s TOPICS names."""
    head: list[str] = []
    out: list[tuple[str, list[str]]] = []
    fence = False
    for line in text.splitlines():
        fence = fence != line.lstrip().startswith("```")
        match = None if fence else HEADING.match(line)
        if match and (len(match[1]) == 2 or (len(match[1]) == 3 and match[2] in TOPICS)):
            out.append((match[2], [line]))
        elif out:
            out[-1][1].append(line)
        else:
            head.append(line)
    return head, out


def promoted(lines: list[str], by: int) -> list[str]:
    """The section's body with every heading `by` levels up (its own title line dropped)."""
    body, fence = [], False
    for line in lines[1:]:
        fence = fence != line.lstrip().startswith("```")
        match = None if fence else HEADING.match(line)
        body.append(f"{'#' * (len(match[1]) - by)} {match[2]}" if match else line)
    return body


def relinked(lines: list[str]) -> list[str]:
    """Relative links one folder deeper."""
    return [LINK.sub(lambda m: f"](../{m[1]})", line) for line in lines]


def split(text: str) -> dict[str, str]:
    """Page stem (index for the overview) -> Markdown."""
    head, parts = sections(text)
    pages: dict[str, list[str]] = {"index": list(head)}
    for title, lines in parts:
        stem = TOPICS.get(title, "index")
        if stem == "index":
            pages["index"] += lines
            continue
        level = len(HEADING.match(lines[0])[1])  # type: ignore[index]
        page = pages.setdefault(stem, [f"# {TITLES[stem]}", ""])
        if title != TITLES[stem]:
            page += [f"## {title}"]
            page += promoted(lines, level - 2)
        else:
            page += promoted(lines, level - 1)
    out = {stem: "\n".join(relinked(lines)).strip() + "\n" for stem, lines in pages.items()}
    out["index"] += "\n## Topics\n\n" + "".join(f"- [{TITLES[stem]}]({stem}.md)\n" for stem in TITLES)
    return out


def main() -> int:
    if not SOURCE.exists():
        print(f"{SOURCE}: not found (already split?)", file=sys.stderr)
        return 1
    OUT.mkdir(exist_ok=True)
    for stem, text in split(SOURCE.read_text(encoding="utf-8")).items():
        target = OUT / f"{stem}.md"
        tmp = target.with_suffix(".md.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    SOURCE.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
