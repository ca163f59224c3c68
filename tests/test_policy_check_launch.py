"""catalogue.policy.check, a launch as a whole: docker options, variables, flags and the image in order, each part
with the recipe's declared reasons and the platform's context, a `serving` block on its platform, a recipe file with
its lines, its unused consent and the secrets written in it, and the names the owner passes to --allow."""

from __future__ import annotations

from types import SimpleNamespace

import yaml

from catalogue.models.recipe import Serving
from catalogue.policy import rules
from catalogue.policy.check import (
    check_launch,
    check_recipe_file,
    check_serving,
    context_for,
    declared_map,
    errors,
    merge_secrets,
    missing_allows,
    required_allows,
    secret_findings,
    unused_consent,
)
from catalogue.policy.finding import PolicyFinding
from catalogue.policy.mounts import PolicyContext

HF = "hf_" + "CheckPolicyToken0123456789ab"
CACHE = "/root/.cache/huggingface"
HF_CACHE = SimpleNamespace(host="~/.cache/huggingface", container=CACHE)
"""A platform profile's Hugging Face cache (catalogue.models.platform.HfCache): the owner's folder, the container's."""
LOCAL = {"host": "127.0.0.1"}


def how(name: str) -> str:
    return f"(declare it in serving.consent with a reason; the owner runs it with --allow '{name}')"


def test_declared_map_collapses_spaces():
    assert declared_map(None) == {}
    assert declared_map({"--cap-add   IPC_LOCK ": "RDMA"}) == {"--cap-add IPC_LOCK": "RDMA"}
    given = [SimpleNamespace(option=" --privileged", reason="r1"), SimpleNamespace(option="--pid  host", reason="r2")]
    assert declared_map(given) == {"--privileged": "r1", "--pid host": "r2"}


def test_a_launch_without_a_container():
    found = check_launch(
        ["--privileged"], {"VLLM_CACHE_ROOT": "/srv/c"}, {**LOCAL, "trust-remote-code": True}, None, None, source="f"
    )
    assert [f.line() for f in found] == [
        "consent: no container: runs vLLM on your machine outside a container, with your user's rights and files "
        + how("no container"),
        "consent: --privileged: gives the container every capability and every host device " + how("--privileged"),
        "consent: VLLM_CACHE_ROOT /srv/c: points VLLM_CACHE_ROOT at a host folder the owner has not named (hosts "
        "file allow_mounts) nor the profile's HF cache " + how("VLLM_CACHE_ROOT /srv/c"),
        "consent: --trust-remote-code: runs Python code from the model repository on your machine (no container, or "
        "--local), with your user's files and variables " + how("--trust-remote-code"),
    ]
    assert found[0].basis == "catalogue policy" and found[0].field == ("serving", "image")
    assert {f.source for f in found} == {"f"}


def test_a_launch_in_a_container_in_order():
    found = check_launch(
        ["-v", "/srv/c:/c", "--cap-add", "IPC_LOCK"],
        {"VLLM_CACHE_ROOT": "/c/x", "SOME_SETTING": "1"},
        {**LOCAL, "worker-cls": "evil.W"},
        "vllm/vllm-openai:v1",
        {"--cap-add IPC_LOCK": "RDMA"},
        source="recipe.yaml",
        env_from_host=["AWS_KEY", "NCCL_SOCKET_IFNAME"],
        context=PolicyContext(profile_env=("NCCL_SOCKET_IFNAME",), trusted_images=("vllm/",)),
        image_source="docker.io",
    )
    assert [(f.cls, f.option, f.reason) for f in found] == [
        ("consent", "--volume /srv/c", None),
        ("consent", "--cap-add IPC_LOCK", "RDMA"),
        ("consent", "SOME_SETTING", None),
        ("never", "VLLM_CACHE_ROOT", None),
        ("consent", "VLLM_CACHE_ROOT /srv/c/x", None),
        ("consent", "env_from_host AWS_KEY", None),
        ("consent", "--worker-cls", None),
        ("consent", "env_from_host AWS_KEY to --worker-cls", None),  # the owner's variables beside that code
        ("consent", "env_from_host NCCL_SOCKET_IFNAME to --worker-cls", None),
    ]
    assert {f.source for f in found} == {"recipe.yaml"}


