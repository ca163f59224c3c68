"""catalogue.policy.env: each verdict of the variables' allow-list (catalogue/policy/env.yaml) as the line it prints,
in the order the file gives (never, secret, consent class, unlisted, wrong type, data), path variables by the host
folder they reach, the runner's own variables, and what a recipe takes from the owner."""

from __future__ import annotations

import pytest

from catalogue.policy import env as policy_env
from catalogue.policy.env import (
    check_env,
    check_env_from_host,
    check_env_paths,
    check_runner_sets,
    consent_class,
    fits,
    is_never,
    type_of,
)
from catalogue.policy.mounts import PolicyContext

HF = "hf_" + "EnvPolicyToken0123456789abc"
CODE = "changes what code runs in the container"
CODE_BASIS = "CIS 5 (the image decides the code); catalogue code-injection rule"
CONSENT_HOW = "(declare it in serving.consent with a reason; the owner runs it with --allow '{name}')"
PATHS_BASIS = "CIS 5.5 (host paths); catalogue code and file rule"
NEVER_PATH_HOW = "(never allowed: point it at a folder of the run's own, or leave it to the runner)"
UNNAMED = "a host folder the owner has not named (hosts file allow_mounts) nor the profile's HF cache"


@pytest.fixture(autouse=True)
def fresh_table():
    """The allow-list read afresh by each test (env_table keeps it per process)."""
    policy_env.env_table.cache_clear()
    yield
    policy_env.env_table.cache_clear()


def lines(found) -> list[str]:
    return [f.line() for f in found]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("LD_PRELOAD", True),
        ("LD_", True),
        ("PYTHONPATH", True),
        ("NCCL_NET_PLUGIN", True),
        ("UCX_MODULE_DIR", True),
        ("ld_preload", False),  # letter case as written
        ("PYTHONPATHS", False),
        ("OLD_PRELOAD", False),
        ("HF_HOME", False),
    ],
)
def test_is_never_reads_the_never_globs(name, expected):
    assert is_never(name) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("HF_ENDPOINT", "redirect"),
        ("https_proxy", "redirect"),  # any letter case
        ("VLLM_PLUGINS", "loads-code"),
        ("vllm_server_dev_mode", "opens-endpoints"),
        ("HOME", "home"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "sends-data"),
        ("HF_HOME", None),
        ("HF_ENDPOINTS", None),
    ],
)
def test_consent_class_by_name_any_case(name, expected):
    assert consent_class(name) == expected


def test_type_of_a_data_name():
    assert type_of("HF_HUB_OFFLINE") == "bool"
    assert type_of("VLLM_CPU_KVCACHE_SPACE") == "int"
    assert type_of("VLLM_LOGGING_LEVEL") == {"choices": ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]}
    assert type_of("hf_hub_offline") is None  # data names are exact
    assert type_of("NOT_LISTED") is None


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        ("bool", "TRUE", True),
        ("bool", "off", True),
        ("bool", "2", False),
        ("bool", "true ", False),  # the whole value
        ("int", "-12", True),
        ("int", "1.5", False),
        ("float", "1e-3", True),
        ("path", "/models/hf", True),
        ("path", "/a/../etc", False),
        ("path", "models", False),
        ("jobs", "-j8", True),
        ("arch", "8.0 9.0a;12.1a+PTX", True),
        ({"choices": ["spawn", "fork"]}, "fork", True),
        ({"choices": ["spawn", "fork"]}, "forkserver", False),
    ],
)
def test_fits_the_listed_type(kind, value, expected):
    assert fits(kind, value) is expected


def test_a_code_loading_name_is_never_before_anything_else():
    found = check_env({"LD_API_KEY": "abcdef1234567890", "PYTHONPATH": "/plugins"})
    assert lines(found) == [
        f"never: LD_API_KEY: {CODE} (never allowed: the image decides the code)",
        f"never: PYTHONPATH: {CODE} (never allowed: the image decides the code)",
    ]
    assert {f.basis for f in found} == {CODE_BASIS}
    assert [f.field for f in found] == [("serving", "env", "LD_API_KEY"), ("serving", "env", "PYTHONPATH")]


def test_a_secret_is_never_even_under_a_consent_name():
    (by_name, by_format) = check_env({"MY_TOKEN": "abcdefgh12345678", "HF_ENDPOINT": HF})
    assert by_name.line() == (
        "never: MY_TOKEN: a secret written in the recipe (abc********) "
        "(never written down: name it in serving.env_from_host (MY_TOKEN); the runner passes it by name)"
    )
    assert by_format.cls == "never" and by_format.option == "HF_ENDPOINT"
    assert by_format.why == "a secret written in the recipe (hf_********)"
    assert by_format.basis.startswith("catalogue secrets rule")
    assert [by_name.field, by_format.field] == [("serving", "env", "MY_TOKEN"), ("serving", "env", "HF_ENDPOINT")]


