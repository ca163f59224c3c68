"""catalogue.policy.mounts: `-v` and `--mount` values read as docker reads them, host paths as the kernel sees them,
the verdict on each host folder, and the binds a container path reaches through."""

from __future__ import annotations

import os

import pytest

from catalogue.policy.mounts import (
    Mount,
    PolicyContext,
    device_verdict,
    folds_into_hf_cache,
    host_binds,
    host_path,
    is_relative,
    mount_verdict,
    parse_mount,
    through_binds,
)
from catalogue.policy.paths import MOUNT_CONSENT_WHY, MOUNT_NEVER_WHY, MOUNT_RELATIVE_WHY

HOME = os.path.expanduser("~").rstrip("/") or "/"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("//a/./b/../c/", "/a/c"),
        ("/a//b", "/a/b"),
        ("~", "~"),
        ("$HOME/x", "~/x"),
        ("${HOME}//x/", "~/x"),
        ("~/a/../b", "~/b"),
        ("$HOMEX/y", "$HOMEX/y"),
        ("rel/./x", "rel/x"),
    ],
)
def test_host_path(source, expected):
    assert host_path(source) == expected


def test_host_path_above_the_home_folder_is_absolute():
    assert host_path("~/..") == (os.path.dirname(HOME) if HOME != "/" else "/")


@pytest.mark.parametrize(("path", "expected"), [("/a", False), ("~/a", False), ("a", True), ("./a", True), ("", True)])
def test_is_relative(path, expected):
    assert is_relative(path) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/data", Mount(None, "/data")),
        ("/h:/c", Mount("/h", "/c")),
        ("/h:/c:ro", Mount("/h", "/c")),
        ("/h:/c:ro,rshared", Mount("/h", "/c", shared=True)),
        ("/h:/c:SHARED", Mount("/h", "/c", shared=True)),
        ("/h:/c:rslave", Mount("/h", "/c")),
        ("/h:/c:z:shared", Mount("/h", "/c", shared=True)),
        ("/h:/c:noshared", Mount("/h", "/c")),
        ("./h:/c", Mount("./h", "/c")),
        ("~/h:/c", Mount("~/h", "/c")),
        ("$HOME/h:/c", Mount("$HOME/h", "/c")),
        ("vol:/c", Mount(None, "/c", volume="vol", kind="volume")),
        (":/c", Mount(None, "/c", kind="volume")),
    ],
)
def test_parse_a_volume_value(value, expected):
    assert parse_mount("volume", value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("type=bind,source=/h,target=/c", Mount("/h", "/c")),
        ("Type=BIND,Src=/h,Dst=/c", Mount("/h", "/c")),
        ("type=bind,src=/h,destination=/c,bind-propagation=RShared", Mount("/h", "/c", shared=True)),
        ("type=bind,src=/h,dst=/c,bind-propagation=shared", Mount("/h", "/c", shared=True)),
        ("type=bind,src=/h,dst=/c,bind-propagation=slave", Mount("/h", "/c")),
        ("type=bind,target=/c", Mount("", "/c")),
        ("source=v,target=/c", Mount(None, "/c", volume="v", kind="volume")),
        ("type=volume,target=/c", Mount(None, "/c", kind="volume")),
        ("type=volume,source= ,target=/c", Mount(None, "/c", kind="volume")),
        (
            "type=volume,target=/c,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/h",
            Mount("/h", "/c", device=True, kind="volume"),
        ),
        (
            "type=volume,target=/c,volume-opt=type=nfs,volume-opt=o=addr=1.2.3.4",
            Mount(None, "/c", driver_options=("type=nfs", "o=addr=1.2.3.4"), kind="volume"),
        ),
        ("type=volume,target=/c,volume-driver=rexray", Mount(None, "/c", driver="rexray", kind="volume")),
        ("type=volume,target=/c,volume-driver=local", Mount(None, "/c", kind="volume")),
        ("type=tmpfs,target=/c", Mount(None, "/c", kind="tmpfs")),
        ("type=tmpfs,target=/c,bind-propagation=shared", Mount(None, "/c", kind="tmpfs")),
        ("type=bind,src=/a,source=/b,dst=/c", Mount("/b", "/c", repeated="src, source")),
        (
            "type=volume,dst=/c,volume-opt=x=1,volume-opt=X=2",
            Mount(None, "/c", driver_options=("x=1", "X=2"), repeated="volume-opt=x, volume-opt=X", kind="volume"),
        ),
        ("type=volume,dst=/c,volume-label=a=1,volume-label=b=2", Mount(None, "/c", kind="volume")),
        ("type=volume,source=v,target=/c,volume-opt=device=/h", Mount("/h", "/c", device=True, kind="volume")),
        ("type=volume,dst=/c,volume-opt=device=/h=x", Mount("/h=x", "/c", device=True, kind="volume")),
        ("type=volume,dst=/c,volume-opt=o=rbind,volume-opt=device=/h", Mount("/h", "/c", device=True, kind="volume")),
        ("type=tmpfs,dst=/a,target=/b", Mount(None, "/b", repeated="dst, target", kind="tmpfs")),
        ("type=bind,src=/a=b,source=/c,dst=/d", Mount("/c", "/d", repeated="src, source")),
    ],
)
def test_parse_a_mount_value(value, expected):
    assert parse_mount("mount", value) == expected


