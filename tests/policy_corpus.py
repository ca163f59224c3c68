"""The run policy's corpus: one hostile or borderline launch per rule, with the line each gate must print.

Used by tests/test_policy.py (`catalogue validate`), tests/test_inspect_gate.py (the runner on the real docker
engine, and the agreement of the static and inspected verdicts)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from tests.corpus_edits import consent, env, flag, options, serving
from tests.policy_corpus_docker import DOCKER_CASES

CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    # never
    "volumes-from": (options("--volumes-from", "other"), "never: --volumes-from: "),
    "docker api socket option": (options("--use-api-socket"), "never: --use-api-socket: "),
    "mount of /": (options("-v", "/:/host"), "never: --volume /: "),
    "mount of /etc": (options("-v", "/etc:/host-etc:ro"), "never: --volume /etc: "),
    "mount under /etc, dotted": (
        options("--mount", "type=bind,src=/etc/../etc/shadow,dst=/s"),
        "never: --mount /etc/shadow: ",
    ),
    "mount of /root": (options("-v=/root:/r"), "never: --volume /root: "),
    "mount of /home": (options("--volume", "/home:/h"), "never: --volume /home: "),
    "mount of a home folder": (options("--volume=/home/alice/:/h"), "never: --volume /home/alice: "),
    "mount of ~": (options("-v", "~:/h"), "never: --volume ~: "),
    "mount of /proc": (options("-v", "/proc:/p"), "never: --volume /proc: "),
    "shell syntax in a mount": (
        options("-v", "$(pwd)/patches/x.py:/opt/x.py"),
        "never: --volume $(pwd)/patches/x.py: shell syntax in the host path",
    ),
    "mount under /sys": (options("-v", "/sys/fs/cgroup:/c"), "never: --volume /sys/fs/cgroup: "),
    "docker socket": (
        options("-v", "/var/run/docker.sock:/var/run/docker.sock"),
        "never: --volume /var/run/docker.sock: ",
    ),
    "containerd socket": (
        options("-v", "/run/containerd/containerd.sock:/c.sock"),
        "never: --volume /run/containerd/containerd.sock: ",
    ),
    "podman socket elsewhere": (options("-v", "/tmp/podman.sock:/p.sock"), "never: --volume /tmp/podman.sock: "),
    "credentials folder": (options("-v", "$HOME/.ssh:/root/.ssh:ro"), "never: --volume ~/.ssh: "),
    "named volume backed by /": (
        options("--mount", "type=volume,dst=/d,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/"),
        "never: --mount /: ",
    ),
    "LD_PRELOAD": (env("LD_PRELOAD", "/host/tmp/evil.so"), "never: LD_PRELOAD: "),
    "LD_LIBRARY_PATH as -e": (options("-e", "LD_LIBRARY_PATH=/x"), "never: LD_LIBRARY_PATH: "),
    "PYTHONPATH": (env("PYTHONPATH", "/plugins"), "never: PYTHONPATH: "),
    "PYTHONSTARTUP": (env("PYTHONSTARTUP", "/x.py"), "never: PYTHONSTARTUP: "),
    "NODE_OPTIONS": (env("NODE_OPTIONS", "--require /x.js"), "never: NODE_OPTIONS: "),
    "unknown docker option": (options("--no-such-option"), "never: --no-such-option: "),
    "unused consent": (consent("--cap-add SYS_ADMIN"), "never: --cap-add SYS_ADMIN: declared in serving.consent"),
    # consent, not declared
    "privileged": (options("--privileged"), "consent: --privileged: "),
    "cap-add": (options("--cap-add=cap_sys_ptrace"), "consent: --cap-add SYS_PTRACE: "),
    "device": (options("--device", "/dev/infiniband:/dev/infiniband"), "consent: --device /dev/infiniband: "),
    "device-cgroup-rule": (options("--device-cgroup-rule", "c 1:3 mr"), "consent: --device-cgroup-rule c 1:3 mr: "),
    "pid host": (options("--pid", "host"), "consent: --pid host: "),
    "pid of a container": (options("--pid=container:db"), "consent: --pid container:db: "),
    "uts host": (options("--uts=host"), "consent: --uts host: "),
    "userns host": (options("--userns", "host"), "consent: --userns host: "),
    "cgroupns host": (options("--cgroupns", "host"), "consent: --cgroupns host: "),
    "network of a container": (options("--network", "container:db"), "consent: --network container:db: "),
    "ipc of a container": (options("--ipc=container:db"), "consent: --ipc container:db: "),
    "seccomp unconfined": (
        options("--security-opt", "seccomp=unconfined"),
        "consent: --security-opt seccomp=unconfined: ",
    ),
    "apparmor unconfined": (
        options("--security-opt=apparmor=unconfined"),
        "consent: --security-opt apparmor=unconfined: ",
    ),
    "sysctl outside the safe set": (options("--sysctl", "kernel.msgmax=65536"), "consent: --sysctl kernel.msgmax"),
    "another runtime": (options("--runtime", "sysbox-runc"), "consent: --runtime sysbox-runc: "),
    "entrypoint": (options("--entrypoint", "/bin/sh"), "consent: --entrypoint: "),
    "env-file": (options("--env-file", "./server.env"), "never: --env-file: "),
    "cgroup-parent": (options("--cgroup-parent", "/system.slice"), "consent: --cgroup-parent: "),
    "oom-kill-disable": (options("--oom-kill-disable"), "consent: --oom-kill-disable: "),
    "cidfile": (options("--cidfile", "/tmp/cid"), "consent: --cidfile: "),
    "volume-driver": (options("--volume-driver", "sshfs"), "consent: --volume-driver: "),
    "other host folder": (options("-v", "/srv/data:/data"), "consent: --volume /srv/data: "),
    "shared propagation": (
        options("-v", "/srv/models:/models:rshared"),
        "consent: --volume /srv/models: mounts a host folder with shared propagation",
    ),
    # docker's own parse of --mount: CSV fields, case rules (issue 27, class 1)
    "mount type in capitals": (options("--mount", "type=BIND,source=/,target=/h"), "never: --mount /: "),
    "mount source in a quoted field": (
        options("--mount", 'type=bind,"src=/var/run/docker.sock",dst=/s'),
        "never: --mount /var/run/docker.sock: ",
    ),
    "volume device in a quoted field": (
        options("--mount", 'type=volume,dst=/d,"volume-opt=device=/etc",volume-opt=o=bind,volume-opt=type=none'),
        "never: --mount /etc: ",
    ),
    "shared propagation in capitals": (
        options("--mount", "type=bind,src=/srv/m,dst=/m,bind-propagation=RSHARED"),
        "consent: --mount /srv/m: mounts a host folder with shared propagation",
    ),
    "volume of another driver": (
        options("--mount", "type=volume,dst=/d,volume-driver=sshfs"),
        "consent: --mount volume-driver=sshfs: ",
    ),
    "volume with nfs options": (
        options("--mount", "type=volume,dst=/d,volume-opt=type=nfs,volume-opt=o=addr=10.0.0.1"),
        "consent: --mount volume-opt: ",
    ),
    # no model-folder exception (class 2)
    "folder at a prefix of the model path": (
        lambda f: (options("-v", "~/work:/models")(f), serving(lambda s: s.update(model_path="/models/m"))(f)),
        "consent: --volume ~/work: ",
    ),
    "the user's runtime folder": (options("-v", "/run/user/1000:/models"), "never: --volume /run/user/1000: "),
    "a folder named models": (options("-v", "/srv/models:/models"), "consent: --volume /srv/models: "),
    "the whole hf cache elsewhere": (  # attack44b F9: it holds the token file
        options("-v", "~/.cache/huggingface:/hf"),
        "never: --volume ~/.cache/huggingface: mounts a folder that holds ~/.cache/huggingface/token",
    ),
    "an ssh key file": (options("-v", "/srv/keys/id_ed25519:/k"), "never: --volume /srv/keys/id_ed25519: "),
    # the owner's environment (class 3)
    "env_from_host beyond the allow-list": (
        serving(lambda s: s.update(env_from_host=["AWS_SECRET_ACCESS_KEY"])),
        "consent: env_from_host AWS_SECRET_ACCESS_KEY: ",
    ),
    "env_from_host of code-changing name": (
        serving(lambda s: s.update(env_from_host=["LD_PRELOAD"])),
        "never: env_from_host LD_PRELOAD: ",
    ),
    "log driver": (options("--log-driver", "gelf"), "never: --log-driver: "),
    "log option naming the token": (options("--log-opt", "env=HF_TOKEN"), "never: --log-opt: "),
    "label file": (options("--label-file", "/proc/self/environ"), "never: --label-file: "),
    "hub endpoint": (env("HF_ENDPOINT", "https://hub.example"), "consent: HF_ENDPOINT: "),
    "proxy in lower case": (options("-e", "https_proxy=http://10.0.0.1:3128"), "consent: https_proxy: "),
    "CA bundle": (env("REQUESTS_CA_BUNDLE", "/tmp/ca.pem"), "consent: REQUESTS_CA_BUNDLE: "),
    "hosts entry for the hub": (options("--add-host", "huggingface.co:10.0.0.1"), "consent: --add-host: "),
    "name server": (options("--dns", "10.0.0.1"), "consent: --dns: "),
    "search domain": (options("--dns-search", "example.org"), "consent: --dns-search: "),
    "resolver option": (options("--dns-option", "ndots:15"), "consent: --dns-option: "),
    # the image: a pull or another platform replaces the owner's local/ image with Docker Hub's
    "pull always": (options("--pull", "always"), "never: --pull: "),
    "pull always joined": (options("--pull=always"), "never: --pull: "),
    "pull missing": (options("--pull", "missing"), "never: --pull: "),
    "other platform": (options("--platform", "linux/arm64"), "never: --platform: "),
    # the runner's labels and the kernel's OOM killer (class 4)
    "runner label": (options("--label", "catalogue.run=keep"), "never: --label catalogue.run=keep: "),
    "runner label in capitals": (options("-l", "Catalogue.Run=keep"), "never: --label catalogue.run=keep: "),
    "negative oom score": (options("--oom-score-adj=-1000"), "consent: --oom-score-adj -1000: "),
    # outside a container; flags that load code or read files (class 5)
    "no image": (
        serving(lambda s: [s.pop(k, None) for k in ("image", "container", "consent", "image_source")]),
        "consent: no container: ",
    ),
    "revision of a pull request, abbreviated": (flag("revisio", "refs/pr/7"), "never: --revision: "),
    "tool parser plugin": (flag("tool-parser-plugin", "/recipe/plugin.py"), "consent: --tool-parser-plugin: "),
    "logits processors": (flag("logits-processors", ["evil.Proc"]), "consent: --logits-processors: "),
    "worker extension": (flag("worker-extension-cls", "evil.Ext"), "consent: --worker-extension-cls: "),
    "middleware": (flag("middleware", ["evil.mw"]), "consent: --middleware: "),
    "scheduler class": (flag("scheduler-cls", "evil.Sched"), "consent: --scheduler-cls: "),
    "chat template from the ssh folder": (
        flag("chat-template", "~/.ssh/id_ed25519"),
        "never: --chat-template ~/.ssh/id_ed25519: ",
    ),
    "local media from /": (flag("allowed-local-media-path", "/"), "consent: --allowed-local-media-path: "),
    "traces sent elsewhere": (
        flag("otlp-traces-endpoint", "http://10.0.0.1:4317"),
        "consent: --otlp-traces-endpoint: ",
    ),
}


def _texts(folder: Path) -> None:
    """Both kinds of text a recipe with speculative decoding measures."""
    path = folder / "recipe.yaml"
    data = yaml.safe_load(path.read_text())
    data["sweep"]["texts"] = ["prose", "code"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))


CASES.update(
    {
        # environment by allow-list (issue 44, item 4): code loaders are never, other classes and unknowns consent
        "NCCL net plugin": (env("NCCL_NET_PLUGIN", "/host/evil.so"), "never: NCCL_NET_PLUGIN: "),
        "CUDA injection library": (env("CUDA_INJECTION64_PATH", "/x.so"), "never: CUDA_INJECTION64_PATH: "),
        "warnings filter imports a module": (env("PYTHONWARNINGS", "ignore::evil.Warn"), "never: PYTHONWARNINGS: "),
        "vLLM plugins by name": (env("VLLM_PLUGINS", "evil"), "consent: VLLM_PLUGINS: loads code the image holds"),
        "vLLM development endpoints": (env("VLLM_SERVER_DEV_MODE", "1"), "consent: VLLM_SERVER_DEV_MODE: opens"),
        "usage stats elsewhere": (
            options("-e", "VLLM_USAGE_STATS_SERVER=http://10.0.0.1"),
            "consent: VLLM_USAGE_STATS_SERVER: sends data",
        ),
        "a variable the list does not know": (env("SOME_SETTING", "1"), "consent: SOME_SETTING: a variable the"),
        "a data variable of another type": (env("HF_HUB_OFFLINE", "$(id)"), "consent: HF_HUB_OFFLINE: '$(id)' is not"),
    }
)

FLAG_CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    # vLLM flags by class (issue 44, item 3): names as vLLM's parser reads them, free text classed or consent
    "plugin spelled with underscores": (flag("tool_parser_plugin", "/x.py"), "consent: --tool-parser-plugin: loads"),
    "plugin abbreviated": (flag("tool-parser-plug", "/x.py"), "consent: --tool-parser-plugin: loads"),
    "an abbreviation of several flags": (flag("enable-p", True), "never: --enable-p: an abbreviation"),
    "reasoning parser plugin": (flag("reasoning-parser-plugin", "/x.py"), "consent: --reasoning-parser-plugin: "),
    "worker class": (flag("worker-cls", "evil.Worker"), "consent: --worker-cls: loads"),
    "kv connector module": (
        flag("kv-transfer-config", '{"kv_role": "kv_both", "kv_connector_module_path": "evil"}'),
        "consent: --kv-transfer-config kv_connector_module_path: loads",
    ),
    "model class override": (flag("model-class-overrides", '{"A": "evil:Model"}'), "consent: --model-class-overrides"),
    "io processor plugin": (flag("io-processor-plugin", "evil"), "consent: --io-processor-plugin: loads"),
    "tool server": (flag("tool-server", "10.0.0.1:8001"), "consent: --tool-server: sends data"),
    "kv events endpoint": (
        flag("kv-events-config", {"enable_kv_cache_events": True, "endpoint": "tcp://10.0.0.1:5557"}),
        "consent: --kv-events-config endpoint: sends data",
    ),
    "compile backend by dotted key": (
        flag("compilation-config.backend", "evil.compile"),
        "consent: --compilation-config backend: loads",
    ),
    "custom proposer class": (
        lambda f: (
            flag("speculative-config", {"method": "custom_class", "model": "evil.Proposer"})(f),
            _texts(f),
        ),
        "consent: --speculative-config method: loads",
    ),
    "an inductor setting with no class": (
        flag("compilation-config", {"inductor_compile_config": {"cpp.cxx": "/tmp/cc"}}),
        "consent: --compilation-config inductor_compile_config cpp.cxx: takes free text",
    ),
    "a config that is not JSON": (flag("kv-transfer-config", "kv_connector=X"), "consent: --kv-transfer-config: not"),
    # after the second attacker review: a value vLLM imports by name; a file of more flags
    "executor backend by class": (
        flag("distributed-executor-backend", "evilmod.Executor"),
        "never: --distributed-executor-backend evilmod.Executor: not one of vLLM's named values",
    ),
    "a file of more flags": (flag("config", "/recipe/more.yaml"), "never: --config: a YAML file of more flags"),
    "an unknown flag with free text": (flag("mystery-option", "/opt/x"), "consent: --mystery-option: takes free text"),
    # paths the server writes (class writes-path), by where they land: the runner's own binds, the recipe's, the host
    "download into another model's folder of the HF cache": (
        flag("download-dir", "/root/.cache/huggingface//hub/x/../models--org--other"),
        "never: --download-dir ~/.cache/huggingface/hub/models--org--other: writes into",
    ),
    "compile cache key into the runner's compile cache": (
        flag("compilation-config", {"cache_dir": "/catalogue-cache/vllm"}),
        "never: --compilation-config cache_dir ~/.cache/catalogue/compile/<image>/<recipe>/vllm: writes into",
    ),
    "debug dump relative to a working folder in the HF cache": (
        lambda f: (
            options("-w", "/root/.cache/huggingface")(f),
            flag("compilation-config", '{"debug_dump_path": "hub/dump"}')(f),
        ),
        "never: --compilation-config debug_dump_path ~/.cache/huggingface/hub/dump: writes into",
    ),
    "profiler traces into the HF cache from ~": (
        flag("profiler-config", {"profiler": "torch", "torch_profiler_dir": "~/.cache/huggingface/hub/t"}),
        "never: --profiler-config torch_profiler_dir ~/.cache/huggingface/hub/t: writes into",
    ),
    "profiler traces uploaded": (
        flag("profiler-config", {"profiler": "torch", "torch_profiler_dir": "gs://bucket/t"}),
        "consent: --profiler-config torch_profiler_dir: sends what it writes",
    ),
    "encoder scales saved into the HF cache": (
        flag("mm-encoder-fp8-scale-save-path", "/root/.cache/huggingface/hub/scales.json"),
        "never: --mm-encoder-fp8-scale-save-path ~/.cache/huggingface/hub/scales.json: writes into",
    ),
    "download into the recipe's own bind": (
        lambda f: (
            options("-v", "/srv/models:/models")(f),
            consent("--volume /srv/models")(f),
            flag("download-dir", "/models/m")(f),
        ),
        "consent: --download-dir /srv/models/m: writes into /srv/models/m, the recipe's bind at /models",
    ),
    "download on the owner's machine (no container)": (
        serving(
            lambda s: (
                [s.pop(k, None) for k in ("image", "container", "image_source")],
                s.update(consent=[{"option": "no container", "reason": "a reason"}]),
                s["flags"].update({"download-dir": "/srv/dl"}),
            )
        ),
        "never: --download-dir /srv/dl: writes there on your machine",
    ),
}


CASES.update(DOCKER_CASES)  # docker's own parse, trusted images and credentials (tests/policy_corpus_docker.py)