def test_a_consent_class_gives_its_reason_and_the_allow_name():
    (found,) = check_env({"HF_ENDPOINT": "https://hub.example"})
    assert found.line() == (
        "consent: HF_ENDPOINT: changes which server the model hub's requests (and the token) go to, or how it is "
        "verified " + CONSENT_HOW.format(name="HF_ENDPOINT")
    )
    assert (found.basis, found.field) == ("catalogue token rule", ("serving", "env", "HF_ENDPOINT"))
    assert found.reason is None and found.is_error


def test_declared_consent_carries_the_recipes_reason():
    (found,) = check_env({"VLLM_PLUGINS": "lora"}, declared={"VLLM_PLUGINS": "the image's own plugin"})
    assert found.line() == (
        "consent: VLLM_PLUGINS: loads code the image holds by a name the recipe chooses (plugins, logging handlers, "
        "pickled objects) (declared: the image's own plugin; the owner runs it with --allow 'VLLM_PLUGINS')"
    )
    assert found.basis == "catalogue code and file rule"
    assert not found.is_error


def test_an_unlisted_name_is_consent():
    (found,) = check_env({"SOME_SETTING": "1"}, declared={"SOME_SETTING": "why not"})
    assert found.cls == "consent" and found.reason == "why not"
    assert found.why == "a variable the run policy does not know (catalogue/policy/env.yaml lists the data ones)"
    assert found.basis == "catalogue allow-list"


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("HF_HUB_OFFLINE", "$(id)", "'$(id)' is not a bool, the type the run policy allows for HF_HUB_OFFLINE"),
        (
            "VLLM_LOGGING_LEVEL",
            "LOUD",
            "'LOUD' is not a choice of DEBUG, INFO, WARNING, ERROR, CRITICAL, the type the run policy allows for "
            "VLLM_LOGGING_LEVEL",
        ),
    ],
)
def test_a_data_name_of_another_type_is_consent(name, value, why):
    (found,) = check_env({name: value}, declared={name: "r"})
    assert (found.cls, found.option, found.why, found.basis, found.reason) == (
        "consent",
        name,
        why,
        "catalogue allow-list",
        "r",
    )
    assert found.field == ("serving", "env", name)


def test_data_of_its_type_and_the_runners_own_values_pass():
    assert check_env({"HF_HUB_OFFLINE": "1", "VLLM_LOGGING_LEVEL": "INFO", "HOME": "/tmp", "MAX_JOBS": "4"}) == []
    # the runner's value passes; the loop goes on to the next name
    assert [f.option for f in check_env({"HOME": "/tmp", "LD_PRELOAD": "/x.so"})] == ["LD_PRELOAD"]
    (home,) = check_env({"HOME": "/root"})
    assert home.cls == "consent" and home.why.startswith("decides where Python finds the user's site-packages")


def test_field_of_names_where_the_variable_was_written():
    found = check_env({"LD_PRELOAD": "/x.so", "X_UNKNOWN": "1"}, field_of=lambda key: ("options", key))
    assert [f.field for f in found] == [("options", "LD_PRELOAD"), ("options", "X_UNKNOWN")]


def test_a_host_process_path_is_judged_as_a_mount_of_it():
    found = check_env_paths({"HF_HOME": "/etc//hf/", "VLLM_CACHE_ROOT": "/srv/cache", "HOME": "/root"}, None)
    assert lines(found) == [
        f"never: HF_HOME /etc/hf: points HF_HOME at the host's /etc, a system folder {NEVER_PATH_HOW}",
        f"consent: VLLM_CACHE_ROOT /srv/cache: points VLLM_CACHE_ROOT at {UNNAMED} "
        + CONSENT_HOW.format(name="VLLM_CACHE_ROOT /srv/cache"),
        f"never: HOME /root: points HOME at the host's /root whole {NEVER_PATH_HOW}",
    ]
    assert {f.basis for f in found} == {PATHS_BASIS}
    assert found[0].field == ("serving", "env", "HF_HOME")


