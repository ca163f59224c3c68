"""The runner's own mounts on the real docker engine: recognised only where `docker inspect` lists exactly the mount
the runner added (type, source, destination, mode, RW, propagation), never by the text of an option."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from catalogue.models.platform import load_platform
from catalogue.policy.check import check_launch, check_options, context_for, parse_mount
from runner.hosts.docker_view import OwnMount
from runner.hosts.hosts import LOCAL
from runner.planning.inspect_gate import Container, Refused, Verdicts, create_all

IMAGE = "local/debian-py:bookworm"
pytestmark = [pytest.mark.docker]
LABELS = {"catalogue.recipe": "own-mounts-test", "catalogue.run": "probe"}


def all_containers() -> list[str]:
    return subprocess.run(["docker", "ps", "-aq"], capture_output=True, text=True, check=True).stdout.split()


def argv(*options: str) -> list[str]:
    labels = [w for k, v in LABELS.items() for w in ("--label", f"{k}={v}")]
    return ["docker", "run", "--log-driver", "json-file", *labels, *options, IMAGE, "true"]


def hostile_mount(cache: Path) -> str:
    """A bind of /etc whose container path spells the runner's cache mount, then a second CSV record that docker
    never reads (issue 44: both gates passed it at 6b1f558)."""
    return f'type=bind,source=/etc,"target=/x/source={cache},target=/catalogue-cache"\n,type=volume,target=/d'


def test_a_mount_spelling_the_runners_own_in_its_path_is_refused_by_both_gates(engine, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    value = hostile_mount(cache)
    static = [f"{f.cls}: {f.option}" for f in check_options(["--mount", value], {})]
    assert "never: --mount /etc" in static, static
    before = all_containers()
    container = Container(
        "server",
        LOCAL,
        argv("--mount", value, "-v", f"{cache}:/catalogue-cache"),
        {},
        LABELS,
        [OwnMount(str(cache), "/catalogue-cache")],
    )
    with pytest.raises(Refused) as refused:
        create_all([container], {"server": IMAGE}, Verdicts({}, []))
    lines = str(refused.value).splitlines()
    assert [line for line in lines if "--mount" in line or "--volume" in line] == [
        "server container (docker inspect): never: --mount /etc: mounts the host's /etc, a system folder "
        "(never allowed: mount the folder the model needs, nothing wider)"
    ], lines
    assert all_containers() == before


@pytest.mark.parametrize(
    ("words", "own", "passes"),
    [
        (("-v", "{cache}:/catalogue-cache"), OwnMount("{cache}", "/catalogue-cache"), True),
        (("-v", "{cache}:/catalogue-cache:ro"), OwnMount("{cache}", "/catalogue-cache", "ro"), True),
        (("-v", "{cache}:/catalogue-cache"), OwnMount("{cache}", "/catalogue-cache", "ro"), False),
        (("-v", "{cache}:/elsewhere"), OwnMount("{cache}", "/catalogue-cache"), False),
        (
            ("--mount", "type=bind,src={cache},dst=/catalogue-cache,bind-propagation=rshared"),
            OwnMount("{cache}", "/catalogue-cache"),
            False,
        ),
    ],
)
def test_an_own_mount_passes_only_when_docker_made_exactly_it(engine, tmp_path, words, own, passes):
    cache = str(tmp_path)
    options = [w.format(cache=cache) for w in words]
    mount = OwnMount(own.source.format(cache=cache), own.target, own.mode)
    container = Container("server", LOCAL, argv(*options), {}, LABELS, [mount])
    try:
        starts = create_all([container], {"server": IMAGE}, Verdicts({}, []))
    except Refused as refused:
        assert not passes, str(refused)
        assert f"--{'mount' if words[0] == '--mount' else 'volume'} {cache}: " in str(refused), str(refused)
        return
    assert passes
    subprocess.run(["docker", "rm", "-f", starts["server"][-1]], capture_output=True, check=True)


@pytest.mark.parametrize(
    "fields",
    [
        "type=bind,source={a},src={b},dst=/x",
        "type=bind,src={a},source={b},target=/x",
        "type=bind,source={a},target=/x,dst=/y",
        "type=bind,src={a},destination=/x,target=/y,dst=/z",
        "type=volume,volume-opt=type=none,volume-opt=o=bind,volume-opt=device={a},volume-opt=device={b},dst=/x",
    ],
)
def test_a_repeated_mount_field_is_read_as_docker_reads_it_and_refused(engine, tmp_path, fields):
    """docker's CLI keeps the last value of a key under any of its spellings: the static reading names the same
    source and target as `docker inspect` shows, and the policy refuses the repeat (never)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    value = fields.format(a=tmp_path / "a", b=tmp_path / "b")
    made = subprocess.run(
        ["docker", "create", "--label", "catalogue-test.gate=repeat", "--mount", value, IMAGE, "true"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        data = json.loads(subprocess.run(["docker", "inspect", made], capture_output=True, check=True).stdout)[0]
        entry = data["Mounts"][0]
        source = entry.get("Source")
        if entry["Type"] == "volume":  # the local driver's device, as the engine holds it
            out = subprocess.run(["docker", "volume", "inspect", entry["Name"]], capture_output=True, check=True)
            source = json.loads(out.stdout)[0]["Options"]["device"]
    finally:
        subprocess.run(["docker", "rm", "-f", "-v", made], capture_output=True, check=True)
    mount = parse_mount("mount", value)
    assert (mount.source, mount.target) == (source, entry["Destination"])
    found = [(f.cls, f.why.split(":")[0]) for f in check_options(["--mount", value], {})]
    assert ("never", f"a field given twice ({mount.repeated})") in found, found


def test_a_path_the_server_writes_is_judged_where_docker_lands_it(engine, tmp_path):
    """The `vllm serve` flags docker holds, with docker's working folder and mounts: a relative path from a working
    folder above the runner's HF cache bind lands in it (never, named by the host folder); a path in the recipe's
    own bind is consent the owner has not given; and the static gate names the same flag."""
    hub, models = tmp_path / "hub", tmp_path / "models"
    hub.mkdir()
    models.mkdir()
    words = ["-w", "/root/.cache/huggingface", "-v", f"{hub}:/root/.cache/huggingface/hub", "-v", f"{models}:/models"]
    command = ["vllm", "serve", "m", "--download-dir", "hub/m", "--compilation-config", '{"cache_dir": "/models/c"}']
    labels = [w for k, v in LABELS.items() for w in ("--label", f"{k}={v}")]
    run = ["docker", "run", "--log-driver", "json-file", *labels, *words, IMAGE, *command]
    own = [OwnMount(str(hub), "/root/.cache/huggingface/hub")]
    before = all_containers()
    with pytest.raises(Refused) as refused:
        create_all([Container("server", LOCAL, run, {}, LABELS, own)], {"server": IMAGE}, Verdicts({}, []))
    lines = str(refused.value).splitlines()
    assert any(f"never: --download-dir {hub}/m: writes into {hub}/m" in line for line in lines), lines
    assert any(f"consent: --compilation-config cache_dir {models}/c: " in line for line in lines), lines
    assert all_containers() == before
    static = check_launch(
        words[:2], {}, {"download-dir": "hub/m"}, IMAGE, {}, source="r", context=context_for(load_platform("cpu"))
    )
    assert [(f.cls, f.option) for f in static if "download" in f.option] == [
        ("never", "--download-dir ~/.cache/huggingface/hub/m")
    ]
