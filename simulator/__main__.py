"""`python -m simulator MODEL [vllm serve flags] --profile NAME`: the simulated vLLM server (simulator/__init__.py).

It reads the `vllm serve` flags that shape its scheduler (--max-num-seqs, --max-num-batched-tokens, prefix caching)
and its address; every other vLLM flag is accepted and ignored, as the model it stands for would have used it. The
model comes first, as the runner writes it: an ignored flag's value cannot then be taken for the model."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from catalogue.models.errors import CatalogueError
from simulator.engine import Engine, draft_length
from simulator.profile import load_profile
from simulator.server import Settings, Simulated, make_app


def parser() -> argparse.ArgumentParser:
    """The command line: vLLM's names for what the scheduler reads, the simulator's own options after them."""
    p = argparse.ArgumentParser(prog="python -m simulator", allow_abbrev=False)
    p.add_argument("model", nargs="?", help="model folder (its tokenizer.json counts prompt tokens) or name")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--served-model-name", nargs="+")
    p.add_argument("--tokenizer")
    p.add_argument("--max-num-seqs", type=int)
    p.add_argument("--max-num-batched-tokens", type=int)
    p.add_argument("--max-model-len", type=int)
    p.add_argument("--enable-prefix-caching", dest="prefix_caching", action="store_true", default=True)
    p.add_argument(
        "--no-enable-prefix-caching", "--disable-prefix-caching", dest="prefix_caching", action="store_false"
    )
    p.add_argument("--speculative-config", help="JSON; its num_speculative_tokens drafts each step")
    p.add_argument("--profile", required=True, help="simulator/profiles/<NAME>.yaml")
    p.add_argument("--seed", type=int, help="noise and failure seed (default: drawn at start and logged)")
    p.add_argument("--slowdown", type=float, help="factor on the decode steps (overrides the profile)")
    p.add_argument("--slowdown-above", type=int, help="slow only steps decoding more sequences than this")
    p.add_argument("--fail-share", type=float, help="share of requests answered with HTTP 500")
    return p


def tokenizer_of(folder: str | None) -> Callable[[str], list[int]]:
    """The prompt-token counter: the model folder's tokenizer.json (Hugging Face `tokenizers`), else ~4 bytes a
    token."""
    path = Path(folder) / "tokenizer.json" if folder else None
    if path is not None and path.is_file():
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
        return lambda text: tokenizer.encode(text, add_special_tokens=False).ids
    return lambda text: list(range(max(1, len(text.encode()) // 4)))


def main(argv: list[str] | None = None) -> int:
    args, ignored = parser().parse_known_args(argv)
    try:
        profile = load_profile(
            args.profile, slowdown=args.slowdown, slowdown_above=args.slowdown_above, fail_share=args.fail_share
        )
        spec_tokens = draft_length(args.speculative_config)
    except (CatalogueError, ValueError) as exc:  # a JSON error is a ValueError
        print(f"error: {exc}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    engine = Engine(
        profile,
        max_num_seqs=args.max_num_seqs or profile.max_num_seqs,
        max_num_batched_tokens=args.max_num_batched_tokens or profile.max_num_batched_tokens,
        seed=seed,
        prefix_caching=args.prefix_caching,
        spec_tokens=spec_tokens,
    )
    names = args.served_model_name or [args.model or args.profile]
    state = Simulated(
        profile, engine, tokenizer_of(args.tokenizer or args.model), Settings(names, args.max_model_len, seed)
    )
    print(
        f"simulator: profile {args.profile}, seed {seed}, max-num-seqs {engine.max_num_seqs}, "
        f"max-num-batched-tokens {engine.max_num_batched_tokens}, "
        f"prefix caching {'on' if args.prefix_caching else 'off'}, "
        f"speculative tokens {spec_tokens} (acceptance {profile.spec_acceptance:g}), "
        f"slowdown {profile.slowdown:g} above {profile.slowdown_above} sequences, fail share {profile.fail_share:g}; "
        f"ignored: {' '.join(ignored) or 'nothing'}",
        flush=True,
    )
    from aiohttp import web

    web.run_app(make_app(state), host=args.host, port=args.port, print=None, access_log=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
