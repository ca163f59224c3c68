"""Secrets are never written down: the detectors, the masking, and a secret in a recipe file (one line, its line
number, the value masked, exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from catalogue.commands.cli import main
from catalogue.policy.secret_scan import mask, redact, scan_text, value_is_secret

REPO = Path(__file__).resolve().parents[1]
HF = "hf_SeCrEtToKeN1234567890"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (f"    HF_TOKEN: {HF}", "keyword HF_TOKEN"),
        (f"  - -e\n  - HF_TOKEN={HF}", "keyword HF_TOKEN"),
        ("    api-key: sk-local-0123456789", "keyword api-key"),
        ("    OPENAI_API_KEY: 'sk-proj-abcdefghijklmnop'", "keyword OPENAI_API_KEY"),
        ("  options: [--api-key, s3cr3t-value-for-vllm]", "keyword --api-key"),
        (f"  - a note that quotes {GITHUB}", "GitHub Token"),
        (f"  why: the key {AWS} was used", "AWS Access Key"),
        (f"  status: {HF}", "Hugging Face Token"),
        ("  why: -----BEGIN RSA PRIVATE KEY-----", "Private Key"),
    ],
)
def test_detected(line, kind):
    found = scan_text(line)
    assert found and found[0].kind == kind, found


@pytest.mark.parametrize(
    "line",
    [
        "    HF_TOKEN: $HF_TOKEN",
        "    HF_HUB_DISABLE_IMPLICIT_TOKEN: '1'",
        "    TIKTOKEN_ENCODINGS_BASE: /workspace/tiktoken_encodings",
        "key_flags:",
        "    host: 0.0.0.0",
        "    api-key: TODO",
        "  env_from_host: [HF_TOKEN]",
    ],
)
def test_not_a_secret(line):
    assert scan_text(line) == []


def test_no_secret_in_the_committed_catalogue():
    for path in [*REPO.glob("recipes/*/recipe.yaml"), *REPO.glob("examples/*/recipe.yaml")]:
        assert scan_text(path.read_text()) == [], path


def test_masking():
    assert mask(HF) == "hf_********" and HF not in mask(HF)
    assert mask("short") == "********"
    assert redact(f"x {HF} y", [HF]) == "x hf_******** y"
    assert value_is_secret("HF_TOKEN", HF) and value_is_secret("ANY", GITHUB)
    assert not value_is_secret("HF_TOKEN", "") and not value_is_secret("VLLM_LOGGING_LEVEL", "DEBUG")


@pytest.mark.parametrize(
    "where",
    ["env", "flag", "option", "prose"],
)
def test_a_secret_in_a_recipe_is_one_masked_line(where, recipe_copy, capsys):
    root, folder = recipe_copy()
    path = folder / "recipe.yaml"
    data = yaml.safe_load(path.read_text())
    if where == "env":
        data["serving"]["env"]["HF_TOKEN"] = HF
    elif where == "flag":
        data["serving"]["flags"]["api-key"] = HF
    elif where == "option":
        data["serving"]["container"]["options"] += ["-e", f"HF_TOKEN={HF}"]
    else:
        data["prose"]["notes"] = [f"log in with {GITHUB} first"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    before = path.read_bytes()
    assert main(["--root", str(root), "validate", "--no-flags"]) == 1
    out = capsys.readouterr()
    err = out.err.strip()
    assert len(err.splitlines()) == 1, err
    lines = path.read_text().splitlines()
    secret = HF if where != "prose" else GITHUB
    number = next(i for i, t in enumerate(lines, 1) if secret in t)
    assert err.startswith(f"{path}:{number}: never: secret: a secret written in the file ("), err
    assert secret not in out.err + out.out
    assert path.read_bytes() == before


def test_a_secret_in_a_broken_recipe_is_not_quoted_by_the_schema_error(recipe_copy, capsys):
    root, folder = recipe_copy()
    path = folder / "recipe.yaml"
    path.write_text(path.read_text().replace("status: production", f"status: {HF}"))
    assert main(["--root", str(root), "validate", "--no-flags"]) == 1
    out = capsys.readouterr()
    assert HF not in out.err + out.out


def test_a_runner_written_path_is_no_credential_whatever_its_date_stamp():
    """vLLM's client logs its result folder; the entropy detector read one stamp's digits as base64."""
    from catalogue.policy.secret_scan import is_path, scan_text

    line = "Namespace(result_dir='examples/tiny-cpu-capacity/runs/20261125T043519Z', seed=1)"
    assert is_path("examples/tiny-cpu-capacity/runs/20261125T043519Z") and scan_text(line, filename="client.log") == []
    assert not is_path("aGVsbG8gd29ybGQ/dGhpcyBpcyBh")  # no plain word between the slashes
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert scan_text(f"token_path='runs/{secret}'", filename="client.log") != []
