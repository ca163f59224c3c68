"""The run policy: each rule has a bad-input case (one line naming the file, its line and the option; exit 1;
nothing written), allowed launches pass, consent is declared and allowed by name, the notes show."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.models.platform import load_platform
from catalogue.policy import paths as policy_paths
from catalogue.policy import rules as policy_rules
from catalogue.policy.check import (
    PolicyContext,
    check_launch,
    context_for,
    missing_allows,
    mount_verdict,
    parse_mount,
    required_allows,
    walk_options,
)
from catalogue.policy.env import env_table
from tests.policy_corpus import CASES, FLAG_CASES, env, options, serving

REPO = Path(__file__).resolve().parents[1]
LINE = re.compile(r"recipe\.yaml:\d+: (never|consent): ")


@pytest.mark.parametrize("case", sorted({**CASES, **FLAG_CASES}))
def test_each_rule_refuses_with_one_line(case, recipe_copy, capsys, tmp_path):
    mutate, expected = {**CASES, **FLAG_CASES}[case]
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


@pytest.mark.parametrize("pattern", env_table()["never"]["names"])
def test_every_code_changing_variable_is_never(pattern):
    name = pattern.replace("*", "AUDIT")
    found = check_launch([], {name: "/x"}, {"host": "127.0.0.1"}, "img:1", None, source="x")
    assert [(f.cls, f.option) for f in found] == [("never", name)]


def test_every_docker_run_option_has_a_class():
    snapshot = json.loads((REPO / "snapshots" / "docker-run.json").read_text())
    ruled = {r.option for r in policy_rules.OPTION_RULES}
    for name in snapshot["takes_value"]:
        assert name in ruled or name in policy_rules.ALLOWED_OPTIONS or name in policy_rules.MOUNT_OPTIONS, (
            f"--{name} has no class in catalogue/policy/rules.py"
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
    "-e HF_HUB_OFFLINE=1 -e NCCL_DEBUG=INFO",
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


def test_the_profile_hf_cache_mount_folds_and_owner_folders_pass():
    spark = context_for(load_platform("dgx-spark"))
    for words in (
        ["-v", "~/.cache/huggingface:/root/.cache/huggingface"],
        ["-v", "$HOME/.cache/huggingface:/root/.cache/huggingface"],
        ["-v", "${HOME}/.cache/huggingface:/root/.cache/huggingface/"],
        ["-v", "/opt/hf:/root/.cache/huggingface"],
        ["--mount", "type=bind,src=/opt/hf,dst=/root/.cache/huggingface/hub"],
        ["-v", "hf-cache:/root/.cache/huggingface"],  # a named volume there is replaced the same way
    ):
        found = check_launch(words, {}, {}, "vllm/vllm-openai:v1", None, source="x", context=spark)
        assert [(f.cls, f.why.split(":")[0]) for f in found] == [
            ("note", "the platform profile mounts the Hugging Face cache here")
        ], words
    elsewhere = check_launch(
        ["-v", "/srv/weights:/models"], {}, {}, "vllm/vllm-openai:v1", None, source="x", context=spark
    )
    assert [f.cls for f in elsewhere] == ["consent"]
    owner = PolicyContext(None, ("/srv/weights",), trusted_images=("local/",))
    assert check_launch(["-v", "/srv/weights/m:/models"], {}, {}, "local/img:1", None, source="x", context=owner) == []
    assert mount_verdict("/srv/weights") == ("consent", policy_paths.MOUNT_CONSENT_WHY)


def test_value_forms_agree():
    spaced = check_launch(["--cap-add", "SYS_PTRACE"], {}, {}, "img:1", None, source="x")
    joined = check_launch(["--cap-add=SYS_PTRACE"], {}, {}, "img:1", None, source="x")
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
        "img:1",
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
    from catalogue.models.loading import load_catalogue
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


def test_a_symlink_in_a_recipe_folder_is_an_error(recipe_copy, capsys):
    root, folder = recipe_copy()
    (folder / "patch.py").symlink_to("/etc/shadow")
    assert main(["--root", str(root), "validate", "--no-flags"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {folder / 'patch.py'}: a symlink (to /etc/shadow): a recipe folder holds plain files"]


def test_an_allow_name_is_read_as_the_policy_names_it():
    from runner.planning.policy_gate import normal_allow

    assert normal_allow("cap-add=IPC_LOCK") == normal_allow("--cap-add=IPC_LOCK") == "--cap-add IPC_LOCK"
    assert normal_allow("no container") == "no container"
    assert normal_allow("env_from_host  AWS_REGION") == "env_from_host AWS_REGION"
    assert normal_allow("HF_ENDPOINT") == "HF_ENDPOINT"


def test_a_mount_field_is_read_as_dockers_cli_reads_it():
    """docker/cli opts/mount.go keeps the last value of a key under any of its spellings (the real engine:
    tests/test_inspect_gate_mounts.py); the policy reads the same, and refuses the repeat."""
    assert parse_mount("mount", "type=bind,source=/srv/a,src=/etc,dst=/x").source == "/etc"
    assert parse_mount("mount", "type=bind,src=/etc,source=/srv/a,dst=/x").source == "/srv/a"
    assert parse_mount("mount", "type=bind,src=/srv/a,target=/x,destination=/y").target == "/y"
    once = parse_mount("mount", "type=volume,dst=/d,volume-opt=device=/srv/a,volume-opt=o=bind,volume-label=a=1")
    assert once.repeated is None and once.source == "/srv/a"
    assert parse_mount("mount", "type=volume,dst=/d,volume-label=a=1,volume-label=b=2").repeated is None
    twice = check_launch(["--mount", "type=bind,src=/etc,source=/srv/a,dst=/x"], {}, {}, "img:1", None, source="x")
    assert [(f.cls, f.option) for f in twice] == [("never", "--mount /srv/a")]


HOME = [("consent", "HOME")]
"""HOME is consent whatever its value (but the runner's own): it decides where Python finds usercustomize.py."""
SNAP = "/root/.cache/huggingface/hub/models--a--t/snapshots/x"
"""A folder a model download fills, inside the profile's HF cache mount (the owner's cache on the host)."""


@pytest.mark.parametrize(
    ("options", "env", "image", "expected"),
    [
        ([], {"HF_HOME": "/etc"}, "img:1", []),  # the container's own /etc
        (["-v", "/srv/d:/data"], {"HF_HOME": "/models/hf"}, "img:1", []),
        (["-v", "/srv/d:/data"], {"HOME": "/data/x"}, "img:1", [("consent", "HOME"), ("consent", "HOME /srv/d/x")]),
        (
            ["-v", "/srv/d:/data", "-v", "/:/data/up"],
            {"HOME": "/data/up/etc"},
            "img:1",
            [*HOME, ("never", "HOME /etc")],
        ),
        (["-v", "/srv/owner:/o"], {"HF_HOME": "/o/x"}, "img:1", [("consent", "HF_HOME /srv/owner/x")]),  # a host bind
        (["-v", "~/.cache/huggingface:/root/.cache/huggingface"], {"HF_HOME": "/root/.cache/huggingface"}, "img:1", []),
        ([], {"HF_HOME": SNAP}, "img:1", [("consent", "HF_HOME " + SNAP)]),
        ([], {"HOME": SNAP}, "img:1", [*HOME, ("consent", "HOME " + SNAP)]),  # into the owner's HF cache
        ([], {"VLLM_CACHE_ROOT": "/x"}, "img:1", [("never", "VLLM_CACHE_ROOT")]),  # the runner sets it
        ([], {"TORCHINDUCTOR_CACHE_DIR": "/srv/owner/inductor"}, None, []),
        ([], {"TORCHINDUCTOR_CACHE_DIR": "/srv/other"}, None, [("consent", "TORCHINDUCTOR_CACHE_DIR /srv/other")]),
        ([], {"HOME": "/root/.gnupg"}, None, [*HOME, ("never", "HOME /root/.gnupg")]),
        ([], {"HOME": "/home/x/../../run/docker.sock"}, None, HOME),  # `..`: not of the type path
        ([], {"HOME": "/tmp"}, "img:1", []),  # exactly the runner's own value (its helper containers)
    ],
)
def test_a_path_variable_is_judged_by_the_host_folder_it_reaches(options, env, image, expected):
    """In a container the value is the container's path unless a bind takes it to the host (the profile's HF cache
    folds the recipe's cache mount away); a local process's value is a host path; both by the mount rules."""
    context = PolicyContext("/root/.cache/huggingface", ("/srv/owner",), trusted_images=("img",))
    found = check_launch(options, env, {"host": "127.0.0.1"}, image, None, source="x", context=context)
    assert [(f.cls, f.option) for f in found if f.field[:2] == ("serving", "env")] == expected, found
