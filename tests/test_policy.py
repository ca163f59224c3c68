"""The run policy: each rule has a bad-input case (one line naming the file, its line and the option; exit 1;
nothing written), allowed launches pass, consent is declared and allowed by name, the notes show."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from catalogue import policy_rules
from catalogue.cli import main
from catalogue.policy import (
    check_launch,
    missing_allows,
    mount_verdict,
    required_allows,
    walk_options,
)

REPO = Path(__file__).resolve().parents[1]
LINE = re.compile(r"recipe\.yaml:\d+: (never|consent): ")


def serving(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        path = folder / "recipe.yaml"
        data = yaml.safe_load(path.read_text())
        change(data["serving"])
        path.write_text(yaml.safe_dump(data, sort_keys=False))

    return apply


def options(*words: str) -> Callable[[Path], None]:
    return serving(lambda s: s["container"]["options"].extend(words))


def env(name: str, value: str) -> Callable[[Path], None]:
    return serving(lambda s: s["env"].update({name: value}))


def flag(name: str, value) -> Callable[[Path], None]:
    return serving(lambda s: s["flags"].update({name: value}))


def consent(option: str) -> Callable[[Path], None]:
    return serving(lambda s: s.update({"consent": [{"option": option, "reason": "a reason"}]}))


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
    "cap-add": (options("--cap-add=cap_ipc_lock"), "consent: --cap-add IPC_LOCK: "),
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
    "env-file": (options("--env-file", "./server.env"), "consent: --env-file: "),
    "cgroup-parent": (options("--cgroup-parent", "/system.slice"), "consent: --cgroup-parent: "),
    "oom-kill-disable": (options("--oom-kill-disable"), "consent: --oom-kill-disable: "),
    "cidfile": (options("--cidfile", "/tmp/cid"), "consent: --cidfile: "),
    "volume-driver": (options("--volume-driver", "sshfs"), "consent: --volume-driver: "),
    "other host folder": (options("-v", "/srv/data:/data"), "consent: --volume /srv/data: "),
    "shared propagation": (
        options("-v", "/srv/models:/models:rshared"),
        "consent: --volume /srv/models: mounts a host folder with shared propagation",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_rule_refuses_with_one_line(case, recipe_copy, capsys, tmp_path):
    mutate, expected = CASES[case]
    root, folder = recipe_copy()
    mutate(folder)
    before = sorted((p.relative_to(tmp_path), p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    code = main(["--root", str(root), "validate", "--no-flags"])
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert len(err.splitlines()) == 1, err
    assert expected in err and LINE.search(err), err
    assert err.startswith(str(folder / "recipe.yaml") + ":"), err
    assert sorted((p.relative_to(tmp_path), p.stat().st_mtime_ns) for p in tmp_path.rglob("*")) == before


def test_the_line_names_the_option_line(recipe_copy, capsys):
    root, folder = recipe_copy()
    env("LD_PRELOAD", "/x.so")(folder)
    main(["--root", str(root), "validate", "--no-flags"])
    err = capsys.readouterr().err
    lines = (folder / "recipe.yaml").read_text().splitlines()
    expected = next(i for i, t in enumerate(lines, 1) if "LD_PRELOAD" in t)
    assert f"recipe.yaml:{expected}: never: LD_PRELOAD: " in err


def test_every_never_and_consent_rule_has_a_case():
    expected = " ".join(e for _, e in CASES.values())
    for rule in policy_rules.OPTION_RULES:
        if rule.cls != "allowed":
            assert f": --{rule.option}" in expected, rule.option


@pytest.mark.parametrize("pattern", policy_rules.ENV_NEVER)
def test_every_code_changing_variable_is_never(pattern):
    name = pattern.replace("*", "AUDIT")
    found = check_launch([], {name: "/x"}, {"host": "127.0.0.1"}, None, None, source="x")
    assert [(f.cls, f.option) for f in found] == [("never", name)]


def test_every_docker_run_option_has_a_class():
    snapshot = json.loads((REPO / "snapshots" / "docker-run.json").read_text())
    ruled = {r.option for r in policy_rules.OPTION_RULES}
    for name in snapshot["takes_value"]:
        assert name in ruled or name in policy_rules.ALLOWED_OPTIONS or name in policy_rules.MOUNT_OPTIONS, (
            f"--{name} has no class in catalogue/policy_rules.py"
        )


def test_declared_consent_passes_and_is_listed(recipe_copy, capsys):
    root, folder = recipe_copy()
    options("--device=/dev/infiniband", "--cap-add", "IPC_LOCK", "--ulimit", "memlock=-1")(folder)
    serving(
        lambda s: s.update(
            consent=[
                {"option": "--device /dev/infiniband", "reason": "RDMA for NCCL over the ConnectX-7 link"},
                {"option": "--cap-add IPC_LOCK", "reason": "RDMA pins memory"},
            ]
        )
    )(folder)
    assert main(["--root", str(root), "validate", "--no-flags"]) == 0
    out = capsys.readouterr()
    assert out.err == ""
    assert "consent: --cap-add IPC_LOCK: adds a kernel capability" in out.out
    assert "(declared: RDMA pins memory; the owner runs it with --allow '--cap-add IPC_LOCK')" in out.out


ALLOWED = [
    "--gpus all",
    "--runtime nvidia",
    "--runtime=nvidia",
    "--ipc host",
    "--ipc=host",
    "--network host",
    "--net=host",
    "--shm-size 64g",
    "--ulimit memlock=-1 --ulimit stack=67108864",
    "-p 8000:8000",
    "-p8000:8000",
    "-d --restart unless-stopped --rm",
    "-e FOO=bar",
    "-v hf-cache:/root/.cache/huggingface",
    "-v ~/.cache/huggingface:/root/.cache/huggingface",
    "-v /root/.cache/huggingface:/root/.cache/huggingface",
    "-v /home/me/models/gpt-oss:/models:ro",
    "--mount type=bind,src=/data/hf_cache,dst=/hf",
    "--tmpfs /scratch",
    "--device nvidia.com/gpu=all",
    "--security-opt no-new-privileges",
    "--cap-drop ALL",
    "--sysctl net.ipv4.tcp_syncookies=1",
    "-it",
]


@pytest.mark.parametrize("words", ALLOWED)
def test_allowed_options_give_no_finding(words):
    assert check_launch(words.split(), {}, {"host": "127.0.0.1"}, "img:1", None, source="x") == []


def test_a_host_folder_mounted_where_the_model_is_read_is_the_model_folder():
    found = check_launch(["-v", "/srv/weights:/models"], {}, {}, "img:1", None, source="x", model_path="/models/m")
    assert found == []
    assert mount_verdict("/srv/weights") == ("consent", policy_rules.MOUNT_CONSENT_WHY)


def test_value_forms_agree():
    spaced = check_launch(["--cap-add", "SYS_PTRACE"], {}, {}, None, None, source="x")
    joined = check_launch(["--cap-add=SYS_PTRACE"], {}, {}, None, None, source="x")
    assert [f.line() for f in spaced] == [f.line() for f in joined]
    assert walk_options(["-itp", "8000:8000", "-e", "A=1", "--ipc=host", "--rm"]) == [
        (0, "interactive", None),
        (0, "tty", None),
        (0, "publish", "8000:8000"),
        (2, "env", "A=1"),
        (4, "ipc", "host"),
        (5, "rm", None),
    ]


def test_notes():
    found = check_launch(
        ["-p", "8000:8000"], {}, {"trust-remote-code": True, "host": "0.0.0.0"}, "vllm/vllm-openai", None, source="x"
    )
    assert [(f.cls, f.option) for f in found] == [
        ("note", "--trust-remote-code"),
        ("note", "--host 0.0.0.0"),
        ("note", "image vllm/vllm-openai"),
    ]
    assert not any(f.is_error for f in found)
    keyed = check_launch(
        ["-p", "8000:8000"],
        {},
        {"host": "0.0.0.0"},
        "i@sha256:" + "0" * 64,
        None,
        source="x",
        env_from_host=["VLLM_API_KEY"],
    )
    assert keyed == []
    latest = check_launch([], {}, {"host": "127.0.0.1"}, "vllm/vllm-openai:latest", None, source="x")
    assert latest[0].why.startswith("the image is pulled by a mutable tag (:latest)")


def test_allow_names():
    found = check_launch(
        ["--cap-add", "IPC_LOCK", "--device=/dev/infiniband"],
        {},
        {"host": "127.0.0.1"},
        None,
        [type("C", (), {"option": "--cap-add IPC_LOCK", "reason": "RDMA"})()],
        source="recipes/x/recipe.yaml",
    )
    assert required_allows(found) == ["--cap-add IPC_LOCK", "--device /dev/infiniband"]
    assert missing_allows(found, ["--cap-add  IPC_LOCK"]) == ["--device /dev/infiniband"]
    assert [f.is_error for f in found] == [False, True]
    assert str(found[0]).startswith("recipes/x/recipe.yaml: consent: --cap-add IPC_LOCK: ")


def test_seed_recipes_pass_with_notes_only(capsys):
    assert main(["--root", str(REPO / "recipes"), "--root", str(REPO / "examples"), "validate", "--no-flags"]) == 0
    out = capsys.readouterr()
    assert out.err == ""
    assert "note: --host 0.0.0.0: serves anyone on the network" in out.out


def test_the_page_shows_what_the_recipe_asks_escaped(recipe_copy):
    from catalogue.loading import load_catalogue
    from catalogue.site.pages import build_pages

    root, folder = recipe_copy()
    options("--cap-add", "IPC_LOCK")(folder)
    serving(
        lambda s: s.update(
            consent=[{"option": "--cap-add IPC_LOCK", "reason": "RDMA <script>alert(1)</script> pins `memlock`"}],
            env_from_host=["HF_TOKEN"],
        )
    )(folder)
    page = build_pages(load_catalogue([root]))["recipes/gptoss-120b.md"].markdown()
    box = page.split('<div class="admonition warning rc-asks">', 1)[1].split("</div>", 1)[0]
    assert "<li><code>--cap-add IPC_LOCK</code>: adds a kernel capability beyond docker&#39;s default set." in box
    assert "RDMA &lt;script&gt;alert(1)&lt;/script&gt; pins <code>memlock</code>" in box and "<script>" not in box
    assert "--allow NAME" in box and "<code>HF_TOKEN</code>" in box
    assert "<code>--host 0.0.0.0</code>: serves anyone on the network" in box
    assert "<code>-d</code>, <code>--restart</code>" in box
