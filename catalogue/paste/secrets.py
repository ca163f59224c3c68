"""The secret rule of `catalogue new`: every credential in a paste is found, and moved out of the launch before
anything is written (a variable goes to `serving.env_from_host` by name; a literal `--api-key` becomes
VLLM_API_KEY, which vLLM reads)."""

from __future__ import annotations

from catalogue.paste.launch import Launch
from catalogue.paste.serve_flags import ServeFlags
from catalogue.policy.check import walk_options
from catalogue.policy.secret_scan import is_literal, mask, scan_text, value_is_secret


def pasted_secrets(text: str, launch: Launch, serve: ServeFlags) -> list[str]:
    """Every credential value in the paste: the detectors over its text, secret-named variables, a literal --api-key."""
    values = [s.value for s in scan_text(text, "launch.sh")]
    values += [v for k, v in launch.env.items() if value_is_secret(k, v)]
    api_key = serve.flags.get("api-key")
    if isinstance(api_key, str) and is_literal(api_key):
        values.append(api_key)
    return values


def take_secrets(launch: Launch, serve: ServeFlags) -> tuple[list[str], list[tuple[str, str]]]:
    """Move secrets out of the launch: (names for serving.env_from_host, (name, what was found) per secret)."""
    names: list[str] = []
    said: list[tuple[str, str]] = []
    for key, value in list(launch.env.items()):
        if value in (f"${key}", f"${{{key}}}"):  # -e NAME="$NAME": the owner's own variable, by name
            del launch.env[key]
            names.append(key)
            said.append((key, f"-e {key}={value}: passed from the host by name"))
        elif value_is_secret(key, value):
            del launch.env[key]
            names.append(key)
            said.append((key, f"{key}: a secret in the command ({mask(value)})"))
    if launch.docker is not None:
        kept: list[str] = []
        walked = walk_options(launch.docker.options)
        ends = [start for start, _, _ in walked[1:]] + [len(launch.docker.options)]
        for (start, name, word), end in zip(walked, ends):
            group = launch.docker.options[start:end]
            if name == "env" and word and "=" not in word:
                names.append(word)
                said.append((word, f"-e {word}: passed from the host by name"))
            else:
                kept += group
        launch.docker.options = kept
    api_key = serve.flags.get("api-key")
    if isinstance(api_key, str) and is_literal(api_key):
        del serve.flags["api-key"]
        names.append("VLLM_API_KEY")
        said.append(("VLLM_API_KEY", f"--api-key: a secret in the command ({mask(api_key)}); vLLM reads VLLM_API_KEY"))
    return list(dict.fromkeys(names)), said
