"""The run policy on environment variables: names that change what code runs (never), secrets written down
(never), names that redirect the model hub's token (consent), and what a recipe takes from the owner (allow-list)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from fnmatch import fnmatchcase

from catalogue import policy_rules as rules
from catalogue.policy_finding import PolicyFinding, consent, never
from catalogue.secret_scan import mask, value_is_secret

FieldOf = Callable[[str], tuple]


def check_env(
    env: Mapping[str, str], field_of: FieldOf | None = None, declared: Mapping[str, str] | None = None
) -> list[PolicyFinding]:
    """Findings for environment variables written in the recipe (or a profile)."""
    out: list[PolicyFinding] = []
    for key, value in env.items():
        field = field_of(key) if field_of else ("serving", "env", key)
        if any(fnmatchcase(key, pattern) for pattern in rules.ENV_NEVER):
            out.append(
                never(key, rules.ENV_NEVER_WHY, rules.ENV_BASIS, field, "never allowed: the image decides the code")
            )
        elif value_is_secret(key, value):
            why = rules.SECRET_WHY.format(masked=mask(value))
            out.append(never(key, why, rules.SECRET_BASIS, field, rules.SECRET_HOW.format(name=key)))
        elif key.upper() in rules.ENV_REDIRECT:
            out.append(consent(key, rules.ENV_REDIRECT_WHY, rules.ENV_REDIRECT_BASIS, declared or {}, field))
    return out


def check_env_from_host(
    names: Iterable[str], declared: Mapping[str, str], profile_names: Iterable[str] = ()
) -> list[PolicyFinding]:
    """Consent for each name a recipe takes from the owner's environment beyond the allow-list."""
    allowed = {*rules.ENV_FROM_HOST_ALLOWED, *profile_names}
    out: list[PolicyFinding] = []
    for i, name in enumerate(names):
        if any(fnmatchcase(name, pattern) for pattern in rules.ENV_NEVER):
            why = rules.ENV_NEVER_WHY
            out.append(never(f"env_from_host {name}", why, rules.ENV_BASIS, ("serving", "env_from_host", i)))
        elif name not in allowed:
            why = rules.ENV_FROM_HOST_WHY.format(name=name)
            field = ("serving", "env_from_host", i)
            out.append(consent(f"env_from_host {name}", why, "catalogue secrets rule", declared, field))
    return out