def test_the_image_is_judged_against_the_trust_list_of_a_context():
    args = ([], {}, LOCAL, "evil/img:1", None)
    assert check_launch(*args, source="s") == []  # no context: not judged
    (found,) = check_launch(*args, source="s", context=PolicyContext())
    assert (found.cls, found.option, found.field) == ("consent", "image docker.io/evil/img", ("serving", "image"))
    assert check_launch(*args, source="s", context=PolicyContext(trusted_images=("docker.io/evil/",))) == []


def test_context_for_a_platform_and_the_owners_hosts_file():
    compile_cache = ("~/.cache/catalogue/compile/<image>/<recipe>", "/catalogue-cache")
    assert context_for(None) == PolicyContext(None, (), trusted_images=(), runner_binds=(compile_cache,))
    platform = SimpleNamespace(hf_cache=HF_CACHE, trusted_images=("nvcr.io/nvidia/",))
    context = context_for(platform, ["/srv"], ["local/"])
    assert (context.hf_cache_target, context.owner_folders) == (CACHE, ("/srv",))
    assert context.trusted_images == ("nvcr.io/nvidia/", "local/")
    assert context.runner_binds == (compile_cache, ("~/.cache/huggingface/hub", CACHE + "/hub"))
    no_cache = context_for(SimpleNamespace(hf_cache=None, trusted_images=()), owner_images=("a/",))
    assert (no_cache.hf_cache_target, no_cache.trusted_images) == (None, ("a/",))


def serving(**fields) -> Serving:
    return Serving(**{"image": "vllm/vllm-openai:v1", "flags": LOCAL, **fields})


def test_check_serving_on_a_platform():
    platform = SimpleNamespace(hf_cache=HF_CACHE, trusted_images=("vllm/",))
    spec = serving(container={"options": ["-v", f"~/hf:{CACHE}", "-v", "/srv/m:/m"]}, env_from_host=["X_KEY"])
    found = check_serving(spec, source="r.yaml", platform=platform, owner_folders=["/srv"])
    assert [(f.cls, f.option, f.source) for f in found] == [
        ("note", "--volume ~/hf", "r.yaml"),
        ("consent", "env_from_host X_KEY", "r.yaml"),
    ]
    untrusted = check_serving(serving(), source="r.yaml", owner_images=["other/"])
    assert [f.option for f in untrusted] == ["image docker.io/vllm/vllm-openai"]
    assert check_serving(serving(), source="r.yaml", owner_images=["vllm/"]) == []


def test_a_control_character_is_the_only_finding():
    found = check_serving(serving(env={"LD_PRELOAD": "/x\n.so"}, container={"options": ["--privileged"]}), source="r")
    assert len(found) == 1 and found[0].source == "r"
    assert found[0].cls == "never" and "U+000A" in found[0].why


def test_unused_consent():
    used = [PolicyFinding("consent", "--privileged", "w", "h"), PolicyFinding("never", "--pid host", "w", "h")]
    given = [
        SimpleNamespace(option="--privileged", reason="r"),
        SimpleNamespace(option="--pid  host", reason="r"),
        SimpleNamespace(option="--cap-add SYS_ADMIN", reason="r"),
    ]
    assert unused_consent(used, given) == ["--pid  host", "--cap-add SYS_ADMIN"]


RECIPE = f"""\
serving:
  image: vllm/vllm-openai:v1
  env:
    HF_TOKEN: {HF}
    LD_PRELOAD: /x.so
  flags:
    host: 127.0.0.1
  consent:
    - option: --privileged
      reason: unused
    - option: --cap-add  IPC_LOCK
      reason: RDMA
  container:
    options: [--cap-add, IPC_LOCK]
# a note: {"hf_" + "CommentToken0123456789abcdef"}
"""


def recipe_serving(text: str) -> Serving:
    return Serving(**yaml.safe_load(text)["serving"])