def test_owner_folders_are_free_on_the_host():
    context = PolicyContext(owner_folders=("/srv/",))
    assert check_env_paths({"HF_HOME": "/srv/hf", "TORCHINDUCTOR_CACHE_DIR": "/srv"}, None, context) == []
    (after,) = check_env_paths({"HF_HOME": "/srv/hf", "VLLM_CACHE_ROOT": "/etc/x"}, None, context)
    assert after.option == "VLLM_CACHE_ROOT /etc/x"
    (other,) = check_env_paths({"HF_HOME": "/srvx/hf"}, None, context, declared={"HF_HOME /srvx/hf": "mine"})
    assert other.cls == "consent" and other.reason == "mine"


def test_only_path_variables_with_path_values_are_judged():
    assert check_env_paths({"SOME_DIR": "/etc", "HF_HUB_OFFLINE": "/etc"}, None) == []
    (after,) = check_env_paths({"SOME_DIR": "/etc", "HF_HOME": "relative", "VLLM_CACHE_ROOT": "/etc/x"}, None)
    assert after.option == "VLLM_CACHE_ROOT /etc/x"
    assert check_env_paths({"HF_HOME": "relative/hf", "VLLM_CACHE_ROOT": "/a/../etc", "HOME": "~"}, None) == []


def test_a_container_path_reaches_the_host_only_through_a_bind():
    binds = [("/srv/data", "/data"), ("/etc", "/cfg")]
    assert check_env_paths({"HF_HOME": "/models/hf"}, binds) == []  # the container's own folder
    assert check_env_paths({"HF_HOME": "/etc"}, []) == []  # the container's /etc
    found = check_env_paths({"HF_HOME": "/data/hf", "VLLM_CACHE_ROOT": "/cfg/x"}, binds, field_of=lambda k: (k,))
    assert lines(found) == [
        f"consent: HF_HOME /srv/data/hf: points HF_HOME (in the bind at /data) at {UNNAMED} "
        + CONSENT_HOW.format(name="HF_HOME /srv/data/hf"),
        "never: VLLM_CACHE_ROOT /etc/x: points VLLM_CACHE_ROOT (in the bind at /cfg) at the host's /etc, a system "
        f"folder {NEVER_PATH_HOW}",
    ]
    assert [f.field for f in found] == [("HF_HOME",), ("VLLM_CACHE_ROOT",)]


def test_an_owner_folder_reached_from_a_container_is_still_consent():
    context = PolicyContext(owner_folders=("/srv/data",))
    (found,) = check_env_paths({"HF_HOME": "/data/hf"}, [("/srv/data", "/data")], context)
    assert found.line() == (
        "consent: HF_HOME /srv/data/hf: points HF_HOME into a host folder (in the bind at /data): files there "
        "outlive the run and can be another run's code " + CONSENT_HOW.format(name="HF_HOME /srv/data/hf")
    )
    assert (found.basis, found.field) == (PATHS_BASIS, ("serving", "env", "HF_HOME"))
    both = check_env_paths({"HF_HOME": "/data/hf", "HOME": "/etc"}, [("/srv/data", "/data"), ("/etc", "/etc")], context)
    assert [f.option for f in both] == ["HF_HOME /srv/data/hf", "HOME /etc"]


def test_a_path_into_the_profiles_hf_cache_is_consent():
    context = PolicyContext(hf_cache_target="/root/.cache/huggingface/")
    found = check_env_paths(
        {
            "HF_HOME": "/root/.cache/huggingface",  # the cache's own variable at the cache: as the profile means
            "VLLM_CACHE_ROOT": "/root/.cache/huggingface",
            "TORCHINDUCTOR_CACHE_DIR": "/root/.cache/huggingface/x",
            "TIKTOKEN_ENCODINGS_BASE": "/root/.cache/huggingfacex",  # beside it, not in it
        },
        [],
        context,
        declared={"VLLM_CACHE_ROOT /root/.cache/huggingface": "r"},
    )
    assert [(f.cls, f.option, f.reason) for f in found] == [
        ("consent", "VLLM_CACHE_ROOT /root/.cache/huggingface", "r"),
        ("consent", "TORCHINDUCTOR_CACHE_DIR /root/.cache/huggingface/x", None),
    ]
    assert found[1].why == (
        "points TORCHINDUCTOR_CACHE_DIR into the Hugging Face cache, which the runner mounts from the owner's "
        "machine: what a model download puts there (any repository's files) would be read as "
        "TORCHINDUCTOR_CACHE_DIR's"
    )
    assert (found[1].basis, found[1].field) == (PATHS_BASIS, ("serving", "env", "TORCHINDUCTOR_CACHE_DIR"))
    # on the owner's machine the profile's container path means nothing: a host folder
    (host,) = check_env_paths({"HF_HOME": "/root/.cache/huggingface/x"}, None, context)
    assert host.option == "HF_HOME /root/.cache/huggingface/x" and host.why.startswith("points HF_HOME at ")


