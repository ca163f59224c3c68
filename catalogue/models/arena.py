"""The Spark Arena leaderboard's llama-benchy profile, and a recipe's ask for it (`sweep.arena`).

The values are the Arena's own: `benchmarking/spark-arena-v2.yaml` of github.com/spark-arena/recipe-registry at
commit 307578001460733fcb9335d0e84f8d3e38e40552 (kept in tests/data/sparkrun/recipe-registry/, and a test holds this
module to it). Its heat-aware `schedule` (the order sparkrun runs the (depth, concurrency) pairs in) is not a value
of the workload and is not kept here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field, PositiveInt, model_validator

from catalogue.models.strict import Strict

REGISTRY = "spark-arena/recipe-registry"
REGISTRY_FILE = "benchmarking/spark-arena-v2.yaml"
REGISTRY_COMMIT = "307578001460733fcb9335d0e84f8d3e38e40552"


@dataclass(frozen=True)
class ArenaProfile:
    """What llama-benchy runs for one profile: every (pp, tg, depth) at every concurrency, `runs` times each."""

    name: str
    """The profile's name as recipes and workloads spell it."""
    title: str
    """How a page names it."""
    pp: tuple[int, ...]
    tg: tuple[int, ...]
    depths: tuple[int, ...]
    concurrency: tuple[int, ...]
    runs: int
    prefix_caching: bool


SPARK_ARENA_V2 = ArenaProfile(
    name="spark-arena-v2",
    title="Spark Arena v2",
    pp=(2048,),
    tg=(128,),
    depths=(0, 4096, 8192, 16384, 32768, 65535, 100000),
    concurrency=(1, 2, 5, 10),
    runs=3,
    prefix_caching=True,
)
"""@official/spark-arena-v2, the profile of the Spark Arena leaderboard's runs."""

PROFILES = {SPARK_ARENA_V2.name: SPARK_ARENA_V2}


def profile_title(name: str) -> str:
    """'Spark Arena v2' for 'spark-arena-v2'; an unknown name as written."""
    found = PROFILES.get(name)
    return found.title if found else name


class ArenaSetting(Strict):
    """Run a named Arena profile with llama-benchy after the quality checks, in the same boot; a model that cannot
    take the whole profile (a short --max-model-len, little memory) runs it scaled down, and says why."""

    profile: Literal["spark-arena-v2"] = Field(description="The Arena profile by name (@official/spark-arena-v2).")
    pp: list[PositiveInt] | None = Field(None, description="Prompt tokens, each at most the profile's; null: its own.")
    tg: list[PositiveInt] | None = Field(
        None, description="Generated tokens, each at most the profile's; null: its own."
    )
    depths: list[int] | None = Field(
        None, description="Context depths (tokens before the prompt), at most the profile's deepest; null: its own."
    )
    concurrency: list[PositiveInt] | None = Field(
        None, description="Requests in flight, at most the profile's highest; null: its own."
    )
    runs: PositiveInt | None = Field(None, description="Runs of each test, at most the profile's; null: its own.")
    exact_tg: bool = Field(
        False,
        description="Force exactly tg tokens per answer (llama-benchy --exact-tg), a departure the Arena does not "
        "make: for a model that ends its answers at once (random weights); needs scaled_for.",
    )
    scaled_for: str | None = Field(
        None,
        min_length=1,
        description="Why it is scaled down (required with any value above; e.g. a 512-token context).",
    )

    @property
    def base(self) -> ArenaProfile:
        """The named profile as the Arena runs it."""
        return PROFILES[self.profile]

    @property
    def scaled(self) -> bool:
        """Whether any value differs from the profile's, or the output length is forced."""
        return self.values != self.base or self.exact_tg

    @property
    def values(self) -> ArenaProfile:
        """What llama-benchy runs: the profile with the recipe's smaller values."""
        base = self.base

        def pick(name: str) -> tuple[int, ...]:
            given = getattr(self, name)
            return tuple(given) if given is not None else getattr(base, name)

        return ArenaProfile(
            name=base.name,
            title=base.title,
            pp=pick("pp"),
            tg=pick("tg"),
            depths=pick("depths"),
            concurrency=pick("concurrency"),
            runs=self.runs if self.runs is not None else base.runs,
            prefix_caching=base.prefix_caching,
        )

    def scaling(self) -> str | None:
        """ "the tiny model's context: pp 64, tg 16, depths 0/256, concurrency 1/2, 1 run": why, then each value that
        differs from the profile's; None when it runs the whole profile."""
        if not self.scaled:
            return None
        base, mine = self.base, self.values
        changes = [
            f"{label} {'/'.join(map(str, getattr(mine, name)))}"
            for name, label in (("pp", "pp"), ("tg", "tg"), ("depths", "depths"), ("concurrency", "concurrency"))
            if getattr(mine, name) != getattr(base, name)
        ]
        if mine.runs != base.runs:
            changes.append(f"{mine.runs} run{'s' if mine.runs > 1 else ''}")
        if self.exact_tg:
            changes.append("answers forced to tg tokens (--exact-tg)")
        return f"{self.scaled_for}: {', '.join(changes)}"

    @model_validator(mode="after")
    def _smaller(self) -> ArenaSetting:
        base = self.base
        for name in ("pp", "tg", "depths", "concurrency"):
            given = getattr(self, name)
            if given is None:
                continue
            if not given or given != sorted(set(given)):
                raise ValueError(f"{name} must be ascending without repeats")
            if min(given) < 0 or max(given) > max(getattr(base, name)):
                raise ValueError(f"{name} may only scale the profile down: at most {max(getattr(base, name))}")
        if self.runs is not None and self.runs > base.runs:
            raise ValueError(f"runs may only scale the profile down: at most {base.runs}")
        if self.scaled and not self.scaled_for:
            raise ValueError("a scaled-down profile needs scaled_for: why it is scaled down")
        if self.scaled_for and not self.scaled:
            raise ValueError("scaled_for is set but every value is the profile's own")
        return self
