"""sparkrun's recipe format (sparkrun 0.4.2, `sparkrun/core/recipe.py`), v2 and the legacy v1, as a pydantic model,
and its command template: `{name}` filled from `defaults` (and `model`, `model_revision`), `{{`/`}}` as literal
braces when the command uses them (v1's escape).

sparkrun needs Python 3.12 and its own dependency set, so the catalogue does not import it: this module re-reads
the documented format, and tests/test_sparkrun_format.py runs sparkrun's own loader (in its venv,
$CATALOGUE_SPARKRUN) on the same files and compares what both make of them."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from catalogue.models.bounded import MAX_TEMPLATE_CHARS
from catalogue.models.strict import Strict

SPARKRUN_VERSION = "0.4.2"
"""The sparkrun release whose format this module reads and whose validator the tests run."""

OTHER_KEYS = (
    "sparkrun_version",
    "min_sparkrun_version",
    "runtime_version",
    "containers",
    "runtime_config",
    "pre_exec",
    "post_exec",
    "post_commands",
    "mods",
    "stop_after_post",
    "builder",
    "builder_config",
    "executor",
    "executor_config",
    "scheduler",
    "distribution_config",
    "layout",
    "cluster_config",
    "runtime_cache",
    "readiness",
    "capabilities",
    "unsupported_capabilities",
    "include",
    "overrides",
)
"""Top-level keys sparkrun knows besides the ones a launch is made of (its `_KNOWN_KEYS`)."""

PLACEHOLDER = re.compile(r"\{[^{}]*\}")
MAX_PASSES = 10
"""sparkrun substitutes until the text stops changing, at most this many times."""


class SparkrunRecipe(Strict):
    """One sparkrun recipe file: the keys a launch is made of; sparkrun's other keys are kept as they are."""

    recipe_version: str = Field("2", description="Format version: '2', or '1' (the legacy eugr format).")
    name: str | None = Field(None, description="v1 only: a display name (sparkrun names a recipe by its file).")
    description: str | None = Field(None, description="v1: one line about the recipe (v2: metadata.description).")
    model: str = Field(min_length=1, description="Hugging Face id of the model.")
    model_revision: str | None = Field(None, description="Commit or tag of the model repository.")
    runtime: str = Field("", description="Serving engine: vllm (and its variants), sglang, llama-cpp, trtllm.")
    mode: str | None = Field(None, description="v1 topology: solo, cluster or auto.")
    solo_only: bool | None = Field(None, description="v1 topology: one machine only.")
    cluster_only: bool | None = Field(None, description="v1 topology: two machines or more.")
    min_nodes: int = Field(1, ge=1, description="Fewest machines the recipe runs on.")
    max_nodes: int | None = Field(None, ge=1, description="Most machines the recipe runs on.")
    container: str = Field("", description="The container image.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Descriptive facts (description, sizes).")
    defaults: dict[str, Any] = Field(default_factory=dict, description="Values of the command's `{name}` fields.")
    env: dict[str, Any] = Field(default_factory=dict, description="Environment of the serving container.")
    command: str | None = Field(None, description="The serve command template.")
    benchmark: dict[str, Any] | None = Field(None, description="The benchmark sparkrun runs for the recipe.")
    other: dict[str, Any] = Field(default_factory=dict, description="sparkrun's other keys, and unknown ones.")

    @field_validator("recipe_version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) else value

    @field_validator("metadata", "defaults", "env", mode="before")
    @classmethod
    def _empty_mapping(cls, value: Any) -> Any:
        return {} if value is None else value

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> SparkrunRecipe:
        """The model of a file's mapping: every key not modelled above goes to `other`."""
        known = set(cls.model_fields) - {"other"}
        return cls.model_validate(
            {k: v for k, v in data.items() if k in known} | {"other": {k: v for k, v in data.items() if k not in known}}
        )

    @property
    def nodes(self) -> tuple[int, int | None]:
        """(min_nodes, max_nodes) after the v1 topology keys, as sparkrun's Recipe computes them."""
        low, high = self.min_nodes, self.max_nodes
        if self.mode == "solo":
            low = high = 1
        if self.cluster_only:
            low = max(low, 2)
        if self.solo_only:
            high = 1
        return low, high

    def chain(self) -> dict[str, Any]:
        """The values `{name}` fields are filled from: defaults, then model, model_revision, resolved_model_path."""
        values = {k: (_collapse(v) if isinstance(v, str) else v) for k, v in self.defaults.items()}
        values.setdefault("model", self.model)
        if self.model_revision:
            values.setdefault("model_revision", self.model_revision)
        values.setdefault("resolved_model_path", self.model)
        return values

    def rendered_command(self) -> str | None:
        """The command with its fields filled in, as sparkrun renders it (None when there is none)."""
        if not self.command:
            return None
        return render(self.command.strip(), self.chain())


def _collapse(value: str) -> str:
    """A default written with `{{`/`}}` escapes, as one literal brace each."""
    return value.replace("{{", "{").replace("}}", "}") if "{{" in value else value


def _mask(text: str, escapes: bool) -> str:
    """Hide every brace that is not a `{name}` field (an escape pair as one brace when `escapes`)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("{{", i) or text.startswith("}}", i):
            out.append(("\0" if text[i] == "{" else "\1") * (1 if escapes else 2))
            i += 2
            continue
        match = PLACEHOLDER.match(text, i) if text[i] == "{" else None
        if match:
            out.append(match.group())
            i = match.end()
            continue
        out.append({"{": "\0", "}": "\1"}.get(text[i], text[i]))
        i += 1
    return "".join(out)


class TemplateTooLarge(ValueError):
    """A command whose filled-in fields grow past catalogue.models.bounded.MAX_TEMPLATE_CHARS (values naming
    themselves)."""


def _fill_pass(text: str, texts: dict[str, str]) -> str:
    """One substitution pass, its output length counted as it grows."""
    length = len(text)

    def fill(match: re.Match[str]) -> str:
        nonlocal length
        value = texts.get(match.group()[1:-1], match.group())
        length += len(value) - len(match.group())
        if length > MAX_TEMPLATE_CHARS:
            raise TemplateTooLarge(f"grows past {MAX_TEMPLATE_CHARS:,} characters as its fields are filled in")
        return value

    return PLACEHOLDER.sub(fill, text)


def render(template: str, values: dict[str, Any]) -> str:
    """Fill `{name}` fields from `values` (str() of each; unknown names stay), until the text stops changing; then
    repair a backslash followed by blanks at a line end, as sparkrun does. Text growing past MAX_TEMPLATE_CHARS
    raises TemplateTooLarge, counted as each field is filled (a default naming itself 8 times grows 8x a pass)."""
    text = _mask(template, escapes="{{" in template)
    texts = {k: str(v) for k, v in values.items() if v is not None}
    for _ in range(MAX_PASSES):
        filled = _fill_pass(text, texts)
        if filled == text:
            break
        text = filled
    text = text.replace("\0", "{").replace("\1", "}")
    return re.sub(r"\\[ \t]+\n", "\\\n", text)


def unfilled(command: str) -> list[str]:
    """The `{name}` fields a rendered command still holds (no value in defaults)."""
    return [m.group() for m in PLACEHOLDER.finditer(_mask(command, escapes=False)) if m.group()[1:-1].isidentifier()]