def test_the_runners_own_variables_are_never():
    found = check_runner_sets({"VLLM_CACHE_ROOT": "/c", "HF_HOME": "/h", "TORCHINDUCTOR_CACHE_DIR": "/t"})
    assert lines(found) == [
        "never: VLLM_CACHE_ROOT: the runner sets VLLM_CACHE_ROOT itself (its compile cache): the recipe's value "
        "would replace the runner's (never allowed)",
        "never: TORCHINDUCTOR_CACHE_DIR: the runner sets TORCHINDUCTOR_CACHE_DIR itself (its compile cache): the "
        "recipe's value would replace the runner's (never allowed)",
    ]
    assert {f.basis for f in found} == {"catalogue code and file rule"}
    assert found[0].field == ("serving", "env", "VLLM_CACHE_ROOT")
    assert check_runner_sets({"VLLM_CACHE_ROOT": "/c"}, field_of=lambda k: ("o", k))[0].field == (
        "o",
        "VLLM_CACHE_ROOT",
    )


def test_env_from_host_beyond_the_allow_list():
    names = ["HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "LD_PRELOAD", "NCCL_SOCKET_IFNAME", "VLLM_API_KEY"]
    found = check_env_from_host(names, {"env_from_host AWS_SECRET_ACCESS_KEY": "s3"}, ["NCCL_SOCKET_IFNAME"])
    assert lines(found) == [
        "consent: env_from_host AWS_SECRET_ACCESS_KEY: passes the owner's AWS_SECRET_ACCESS_KEY into the containers "
        "(declared: s3; the owner runs it with --allow 'env_from_host AWS_SECRET_ACCESS_KEY')",
        f"never: env_from_host LD_PRELOAD: {CODE} (never allowed)",
    ]
    assert [f.basis for f in found] == ["catalogue secrets rule", CODE_BASIS]
    assert [f.field for f in found] == [("serving", "env_from_host", 1), ("serving", "env_from_host", 2)]
    (profile_less,) = check_env_from_host(["NCCL_SOCKET_IFNAME"], {})
    assert profile_less.option == "env_from_host NCCL_SOCKET_IFNAME" and profile_less.reason is None


def test_any_variable_into_a_bind_the_runner_adds_is_never_as_a_written_path():
    """A path variable (or one the policy does not know) whose value lands in the runner's compile-cache bind or the
    HF cache's hub is judged as --download-dir there is: never, named by the host folder. HF_HOME at the compile
    cache got no finding at all, TRITON_CACHE_DIR and XDG_CACHE_HOME into the hub only the unknown-name consent."""
    from catalogue.models.platform import load_platform
    from catalogue.policy.check import context_for

    context = context_for(load_platform("dgx-spark"))
    env = {
        "HF_HOME": "/catalogue-cache/x",
        "TRITON_CACHE_DIR": "/root/.cache/huggingface//hub/../hub/evil",
        "XDG_CACHE_HOME": "root/.cache/huggingface/hub/x",  # relative: from the working folder, /
        "NUMBA_CACHE_DIR": "/tmp/ok:/catalogue-cache",  # a list of paths: each part
        "HF_HUB_CACHE": "/root/.cache/huggingface/hub",  # the cache's own variable at the cache: the runner's
        "TIKTOKEN_ENCODINGS_BASE": "/opt/encodings",  # the container's own folder
    }
    found = check_env_paths(env, [], context)
    assert [(f.cls, f.option) for f in found] == [
        ("never", "HF_HOME ~/.cache/catalogue/compile/<image>/<recipe>/x"),
        ("never", "TRITON_CACHE_DIR ~/.cache/huggingface/hub/evil"),
        ("never", "XDG_CACHE_HOME ~/.cache/huggingface/hub/x"),
        ("never", "NUMBA_CACHE_DIR ~/.cache/catalogue/compile/<image>/<recipe>"),
    ]
    assert found[0].why.startswith("writes into ~/.cache/catalogue/compile/<image>/<recipe>/x, a folder of the owner's")
    assert found[1].field == ("serving", "env", "TRITON_CACHE_DIR")
    # on the owner's machine the container's binds mean nothing: host paths, judged as before
    on_host = check_env_paths({"TRITON_CACHE_DIR": "/catalogue-cache/x"}, None, context)
    assert not [f for f in on_host if f.cls == "never"]
