"""What a recipe asks of the machine that runs it, for the recipe page's box: the run policy's consent items
and notes, the variables taken from the owner's environment, the options the runner handles itself."""

from __future__ import annotations

from dataclasses import dataclass

from catalogue.models.platform import Platform
from catalogue.models.recipe import Recipe
from catalogue.policy.check import check_serving, walk_options


@dataclass(frozen=True)
class MachineAsks:
    """What a recipe asks of the machine that runs it (the run policy), for the page's box."""

    consent: list[tuple[str, str, str]]
    """(option, what it allows, the recipe's reason) for each option the owner must allow."""
    notes: list[tuple[str, str]]
    """(option, what it means) for each note."""
    from_host: list[str]
    """Variables taken from the owner's environment by name."""
    runner_owned: list[str]
    """Options the runner handles itself (it drops -d, --rm, --restart, --name)."""

    def __bool__(self) -> bool:
        return bool(self.consent or self.notes or self.from_host or self.runner_owned)


RUNNER_OWNED = {"detach": "-d", "rm": "--rm", "restart": "--restart", "name": "--name"}


def machine_asks(recipe: Recipe, platform: Platform | None = None) -> MachineAsks:
    """The consent items with their reasons, the notes, the variables from the host, the runner-handled options."""
    found = check_serving(recipe.serving, source="", platform=platform, model=recipe.model_arg)
    reasons = {" ".join(c.option.split()): c.reason for c in recipe.serving.consent}
    consent = [(f.option, f.why, reasons.get(f.option, "")) for f in found if f.cls == "consent"]
    notes = [(f.option, f.why) for f in found if f.cls == "note"]
    options = list(recipe.serving.container.options) if recipe.serving.container else []
    owned = [RUNNER_OWNED[name] for _, name, _ in walk_options(options) if name in RUNNER_OWNED]
    return MachineAsks(consent, notes, list(recipe.serving.env_from_host), list(dict.fromkeys(owned)))