def test_a_mount_value_docker_cannot_read_is_unreadable():
    mount = parse_mount("mount", 'type=bind,"src=/h,dst=/c')
    assert mount.source is None and mount.target is None
    assert mount.unreadable == 'a quoted field with no closing "'


@pytest.mark.parametrize(
    ("source", "verdict"),
    [
        ("..", ("never", MOUNT_NEVER_WHY["relative"])),
        (".", ("never", MOUNT_NEVER_WHY["relative"])),
        ("models", ("consent", MOUNT_RELATIVE_WHY)),
        ("/", ("never", MOUNT_NEVER_WHY["exact"].format(path="/"))),
        ("/var/lib", ("never", MOUNT_NEVER_WHY["exact"].format(path="/var/lib"))),
        ("~", ("never", MOUNT_NEVER_WHY["exact"].format(path="~"))),
        ("/home", ("never", MOUNT_NEVER_WHY["exact"].format(path="/home"))),
        ("/home/someone", ("never", MOUNT_NEVER_WHY["home"])),
        ("/etc", ("never", MOUNT_NEVER_WHY["tree"].format(path="/etc"))),
        ("/etc/ssl/x", ("never", MOUNT_NEVER_WHY["tree"].format(path="/etc"))),
        ("/var/run/docker/x", ("never", MOUNT_NEVER_WHY["tree"].format(path="/var/run/docker"))),
        ("/etcetera", ("consent", MOUNT_CONSENT_WHY)),
        ("/srv/docker.sock", ("never", MOUNT_NEVER_WHY["socket"])),
        ("/srv/my-docker.sock.d/x", ("never", MOUNT_NEVER_WHY["socket"])),
        ("/srv/podman.sock", ("never", MOUNT_NEVER_WHY["socket"])),
        ("/srv/a/.ssh/keys", ("never", MOUNT_NEVER_WHY["credentials"])),
        ("/srv/id_rsa", ("never", MOUNT_NEVER_WHY["credentials"])),
        ("/srv/.config/gh", ("never", MOUNT_NEVER_WHY["credentials"])),
        ("/srv/.config/gh/hosts.yml", ("never", MOUNT_NEVER_WHY["credentials"])),
        ("/srv/.config/other", ("consent", MOUNT_CONSENT_WHY)),
        ("/srv/gh/.config", ("consent", MOUNT_CONSENT_WHY)),
        ("/srv/models", ("consent", MOUNT_CONSENT_WHY)),
    ],
)
def test_mount_verdict(source, verdict):
    assert mount_verdict(source) == verdict


def test_the_owners_folders_need_no_consent():
    context = PolicyContext(owner_folders=("/srv/models/", "~/hf"))
    assert mount_verdict("/srv/models", context) is None
    assert mount_verdict("/srv/models/a/b", context) is None
    assert mount_verdict("$HOME/hf/x", context) is None
    assert mount_verdict("/srv/modelsx", context) == ("consent", MOUNT_CONSENT_WHY)
    assert mount_verdict("/srv/models/.ssh", context) == ("never", MOUNT_NEVER_WHY["credentials"])
    assert mount_verdict("/dataX/a", PolicyContext(owner_folders=("/dataX",))) is None


def test_an_owner_who_names_the_root_allows_every_folder_not_refused():
    context = PolicyContext(owner_folders=("/",))
    assert mount_verdict("/srv/x", context) is None
    assert mount_verdict("/etc", context) == ("never", MOUNT_NEVER_WHY["tree"].format(path="/etc"))


def test_device_verdict():
    assert device_verdict("data") == ("never", MOUNT_NEVER_WHY["device"])
    assert device_verdict("/srv/x") == ("consent", MOUNT_CONSENT_WHY)
    assert device_verdict("/etc") == mount_verdict("/etc")
    assert device_verdict("/srv/x", PolicyContext(owner_folders=("/srv",))) is None


def test_folds_into_hf_cache():
    context = PolicyContext(hf_cache_target="/root/.cache/huggingface/")
    assert folds_into_hf_cache(Mount("/h", "/root/.cache/huggingface"), context)
    assert folds_into_hf_cache(Mount("/h", "/root/.cache/huggingface/hub/"), context)
    assert not folds_into_hf_cache(Mount("/h", "/root/.cache/huggingface/other"), context)
    assert not folds_into_hf_cache(Mount("/h", None), context)
    assert not folds_into_hf_cache(Mount("/h", "/root/.cache/huggingface"), None)
    assert not folds_into_hf_cache(Mount("/h", "/root/.cache/huggingface"), PolicyContext())


