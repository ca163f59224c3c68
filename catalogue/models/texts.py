"""The kinds of text a sweep can send. Speculative decoding's speed depends on the text (a drafter guesses the next
tokens from what came before), so a recipe that uses it measures each kind as a workload of its own.

- `random`: vLLM's random dataset, prompts of exactly `input_len` random tokens (every other recipe's workload);
- `prose` and `code`: fixed prompts written for this catalogue (below), sent with vLLM's `custom` dataset (a JSONL
  file of {"prompt": ...}; `--custom-output-len` the answer length, `--skip-chat-template`: raw text to
  /v1/completions). The runner writes the file into the run's raw folder, so a run keeps the exact prompts it sent.

The prompts are built from short passages, three (prose) or two (code) in a rotating order, after a line with
the prompt's own number: no two prompts share their first tokens, so the prefix cache finds no common start between
them. A level may still send a prompt an earlier level sent (these sets are small): the prompt-side figures of a
text workload can come from the prefix cache; the decode-side figures (TPOT, output tok/s) are what it is for."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

from catalogue.models.atomic import write_text

TextKind = Literal["random", "prose", "code"]
TEXT_KINDS: tuple[TextKind, ...] = ("random", "prose", "code")

PROSE = (
    "The harbour froze early that winter, and the ferry captain took to walking the breakwater each morning to "
    "measure the ice with a broom handle.",
    "A sourdough starter is a small farm: flour feeds the yeast and bacteria, and the baker decides how often they "
    "eat and how warm they are kept.",
    "When the library moved its card catalogue into a database, the head librarian kept one drawer of cards on her "
    "desk as a reminder of what had been lost.",
    "Glaciers carve valleys in the shape of a U, while rivers leave a V; a hiker can read the history of a landscape "
    "from the curve of its walls.",
    "The orchestra tuned to the oboe because its pitch carries clearly and drifts little, and every other instrument "
    "settled around that single note.",
    "In the old market town the clock on the church tower ran four minutes fast, and the bus timetable had quietly "
    "been written to match it.",
    "Bees communicate the direction of a food source by dancing, turning the angle between the sun and the flowers "
    "into an angle on the vertical comb.",
    "The cartographer left the northern coast blank rather than guess at it, and wrote in the margin that the sailors "
    "had disagreed about the headlands.",
    "A good night train leaves late, arrives early, and lets the passenger sleep through the hours in which the "
    "country outside is dark anyway.",
    "Tomatoes were grown in European gardens as ornaments for decades before most cooks trusted them enough to put "
    "them into a sauce.",
    "The bridge inspector tapped each rivet with a small hammer and listened, because a loose one rings with a "
    "duller note than its neighbours.",
    "Her grandfather repaired radios in the back of a shoe shop, and customers left a pair of boots and a broken set "
    "on the same counter.",
    "Lighthouses once burned whale oil, then kerosene, then electricity; the keepers who trimmed the wicks were "
    "replaced one by one by timers and sensors.",
    "A chess clock keeps two players honest: time spent thinking on one side of the board is time the other side "
    "does not have to lose.",
    "The village held its summer fair on the same field for two hundred years, until a survey showed that the field "
    "belonged to the next parish.",
    "Rain gauges are simple instruments, but a network of them read at the same hour every day becomes one of the "
    "most useful records a country keeps.",
)
PROSE_ASK = (
    "Continue this passage with a paragraph in the same style:",
    "Summarise the passage above in plain words, then add one sentence of your own:",
)

CODE = (
    "def moving_average(values: list[float], window: int) -> list[float]:\n"
    "    if window <= 0:\n        raise ValueError('window must be positive')\n"
    "    total = sum(values[:window])\n    out = [total / window]\n",
    "class LRUCache:\n    def __init__(self, capacity: int) -> None:\n        self.capacity = capacity\n"
    "        self.items: dict[str, object] = {}\n\n    def get(self, key: str) -> object | None:\n",
    "def parse_duration(text: str) -> float:\n    units = {'ms': 0.001, 's': 1.0, 'm': 60.0, 'h': 3600.0}\n"
    "    for suffix, scale in sorted(units.items(), key=lambda kv: -len(kv[0])):\n",
    "def merge_intervals(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:\n    merged = []\n"
    "    for start, end in sorted(spans):\n        if merged and start <= merged[-1][1]:\n",
    "async def fetch_all(client, urls: list[str], limit: int = 8) -> list[bytes]:\n"
    "    semaphore = asyncio.Semaphore(limit)\n\n    async def one(url: str) -> bytes:\n",
    "def word_counts(path: str) -> dict[str, int]:\n    counts: dict[str, int] = {}\n"
    "    with open(path, encoding='utf-8') as handle:\n        for line in handle:\n",
    "function debounce(fn, waitMs) {\n  let timer = null;\n  return function (...args) {\n    clearTimeout(timer);\n",
    "def binary_search(items: list[int], target: int) -> int:\n    low, high = 0, len(items) - 1\n"
    "    while low <= high:\n        middle = (low + high) // 2\n",
    "SELECT customer_id, COUNT(*) AS orders, SUM(total) AS spent\nFROM orders\nWHERE placed_at >= DATE '2026-01-01'\n",
    "def retry(attempts: int, delay_s: float):\n    def wrap(fn):\n        def inner(*args, **kwargs):\n"
    "            for attempt in range(attempts):\n",
    "struct Point {\n    double x;\n    double y;\n};\n\ndouble distance(struct Point a, struct Point b) {\n",
    "def flatten(tree: dict) -> dict[str, object]:\n    out: dict[str, object] = {}\n"
    "    def walk(node: object, prefix: str) -> None:\n        if isinstance(node, dict):\n",
    "def to_roman(number: int) -> str:\n    numerals = [(1000, 'M'), (900, 'CM'), (500, 'D'), (400, 'CD'),\n"
    "                (100, 'C'), (90, 'XC'), (50, 'L'), (40, 'XL')]\n",
    "def chunked(items: list, size: int):\n    for start in range(0, len(items), size):\n",
    "def is_palindrome(text: str) -> bool:\n    letters = [c.lower() for c in text if c.isalnum()]\n",
    "def topological_order(graph: dict[str, list[str]]) -> list[str]:\n    seen: set[str] = set()\n"
    "    order: list[str] = []\n",
)
CODE_ASK = (
    "# Finish the code above, then write a short test for it.\n",
    "# Complete the unfinished function above and explain each step in a comment.\n",
)

PROMPTS_PER_KIND = 32
"""Two asks × 16 passages."""


def prompts(kind: TextKind) -> list[str]:
    """The fixed prompts of `kind` (prose or code), in a stable order."""
    steps: tuple[int, ...]
    if kind == "prose":
        pieces, asks, join, steps = PROSE, PROSE_ASK, " ", (0, 5, 11)
    elif kind == "code":
        pieces, asks, join, steps = CODE, CODE_ASK, "\n", (0, 7)
    else:
        raise ValueError(f"{kind!r} has no fixed prompts (random prompts are vLLM's)")
    n = len(pieces)
    lead = "#" if kind == "code" else ""
    return [
        f"{lead}Sample {i + 1}.\n"
        + join.join(pieces[(i + step) % n] for step in steps)
        + "\n\n"
        + asks[i // n % len(asks)]
        for i in range(PROMPTS_PER_KIND)
    ]


def jsonl(kind: TextKind) -> str:
    """The file vLLM's custom dataset reads: one {"prompt": ...} per line."""
    return "".join(json.dumps({"prompt": p}, ensure_ascii=False) + "\n" for p in prompts(kind))


def digest(kind: TextKind) -> str:
    """The first 12 hex digits of the file's SHA-256: part of the workload, so a changed text never compares."""
    return hashlib.sha256(jsonl(kind).encode()).hexdigest()[:12]


def file_name(kind: TextKind) -> str:
    """The file's name in a run's raw folder."""
    return f"texts-{kind}.jsonl"


def dataset(kind: TextKind) -> str:
    """How the run file names the prompts: 'random', or the kind, its count and its digest."""
    if kind == "random":
        return "random"
    return (
        f"{kind}: the catalogue's {PROMPTS_PER_KIND} {kind} prompts (catalogue/models/texts.py, sha256 {digest(kind)})"
    )


def write_files(folder: Path, kinds: list[TextKind]) -> list[Path]:
    """Write each fixed-text kind's file into `folder` (the run's raw folder); random needs none."""
    written = []
    for kind in kinds:
        if kind == "random":
            continue
        path = folder / file_name(kind)
        write_text(path, jsonl(kind))
        written.append(path)
    return written
