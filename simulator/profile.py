"""A simulator profile: the numbers of the latency model (simulator/__init__.py), one YAML file per profile."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt, ValidationError

from catalogue.models.errors import CatalogueError, from_validation
from catalogue.models.strict import Strict
from catalogue.models.yaml_files import parse_yaml

PROFILES = Path(__file__).parent / "profiles"


class Profile(Strict):
    """The latency model's parameters; the scheduler's limits are the `vllm serve` flags, these their defaults."""

    description: str = Field(description="What the profile stands for and where its numbers come from.")
    step_ms: NonNegativeFloat = Field(description="Fixed cost of every engine step (scheduling, launch), ms.")
    prefill_ms_per_token: NonNegativeFloat = Field(description="Cost of each uncached prompt token in a step, ms.")
    decode_ms_per_seq: NonNegativeFloat = Field(0, description="Cost of each decoding sequence in a step, ms.")
    decode_ms_per_kctx: NonNegativeFloat = Field(
        0, description="Cost per 1,000 tokens of context summed over the step's decoding sequences (KV reads), ms."
    )
    decode_ms: dict[PositiveInt, NonNegativeFloat] = Field(
        default_factory=dict,
        description="Decode cost of a step by the number of sequences it decodes, ms; linear between the points given "
        "and along the nearest two beyond them (a measured curve: weights and experts read per step).",
    )
    noise_sigma: NonNegativeFloat = Field(
        0, description="Standard deviation of the log of each step's mean-one lognormal noise factor."
    )
    block_size: PositiveInt = Field(16, description="Tokens per KV block (the prefix cache's unit).")
    cache_blocks: PositiveInt = Field(
        4096, description="Prompt blocks the prefix cache keeps (least recently used leave first)."
    )
    max_num_seqs: PositiveInt = Field(256, description="Default `--max-num-seqs`.")
    max_num_batched_tokens: PositiveInt = Field(8192, description="Default `--max-num-batched-tokens`.")
    token_text: str = Field(" a", description="The text of every generated token.")
    api_ms: NonNegativeFloat = Field(0, description="API server time before a request reaches the scheduler, ms.")
    slowdown: PositiveFloat = Field(1.0, description="Factor on every step's decode cost (a regression to find).")
    slowdown_above: int = Field(
        0, ge=0, description="Apply `slowdown` only to steps decoding more than this many sequences (0: all)."
    )
    fail_share: float = Field(0, ge=0, lt=1, description="Share of requests answered with HTTP 500 on arrival.")
    spec_acceptance: float = Field(
        0.6,
        ge=0,
        le=1,
        description="With `--speculative-config`: the chance each draft token is accepted when the ones before it "
        "were (the first rejection ends the draft).",
    )
    spec_ms_per_token: NonNegativeFloat = Field(
        0, description="With `--speculative-config`: cost of verifying each draft token in a step, ms."
    )

    def decode_curve_ms(self, seqs: int) -> float:
        """The `decode_ms` curve at `seqs` sequences (0 without points or sequences)."""
        points = sorted(self.decode_ms.items())
        if not points or seqs == 0:
            return 0.0
        if len(points) == 1:
            return points[0][1]
        for (n0, ms0), (n1, ms1) in itertools.pairwise(points):
            if seqs <= n1 or (n1, ms1) == points[-1]:
                return max(0.0, ms0 + (ms1 - ms0) * (seqs - n0) / (n1 - n0))
        return points[-1][1]

    def step_cost_ms(self, prefill_tokens: int, seqs: int, context: int, drafts: int = 0) -> float:
        """The noise-free duration of one step, ms: fixed + prefill + decode (per sequence, per context, the curve)
        + the draft tokens verified, times the slowdown when the step decodes more than `slowdown_above` sequences."""
        cost = (
            self.step_ms
            + self.prefill_ms_per_token * prefill_tokens
            + self.spec_ms_per_token * drafts
            + self.decode_ms_per_seq * seqs
            + self.decode_ms_per_kctx * context / 1000
            + self.decode_curve_ms(seqs)
        )
        if seqs > self.slowdown_above:
            cost *= self.slowdown
        return cost

    def noise(self, z: float) -> float:
        """The mean-one lognormal factor of a standard normal draw `z`."""
        return math.exp(self.noise_sigma * z - self.noise_sigma**2 / 2)


def load_profile(name: str, **changes: object) -> Profile:
    """The profile `simulator/profiles/<name>.yaml` with `changes` (slowdown...) applied; errors name the file."""
    if not name.replace("-", "").replace("_", "").isalnum():
        raise CatalogueError(Path(name), "a simulator profile name holds letters, digits, - and _ only")
    path = PROFILES / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in PROFILES.glob("*.yaml")))
        raise CatalogueError(path, f"no simulator profile {name!r} (known: {known})")
    text = path.read_text(encoding="utf-8")
    data = parse_yaml(text, path)
    if not isinstance(data, dict):
        raise CatalogueError(path, "a simulator profile is a mapping of its parameters")
    try:
        return Profile.model_validate({**data, **{k: v for k, v in changes.items() if v is not None}})
    except ValidationError as exc:
        raise from_validation(path, exc, text) from None