def test_host_binds_lists_the_host_folders_a_container_reaches():
    context = PolicyContext(hf_cache_target="/cache")
    options = [
        "--ipc=host",
        "-v",
        "/h//a/:/c/a/",
        "-v",
        "named:/n",
        "-v",
        "/anon",
        "--mount",
        "type=bind,src=/h/b,dst=/c/b",
        "--mount",
        "type=bind,src=/x,source=/y,dst=/c/y",
        "--mount",
        'type=bind,"src=/z',
        "--mount",
        "type=volume,dst=/c/d,volume-opt=device=/h/d",
        "-v",
        "/hf:/cache",
    ]
    assert host_binds(options, context) == [("/h/a", "/c/a"), ("/h/b", "/c/b"), ("/h/d", "/c/d")]


def test_through_binds_takes_the_deepest_bind():
    binds = [("/h", "/c"), ("/g/", "/c/deep/")]
    assert through_binds("/c", binds) == ("/h", "/c")
    assert through_binds("/c/x/../y", binds) == ("/h/y", "/c")
    assert through_binds("/c/deep/z", binds) == ("/g/z", "/c/deep/")
    assert through_binds("/cx", binds) is None
    assert through_binds("/other", binds) is None
    assert through_binds("/dataX/a", [("/hX", "/dataX")]) == ("/hX/a", "/dataX")


def test_a_relative_bind_is_judged_where_docker_resolves_it_from_the_runners_folder(tmp_path, monkeypatch):
    """docker 23+ joins a relative -v source to the CLI's working folder: from a clone at ~/recipes, `../.cache` is
    ~/.cache (the HF token's folder) and was only the generic relative consent."""
    home = tmp_path / "me"
    (home / "recipes").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home / "recipes")
    holds = "mounts a folder that holds ~/.cache/huggingface/token (credentials or control of the host)"
    assert mount_verdict("../.cache") == ("never", holds)
    assert mount_verdict("models/../../.cache/huggingface") == ("never", holds)
    assert mount_verdict("../.ssh") == ("never", "mounts a folder of credentials")
    assert mount_verdict("../../etc") == ("consent", MOUNT_RELATIVE_WHY)  # tmp_path/etc: a plain folder
    assert mount_verdict("./models") == ("consent", MOUNT_RELATIVE_WHY)
    monkeypatch.chdir("/")
    assert mount_verdict("etc")[0] == "never"  # from / it is /etc


@pytest.mark.parametrize(
    "folder",
    ["~/.ngc", "~/.kaggle", "~/.config/rclone", "~/.mozilla", "~/.config/google-chrome", "~/.config/chromium",
     "~/.codex", "~/.claude", "/root/.claude/projects", "/home/u/.npmrc", "~/.vault-token", "~/.terraform.d"],
)  # fmt: skip
def test_more_credential_folders_are_never(folder):
    assert mount_verdict(folder) == ("never", "mounts a folder of credentials")


def test_the_owners_own_hf_home_is_judged_like_the_default_cache(monkeypatch):
    """The runner mounts $HF_HOME's hub when it is set (runner/planning/plan.py): its token file is a credential,
    so the cache folder and every folder above it are never, as ~/.cache/huggingface is; its hub is not."""
    monkeypatch.setenv("HF_HOME", "/data/hf/")
    held = ("never", "mounts a folder that holds /data/hf/token (credentials or control of the host)")
    assert mount_verdict("/data") == held and mount_verdict("/data/hf") == held
    assert mount_verdict("/data/hf/hub")[0] == "consent"
    monkeypatch.delenv("HF_HOME")
    assert mount_verdict("/data")[0] == "consent"


STARTUP = ("never", MOUNT_NEVER_WHY["startup"])


@pytest.mark.parametrize(
    ("source", "verdict"),
    [
        ("~/.bashrc", STARTUP),
        ("~/.profile", STARTUP),
        ("~/.bash_profile", STARTUP),
        ("~/.zshrc", STARTUP),
        ("~/.config/autostart", STARTUP),
        ("~/.config/systemd/user", STARTUP),
        ("~/.local/bin", STARTUP),
        ("~/.gitconfig", STARTUP),
        ("/home/someone/.config/systemd", STARTUP),
        ("/root/.local/bin/x", STARTUP),
        ("~/.config/autostart/../systemd", STARTUP),  # resolved as the kernel will
        ("/tmp/.X11-unix", ("never", MOUNT_NEVER_WHY["tree"].format(path="/tmp/.X11-unix"))),
        ("/tmp", ("never", MOUNT_NEVER_WHY["holds"].format(path="/tmp/.X11-unix"))),
        ("/var/snap/docker/common/var-lib-docker", ("never", MOUNT_NEVER_WHY["tree"].format(path="/var/snap/docker"))),
        ("/tmp/catalogue-x", ("consent", MOUNT_CONSENT_WHY)),
        ("/srv/a/.profile-data", ("consent", MOUNT_CONSENT_WHY)),
        ("/srv/a/bin", ("consent", MOUNT_CONSENT_WHY)),
    ],
)
def test_host_paths_of_code_the_owners_login_runs_are_never(source, verdict):
    """attack44d finding 8: these were consent with the why of any folder ("a host folder the owner has not named");
    what a container writes there runs on the host as the owner at the next login, shell, git command or X client."""
    assert mount_verdict(source) == verdict