def test_a_recipe_file_with_its_lines_unused_consent_and_secrets(tmp_path):
    path = tmp_path / "recipe.yaml"
    path.write_text(RECIPE)
    found = check_recipe_file(path, recipe_serving(RECIPE), owner_images=["vllm/"])
    assert [(f.lineno, f.cls, f.option) for f in found] == [
        (4, "never", "HF_TOKEN"),  # the secret scan's own hit on that line is the same finding
        (5, "never", "LD_PRELOAD"),
        (9, "never", "--privileged"),
        (14, "consent", "--cap-add IPC_LOCK"),
        (15, "never", "secret"),
    ]
    unused = found[2]
    assert unused.line() == (
        "never: --privileged: declared in serving.consent, but the launch does not use it (remove it, or name the "
        "option as the policy does)"
    )
    assert (unused.basis, unused.field, unused.source) == (
        "catalogue policy",
        ("serving", "consent", 0, "option"),
        str(path),
    )
    assert found[3].reason == "RDMA"
    secret = found[4]
    assert secret.line().startswith("never: secret: a secret written in the file (")
    assert secret.line().endswith(
        ": hf_********) (never written down: name the variable in serving.env_from_host; the runner passes it by name)"
    )
    assert "CommentToken" not in secret.line()
    assert (secret.basis, secret.source) == (rules.SECRET_BASIS, str(path))
    assert check_recipe_file(path, recipe_serving(RECIPE), text=RECIPE, owner_images=["vllm/"]) == found


def test_the_second_unused_consent_names_its_own_entry():
    text = RECIPE.replace("--cap-add  IPC_LOCK", "--pid host")
    found = check_recipe_file("r.yaml", recipe_serving(text), text=text)
    (unused,) = [f for f in found if "declared" in f.why and f.option != "--privileged"]
    assert (unused.option, unused.field, unused.lineno) == ("--pid host", ("serving", "consent", 1, "option"), 11)


def test_secret_findings_name_each_line():
    found = secret_findings("run.txt", f"a\nkey {HF}\nb\ntoken: {HF}x\n")
    assert [(f.lineno, f.cls, f.option, f.source) for f in found] == [
        (2, "never", "secret", "run.txt"),
        (4, "never", "secret", "run.txt"),
    ]
    assert secret_findings("run.txt", "nothing here\n") == []


def test_merge_secrets_keeps_one_finding_per_secret_line_in_line_order():
    launch = [
        PolicyFinding("never", "HF_TOKEN", "w", "h", rules.SECRET_BASIS, lineno=7),
        PolicyFinding("consent", "X", "w", "h", "other", lineno=3),
        PolicyFinding("note", "--host", "w", "h", "note"),
    ]
    secrets = [
        PolicyFinding("never", "secret", "w", "h", rules.SECRET_BASIS, lineno=3),
        PolicyFinding("never", "secret", "w", "h", rules.SECRET_BASIS, lineno=7),
        PolicyFinding("never", "secret", "w", "h", rules.SECRET_BASIS, lineno=1),
    ]
    merged = merge_secrets(launch, secrets)
    assert [(f.option, f.lineno) for f in merged] == [
        ("--host", None),
        ("secret", 1),
        ("X", 3),
        ("secret", 3),
        ("HF_TOKEN", 7),
    ]


def test_errors_and_allow_names():
    found = [
        PolicyFinding("never", "--log-driver", "w", "h"),
        PolicyFinding("consent", "--privileged", "w", "h", reason="r"),
        PolicyFinding("consent", "--pid host", "w", "h"),
        PolicyFinding("consent", "--privileged", "w", "h"),
        PolicyFinding("note", "--host", "w", "h"),
    ]
    assert [(f.cls, f.option) for f in errors(found)] == [
        ("never", "--log-driver"),
        ("consent", "--pid host"),
        ("consent", "--privileged"),
    ]
    assert required_allows(found) == ["--pid host", "--privileged"]
    assert missing_allows(found, ["--pid   host"]) == ["--privileged"]
    assert missing_allows(found, []) == ["--pid host", "--privileged"]


