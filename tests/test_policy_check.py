"""catalogue.policy.check: each `docker run` option, mount, variable and flag of a launch as the line it prints
(texts from the policy's tables: catalogue/policy/rules.py, paths.py, env.yaml, flags.yaml), an option left without
its value, and the recipe's declared consent; the value forms docker reads: test_policy_option_rules.py; a launch
as a whole and a recipe file: test_policy_check_launch.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalogue.policy import rules
from catalogue.policy.check import check_options
from catalogue.policy.finding import PolicyFinding
from catalogue.policy.mounts import PolicyContext

REPO = Path(__file__).resolve().parents[1]
MOUNT_BASIS = "CIS 5.5, 5.31; PSS baseline: HostPath Volumes"
UNNAMED = "mounts a host folder the owner has not named (hosts file allow_mounts) nor the profile's HF cache"
CACHE = "/root/.cache/huggingface"
FOLDED = "the platform profile mounts the Hugging Face cache here: the runner mounts the owner's cache instead"
FOLDED_HOW = "the owner names the host folder in the hosts file (hf_home) or $HF_HOME"


def how(name: str) -> str:
    return f"(declare it in serving.consent with a reason; the owner runs it with --allow '{name}')"


def one(options: list[str], declared=None, context=None) -> PolicyFinding:
    (found,) = check_options(options, declared or {}, context)
    return found


def test_a_rule_names_the_value_docker_reads():
    assert one(["--cap-add=cap_sys_ptrace"]).line() == (
        "consent: --cap-add SYS_PTRACE: adds a kernel capability beyond docker's default set "
        + how("--cap-add SYS_PTRACE")
    )
    assert one(["--cap-add", "CAP_IPC_LOCK"]).option == "--cap-add IPC_LOCK"
    assert one(["--cap-add", "NET_ADMIN"]).basis == "CIS 5.3; PSS baseline: Capabilities"
    label = one(["-l", "Catalogue.Run=keep"])
    assert label.line() == (
        "never: --label catalogue.run=keep: a label of the runner's own: clean-up finds its containers by them "
        "(never allowed)"
    )
    assert label.basis == "catalogue policy"
    assert one(["--device", "/dev/infiniband:/dev/ib:rwm"]).option == "--device /dev/infiniband"
    assert one(["-l", "Catalogue.Run=Keep=X"]).option == "--label catalogue.run=Keep=X"  # the key alone in lower case
    assert one(["--pid", "name=host"]).option == "--pid name=host"  # only --network reads docker's long syntax
    assert one(["--network", "name=container:db,alias=x"]).option == "--network container:db"


def test_a_rule_without_the_value_in_its_name():
    never = one(["--log-driver", "gelf"])
    assert never.line() == (
        "never: --log-driver: sends the container's log where the recipe says (the runner keeps it) (never allowed)"
    )
    assert never.basis == "CIS 2.13"
    assert never.field == ("serving", "container", "options", 0)
    consent = one(["--rm", "--entrypoint", "/bin/sh"], {"--entrypoint": "a shell"})
    assert consent.line() == (
        "consent: --entrypoint: replaces the image's entrypoint with another program (declared: a shell; the owner "
        "runs it with --allow '--entrypoint')"
    )
    assert consent.field == ("serving", "container", "options", 1)


def test_allowed_options_and_switches_turned_off_give_nothing():
    assert check_options(["--gpus", "all", "--ipc=host", "--network", "host", "--shm-size", "64g"], {}) == []
    assert check_options(["--privileged=false", "--oom-kill-disable=0", "--privileged=FALSE"], {}) == []
    ruled = ["--runtime", "nvidia", "--device", "nvidia.com/gpu=all", "--security-opt", "no-new-privileges"]
    assert check_options(ruled, {}) == []  # an allowed rule of the table
    after = ["--privileged=false", *ruled, "--rm", "--cap-add", "SYS_NICE"]
    assert [f.option for f in check_options(after, {})] == ["--cap-add SYS_NICE"]
    assert one(["--privileged=true"]).line() == (
        "consent: --privileged: gives the container every capability and every host device " + how("--privileged")
    )
    assert one(["--entrypoint=false"]).option == "--entrypoint"  # a value, not a switch


def test_an_option_docker_does_not_have_is_never():
    version = json.loads((REPO / "snapshots" / "docker-run.json").read_text())["docker_version"]
    found = one(["--no-such-option"])
    assert found.line() == (
        f"never: --no-such-option: not a `docker run` option of docker {version}: the policy cannot classify it "
        "(never allowed)"
    )
    assert (found.basis, found.field) == ("catalogue policy", ("serving", "container", "options", 0))
    both = check_options(["--no-such-option", "--privileged"], {})
    assert [f.option for f in both] == ["--no-such-option", "--privileged"]


def test_an_option_with_no_rule_is_never(monkeypatch):
    """A docker option the table does not class (a new docker release): never until it has a rule."""
    monkeypatch.setattr(rules, "ALLOWED_OPTIONS", frozenset(rules.ALLOWED_OPTIONS) - {"hostname"})
    found = one(["--hostname", "box"])
    assert found.line() == "never: --hostname: not classified by the run policy (never allowed)"
    assert (found.basis, found.field) == ("catalogue policy", ("serving", "container", "options", 0))


def test_env_options_go_through_the_variables_policy():
    bare = one(["-e", "HF_TOKEN"])
    assert bare.line() == (
        "never: --env HF_TOKEN: docker copies the owner's HF_TOKEN into the container: the runner passes variables "
        "itself (serving.env, or serving.env_from_host by name) (never allowed)"
    )
    assert (bare.basis, bare.field) == ("catalogue secrets rule", ("serving", "container", "options", 0))
    found = check_options(["--rm", "-e", "LD_PRELOAD=/x.so", "--env=VLLM_CACHE_ROOT=/c", "-e", "=x"], {})
    assert [(f.cls, f.option, f.field) for f in found] == [
        ("never", "LD_PRELOAD", ("serving", "container", "options", 1)),
        ("never", "VLLM_CACHE_ROOT", ("serving", "container", "options", 3)),
    ]
    assert found[1].why.startswith("the runner sets VLLM_CACHE_ROOT itself")
    (declared,) = check_options(["-e", "SOME_SETTING=1"], {"SOME_SETTING": "mine"})
    assert (declared.cls, declared.reason) == ("consent", "mine")
    assert check_options(["-e", "HF_HUB_OFFLINE=1"], {}) == []


@pytest.mark.parametrize(
    ("options", "line", "basis"),
    [
        (
            ["--mount", 'type=bind,"src=/a'],
            "never: --mount: docker's CLI cannot read this value (a quoted field with no closing \"), so the policy "
            "cannot say what it mounts (write it as docker reads it: key=value fields, one line, quotes only around "
            "whole fields)",
            MOUNT_BASIS,
        ),
        (
            ["--mount", "type=bind,src=/a,source=/b,dst=/x"],
            "never: --mount /b: a field given twice (src, source): docker's CLI uses the last, so the text reads two "
            "ways (never allowed: give each field of the mount once)",
            MOUNT_BASIS,
        ),
        (
            ["--mount", "type=cluster,dst=/x"],
            "never: --mount type=cluster: a mount type the policy does not know ('cluster'): docker or a plugin "
            "decides what it mounts (use a bind, a volume or a tmpfs)",
            MOUNT_BASIS,
        ),
        (
            ["--mount", "type=image,source=alpine,target=/a"],
            "consent: --mount image=alpine: mounts the files of another image into the container (docker 28's image "
            "mounts): files the serving image then reads, such as Python modules on its path, come from that image "
            + how("--mount image=alpine"),
            MOUNT_BASIS,
        ),
        (
            ["--mount", "type=volume,dst=/d,volume-driver=sshfs"],
            "consent: --mount volume-driver=sshfs: a volume of the sshfs driver: the plugin decides what it mounts "
            + how("--mount volume-driver=sshfs"),
            MOUNT_BASIS,
        ),
        (
            ["-v", "cache:/c"],
            "consent: --volume cache: a named volume the runner did not create: docker reuses a volume of that name "
            "(another container's data) and keeps it after the run " + how("--volume cache"),
            MOUNT_BASIS,
        ),
        (
            ["-v", "$(pwd)/x.py:/x.py"],
            "never: --volume $(pwd)/x.py: shell syntax in the host path: the runner starts docker without a shell, "
            "and the page quotes it (write the path out, or start it with ~/ (the reader's home folder))",
            "catalogue policy",
        ),
        (
            ["-v", "/etc:/e:ro"],
            "never: --volume /etc: mounts the host's /etc, a system folder (never allowed: mount the folder the "
            "model needs, nothing wider)",
            MOUNT_BASIS,
        ),
        (
            ["--mount", "type=volume,dst=/d,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=rel"],
            "never: --mount rel: a volume device given as a relative path: the engine resolves it against its own "
            "working folder (/) (never allowed: mount the folder the model needs, nothing wider)",
            MOUNT_BASIS,
        ),
        (
            ["-v", "/srv/m:/m:rshared"],
            "consent: --volume /srv/m: mounts a host folder with shared propagation (mounts flow back to the host) "
            + how("--volume /srv/m"),
            "CIS 5.19",
        ),
        (
            ["-v", "/srv/data:/data"],
            f"consent: --volume /srv/data: {UNNAMED} " + how("--volume /srv/data"),
            MOUNT_BASIS,
        ),
        (
            ["--mount", "type=volume,dst=/a,dst=/b"],
            "never: --mount: a field given twice (dst, dst): docker's CLI uses the last, so the text reads two ways "
            "(never allowed: give each field of the mount once)",
            MOUNT_BASIS,
        ),
        (
            ["--mount", "type=image,target=/a"],
            "consent: --mount image=(none): mounts the files of another image into the container (docker 28's image "
            "mounts): files the serving image then reads, such as Python modules on its path, come from that image "
            + how("--mount image=(none)"),
            MOUNT_BASIS,
        ),
        (
            ["-v", "./models:/m"],
            "consent: --volume models: mounts a host folder given relative to the folder the runner runs in "
            + how("--volume models"),
            MOUNT_BASIS,
        ),
    ],
)
def test_each_mount_verdict(options, line, basis):
    found = one(["--rm", *options])
    assert found.line() == line
    assert (found.basis, found.field) == (basis, ("serving", "container", "options", 1))


def test_the_mount_basis_and_the_shell_rules_basis():
    assert one(["-v", "/srv/data:/data"]).basis == MOUNT_BASIS
    assert one(["-v", "/srv/m:/m:shared"]).basis == "CIS 5.19"
    assert one(["-v", "/srv/`id`:/x"]).basis == "catalogue policy"


def test_a_home_word_is_the_home_folder_and_any_other_variable_shell_syntax():
    assert one(["-v", "$HOME/models:/m"]).option == "--volume ~/models"
    assert one(["-v", "${HOME}/models:/m"]).option == "--volume ~/models"
    assert one(["-v", "$HOME/models:/m"]).cls == "consent"
    assert one(["-v", "$HOMEX/m:/m"]).why.startswith("shell syntax in the host path")
    assert one(["-v", "/srv/$USER:/m"]).why.startswith("shell syntax in the host path")


def test_volume_driver_and_options_with_a_named_volume():
    found = check_options(
        ["--mount", "type=volume,src=data,dst=/d,volume-driver=nfs,volume-opt=type=nfs,volume-opt=o=addr=10.0.0.1"],
        {},
    )
    assert [(f.option, f.why) for f in found] == [
        ("--mount volume-driver=nfs", "a volume of the nfs driver: the plugin decides what it mounts"),
        (
            "--mount volume-opt",
            "a volume with driver options (type=nfs, o=addr=10.0.0.1): a remote or special filesystem",
        ),
        (
            "--mount data",
            "a named volume the runner did not create: docker reuses a volume of that name (another container's data) "
            "and keeps it after the run",
        ),
    ]
    assert {(f.basis, f.field) for f in found} == {(MOUNT_BASIS, ("serving", "container", "options", 0))}
    assert check_options(["-v", "/scratch", "--tmpfs", "/t"], {}) == []  # an anonymous volume, a tmpfs


@pytest.mark.parametrize(
    ("device", "target", "context", "verdict"),
    [
        ("/etc", "/d", None, ("never", "--mount /etc")),
        ("$(pwd)/x", "/d", None, ("never", "--mount $(pwd)/x")),
        ("/srv/x", "/d", None, ("consent", "--mount /srv/x")),
        ("/srv/x", "/d", PolicyContext(owner_folders=("/srv",)), None),
        ("/srv/hf", CACHE, PolicyContext(CACHE), ("note", "--mount /srv/hf")),
    ],
)
def test_a_driver_finding_stays_beside_the_host_path_verdict(device, target, context, verdict):
    value = f"type=volume,dst={target},volume-driver=sshfs,volume-opt=device={device},volume-opt=o=bind"
    found = check_options(["--mount", value], {}, context)
    expected = [("consent", "--mount volume-driver=sshfs"), *([verdict] if verdict else [])]
    assert [(f.cls, f.option) for f in found] == expected
    assert {f.field for f in found} == {("serving", "container", "options", 0)}
    assert found[0].basis == MOUNT_BASIS


def test_the_profiles_hf_cache_mount_folds_the_recipes():
    context = PolicyContext(CACHE)
    for options in (["-v", f"~/hf:{CACHE}"], ["-v", f"/srv/hf:{CACHE}/hub:rshared"]):
        found = one(options, context=context)
        assert (found.cls, found.why, found.how, found.basis) == ("note", FOLDED, FOLDED_HOW, MOUNT_BASIS)
        assert found.field == ("serving", "container", "options", 0)
    volume = one(["-v", f"hf:{CACHE}"], context=context)
    assert (volume.cls, volume.option, volume.why) == ("note", "--volume hf", FOLDED)
    assert volume.field == ("serving", "container", "options", 0)
    assert one(["-v", "/etc/hf:" + CACHE], context=context).cls == "never"  # a refused folder stays refused
    assert one(["-v", "~/hf:/hf"], context=context).cls == "consent"


def test_owner_folders_mount_freely_unless_shared():
    context = PolicyContext(owner_folders=("/srv",))
    assert check_options(["-v", "/srv/m:/m"], {}, context) == []
    assert one(["-v", "/srv/m:/m:rshared"], context=context).why.startswith("mounts a host folder with shared")


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--gpus", "all", "--tmpfs"], "--tmpfs"),
        (["--label"], "--label"),
        (["--ipc", "host", "--workdir"], "--workdir"),
        (["-v"], "--volume"),
        (["-itu"], "--user"),
    ],
)
def test_an_option_left_without_its_value_is_refused(options, named):
    """attack44d finding 7: a value-taking option last in container.options took the profile's next word as its
    value in docker's reading (`--tmpfs --ipc host ...`: `host` became the image); the static walk gave it ''."""
    found = [f for f in check_options(options, {}) if f.cls == "never"]
    assert [(f.option, f.field) for f in found] == [(named, ("serving", "container", "options", len(options) - 1))]
    assert "no word follows it" in found[0].why
    assert not [f for f in check_options([*options, "a=b"], {}) if f.cls == "never"]  # with a value: not this