def test_each_part_of_a_launch_gets_what_it_needs():
    """The declared reasons, the platform context and the owner's variables reach every part of the policy."""
    declared = {
        "SOME_SETTING": "a knob",
        "VLLM_CACHE_ROOT /srv/c": "a cache",
        "--worker-cls": "the image's worker",
        "image docker.io/evil/img": "built here",
    }
    found = check_launch(
        ["-p", "8000:8000"],
        {"SOME_SETTING": "1"},
        {"host": "0.0.0.0", "worker-cls": "evil.W", "trust-remote-code": True},
        "evil/img:1",
        declared,
        source="s",
        env_from_host=["HF_TOKEN"],
        context=PolicyContext(),
    )
    assert [(f.cls, f.option, f.reason) for f in found] == [
        ("consent", "image docker.io/evil/img", "built here"),
        ("consent", "SOME_SETTING", "a knob"),
        ("consent", "--worker-cls", "the image's worker"),
        ("note", "--trust-remote-code", None),  # in a container
        ("note", "--host 0.0.0.0", None),  # the published port opens it
        ("consent", "env_from_host HF_TOKEN to --worker-cls", None),  # the image's consent names the token already
        ("consent", "env_from_host HF_TOKEN to remote code the recipe's model", None),
    ]
    assert found[0].why == (
        "runs the code of an image the trust list does not name (publisher docker.io/evil/); the owner's HF_TOKEN "
        "would go into it"
    )
    (host,) = check_launch([], {"VLLM_CACHE_ROOT": "/srv/c"}, LOCAL, None, declared, source="s")[1:]
    assert (host.option, host.reason) == ("VLLM_CACHE_ROOT /srv/c", "a cache")
    free = PolicyContext(owner_folders=("/srv",))
    assert (
        check_launch([], {"VLLM_CACHE_ROOT": "/srv/c"}, LOCAL, None, {"no container": "r"}, source="s", context=free)[
            1:
        ]
        == []
    )
    keyed = check_launch(
        ["-p", "8000:8000"], {}, {"host": "0.0.0.0"}, "img:1", None, source="s", env_from_host=["VLLM_API_KEY"]
    )
    assert keyed == []


def test_the_image_source_declares_the_image():
    (found,) = check_launch(
        [], {}, LOCAL, "evil/img:1", None, source="s", context=PolicyContext(), image_source="a Dockerfile"
    )
    assert found.reason == "serving.image_source: a Dockerfile"
    spec = serving(image="evil/img:1", image_source="a Dockerfile")
    (served,) = check_serving(spec, source="r.yaml")
    assert served.reason == "serving.image_source: a Dockerfile"


def test_a_path_variable_at_the_profiles_hf_cache_is_the_profiles_mount():
    """The recipe's bind at the cache gives way to the owner's cache: HF_HOME there reaches no bind of the recipe."""
    context = PolicyContext(CACHE)
    found = check_launch(
        ["-v", f"/srv/hf:{CACHE}"], {"HF_HOME": CACHE}, LOCAL, "img:1", None, source="s", context=context
    )
    assert [(f.cls, f.option) for f in found] == [
        ("consent", "image docker.io/library/img"),
        ("note", "--volume /srv/hf"),
    ]


def test_a_recipe_file_on_a_platform_with_the_owners_folders(tmp_path):
    text = (
        "serving:\n  image: vllm/vllm-openai:v1\n  flags:\n    host: 127.0.0.1\n  container:\n"
        f"    options: [-v, '~/hf:{CACHE}', -v, /srv/m:/m]\n"
    )
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    platform = SimpleNamespace(hf_cache=HF_CACHE, trusted_images=("vllm/",))
    found = check_recipe_file(path, recipe_serving(text), platform=platform, owner_folders=["/srv"])
    assert [(f.cls, f.option, f.source, f.lineno) for f in found] == [("note", "--volume ~/hf", str(path), 6)]
    assert [f.option for f in check_recipe_file(path, recipe_serving(text), owner_images=["vllm/"])] == [
        "--volume ~/hf",
        "--volume /srv/m",
    ]


def test_merge_secrets_puts_findings_without_a_line_first():
    found = [PolicyFinding("never", "A", "w", "h", "b", lineno=1), PolicyFinding("note", "B", "w", "h", "b")]
    assert [f.option for f in merge_secrets(found, [])] == ["B", "A"]


def test_a_written_path_is_judged_against_the_platforms_own_binds():
    """The runner mounts the profile's Hugging Face hub itself: a flag that writes there is never."""
    context = context_for(SimpleNamespace(hf_cache=HF_CACHE, trusted_images=("vllm/",)))
    found = check_launch(
        [], {}, {**LOCAL, "download-dir": CACHE + "/hub/x"}, "vllm/vllm-openai:v1", None, source="s", context=context
    )
    assert [(f.cls, f.option) for f in found] == [("never", "--download-dir ~/.cache/huggingface/hub/x")]
