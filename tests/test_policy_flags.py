"""catalogue.policy.flags: each verdict on vLLM flags as the line it prints (texts from catalogue/policy/flags.yaml):
a literal --api-key, a revision that is no commit or tag, each class (never, named values, loads code, sends data,
serves files, reads a path, unclassed free text), and the page's notes (remote code, open to the network, a mutable
tag). JSON configs key by key: tests/test_policy_flags_config.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalogue.policy.flags import check_flags, looks_like_path, mutable_tag

REPO = Path(__file__).resolve().parents[1]
BASIS = "catalogue code and file rule"
LOADS = "loads Python code the recipe names into the server"
OPEN_WHY = "serves anyone on the network: it listens on every interface without --api-key"
OPEN_HOW = "set serving.env_from_host: [VLLM_API_KEY], or --host 127.0.0.1"
LOCAL = "127.0.0.1"


def judged(flags: dict, image: str | None = "img:1", options=(), env=None, from_host=(), declared=None):
    """The findings for flags on an image, the server bound to the loopback unless the flags say otherwise."""
    return check_flags({"host": LOCAL, **flags}, list(options), env or {}, image, from_host, declared)


def lines(found) -> list[str]:
    return [f.line() for f in found]


def test_a_literal_api_key_is_never_and_a_reference_passes():
    (found,) = judged({"api-key": "sk-abcdefghijklmnop"})
    assert found.line() == (
        "never: --api-key: a secret written in the recipe (sk-********) (never written down: name it in "
        "serving.env_from_host (VLLM_API_KEY); the runner passes it by name)"
    )
    assert found.basis.startswith("catalogue secrets rule") and found.field == ("serving", "flags", "api-key")
    (spelled,) = judged({"api_key": "abcdefghijkl0000"})  # vLLM's parser reads api_key as --api-key
    assert spelled.option == "--api-key"
    assert judged({"api-key": "$VLLM_API_KEY"}) == []
    assert judged({"api-key": 12345678901234}) == []  # not text: not written out as a key


@pytest.mark.parametrize("name", ["revision", "code-revision", "tokenizer-revision"])
def test_a_revision_that_is_no_commit_or_tag_is_never(name):
    (found,) = judged({name: "refs/pr/7"})
    assert found.line() == (
        f"never: --{name}: the value 'refs/pr/7' is not a 40-hex commit or a tag or branch name (letters and digits "
        "joined by . _ -; no /, no refs/pr/*) (pin a commit or a tag)"
    )
    assert (found.basis, found.field) == (BASIS, ("serving", "flags", name))
    assert judged({name: "v1.2_rc-3"}) == [] and judged({name: "0" * 40}) == []


def test_a_revision_value_is_cut_at_sixty_characters():
    (found,) = judged({"revision": "x/" * 50})
    # ascii() of the value, cut to 60 characters (its opening quote one of them)
    assert found.why.startswith(f"the value '{'x/' * 29}x is not a 40-hex commit")
    (null,) = judged({"revision": None})
    assert null.why.startswith("the value None is not")


def test_remote_code_is_a_note_in_a_container_and_consent_on_the_owners_machine():
    (note,) = judged({"trust-remote-code": True})
    assert (
        note.line()
        == "note: --trust-remote-code: runs Python code from the model repository (allowed; the page says so)"
    )
    assert (note.basis, note.field) == ("catalogue note", ("serving", "flags", "trust-remote-code"))
    (host,) = judged({"trust_remote_code": True}, image=None, declared={"--trust-remote-code": "a tiny model"})
    assert host.line() == (
        "consent: --trust-remote-code: runs Python code from the model repository on your machine (no container, "
        "or --local), with your user's files and variables (declared: a tiny model; the owner runs it with --allow "
        "'--trust-remote-code')"
    )
    assert (host.basis, host.field) == (BASIS, ("serving", "flags", "trust-remote-code"))
    (undeclared,) = judged({"trust-remote-code": True}, image=None)
    assert undeclared.reason is None
    assert judged({"trust-remote-code": False}) == [] and judged({"trust-remote-code": "true"}) == []


def test_a_server_open_to_the_network_is_a_note():
    (found,) = check_flags({"host": "0.0.0.0"}, ["-p", "8000:8000"], {}, "img:1")
    assert found.line() == f"note: --host 0.0.0.0: {OPEN_WHY} ({OPEN_HOW})"
    assert (found.basis, found.field) == ("catalogue note", ("serving", "flags", "host"))
    (unset,) = check_flags({}, ["--network=host"], {}, "img:1")
    assert unset.option == "--host unset (vLLM listens on every interface)"
    assert unset.field == ("serving", "flags")
    assert [f.option for f in check_flags({"host": "::"}, ["-P"], {}, "img:1")] == ["--host ::"]
    assert [f.option for f in check_flags({"host": "[::]"}, [], {}, None)] == ["--host [::]"]  # no container


@pytest.mark.parametrize(
    ("flags", "options", "env", "from_host"),
    [
        ({"host": "0.0.0.0"}, [], {}, ()),  # a container with no published port
        ({"host": "0.0.0.0"}, ["--network", "bridge"], {}, ()),
        ({"host": "127.0.0.1"}, ["-p", "8000:8000"], {}, ()),
        ({"host": "0.0.0.0", "api-key": "$KEY"}, ["-p", "8000:8000"], {}, ()),
        ({"host": "0.0.0.0"}, ["-p", "8000:8000"], {"VLLM_API_KEY": "$K"}, ()),
        ({"host": "0.0.0.0"}, ["-p", "8000:8000"], {}, ("VLLM_API_KEY",)),
    ],
)
def test_a_server_behind_a_key_the_loopback_or_no_port_is_not_open(flags, options, env, from_host):
    assert [f for f in check_flags(flags, options, env, "img:1", from_host) if f.cls == "note"] == []


def test_no_container_listening_everywhere_is_open_and_behind_a_key_is_not():
    assert [f.option for f in check_flags({}, [], {}, None)] == ["--host unset (vLLM listens on every interface)"]
    assert check_flags({}, [], {}, None, ["VLLM_API_KEY"]) == []


@pytest.mark.parametrize(
    ("image", "tag"),
    [
        ("vllm/vllm-openai", "no tag"),
        ("localhost:5000/vllm", "no tag"),  # a registry's port is no tag
        ("vllm/vllm-openai:latest", ":latest"),
        ("vllm/vllm-openai:v0.11.0", None),
        ("vllm/vllm-openai@sha256:" + "a" * 64, None),
        ("vllm/vllm-openai:latest@sha256:" + "a" * 64, None),
        ("", None),
        (None, None),
    ],
)
def test_mutable_tag(image, tag):
    assert mutable_tag(image) == tag


def test_a_mutable_tag_is_a_note_on_the_image():
    (found,) = judged({}, image="vllm/vllm-openai:latest")
    assert found.line() == (
        "note: image vllm/vllm-openai:latest: the image is pulled by a mutable tag (:latest): what runs can change "
        "without the recipe changing (pin it by digest: image@sha256:...)"
    )
    assert (found.basis, found.field) == ("catalogue note", ("serving", "image"))


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("model", "/models/m", True),
        ("model", "~/m", True),
        ("model", "$HOME/m", True),
        ("model", "./m", True),
        ("model", "org/model", False),
        ("chat-template", "/t.jinja", True),
        ("chat-template", "{{ messages }}", False),
        ("chat-template", "/x\n{% if %}", False),
        ("chat-template", "/x{y}", False),
        ("lora-modules", "sql=/srv/lora", True),
        ("lora-modules", "sql=org/lora", False),
        ("model", "/a=b", True),  # only lora-modules has name=path
    ],
)
def test_looks_like_path(flag, value, expected):
    assert looks_like_path(flag, value) is expected


def ambiguous_prefix(prefix: str) -> list[str]:
    """The flags of the committed snapshots that `--prefix` could abbreviate, read from the snapshot files."""
    names = {
        spelling[2:]
        for path in (REPO / "snapshots").glob("vllm-*.json")
        for option in json.loads(path.read_text())["options"]
        for spelling in option["spellings"]
        if spelling.startswith("--" + prefix)
    }
    return sorted(names)


def test_an_abbreviation_of_several_flags_is_never():
    several = ambiguous_prefix("enable-p")
    assert len(several) >= 4
    (found,) = judged({"enable-p": True})
    assert found.line() == (
        f"never: --enable-p: an abbreviation vLLM's parser could read as any of {len(several)} flags "
        f"(--{several[0]}, --{several[1]}, --{several[2]}, ...): it names no one flag (spell the flag in full)"
    )
    assert (found.basis, found.field) == (BASIS, ("serving", "flags", "enable-p"))


def test_a_value_off_the_named_list_is_never():
    assert judged({"distributed-executor-backend": "ray"}) == []
    (found,) = judged({"distributed-executor-backend": "evilmod.Executor"})
    assert found.line() == (
        "never: --distributed-executor-backend evilmod.Executor: not one of vLLM's named values (ray, mp, uni, "
        "external_launcher): vLLM imports any other value as a class and runs it on every node (use one of ray, "
        "mp, uni, external_launcher; the runner picks the executor for the topology)"
    )
    assert (found.basis, found.field) == (BASIS, ("serving", "flags", "distributed-executor-backend"))


@pytest.mark.parametrize(
    ("flag", "value", "why"),
    [
        ("tool-parser-plugin", "/recipe/plugin.py", LOADS),
        ("logits-processors", ["evil.Proc"], LOADS),
        ("worker_cls", "evil.Worker", LOADS),
        (
            "tool-server",
            "10.0.0.1:8001",
            "sends data to a server of the recipe's choice, or publishes it on an address",
        ),
        ("allowed-local-media-path", "/", "lets any API client read files under that path through the server"),
        ("mystery-option", "/opt/x", "takes free text the run policy has not classed (catalogue/policy/flags.yaml)"),
    ],
)
def test_a_flag_of_a_consent_class(flag, value, why):
    (found,) = judged({flag: value}, declared={"--worker-cls": "the image's worker"})
    shown = "--" + flag.replace("_", "-")
    reason = "the image's worker" if flag == "worker_cls" else None
    assert (found.cls, found.option, found.why, found.basis, found.reason) == ("consent", shown, why, BASIS, reason)
    assert found.field == ("serving", "flags", flag)


def test_an_empty_code_flag_loads_nothing():
    assert judged({"tool-parser-plugin": ""}) == []
    assert judged({"logits-processors": []}) == []
    assert judged({"middleware": None}) == []


def test_the_file_of_more_flags_is_never():
    (found,) = judged({"config": "/recipe/more.yaml"})
    assert found.line() == (
        "never: --config: a YAML file of more flags that vLLM's parser reads itself (any flag, worker-cls or a "
        "plugin among them), so the policy never sees them: the runner passes the flags itself (write each flag in "
        "serving.flags)"
    )
    assert found.basis == BASIS


def test_data_values_of_unclassed_and_typed_flags_pass():
    assert judged({"mystery-option": 3, "mystery-switch": True, "mystery-rate": "-1.5e3", "max-model-len": 4096}) == []
    assert judged({"served-model-name": ["a", "b"], "kv-cache-dtype": "fp8"}) == []


def test_a_path_flag_without_a_container_reads_the_owners_files():
    (found,) = judged({"chat-template": "/srv/t.jinja"}, image=None, declared={"--chat-template": "mine"})
    assert found.line() == (
        "consent: --chat-template: reads a file on your machine (vLLM runs outside a container) (declared: mine; "
        "the owner runs it with --allow '--chat-template')"
    )
    assert found.basis == BASIS
    (system,) = judged({"chat-template": "/etc/x.jinja"}, image=None)
    assert (
        system.line() == "never: --chat-template /etc/x.jinja: reads the host's /etc, a system folder (never allowed)"
    )
    assert (system.basis, system.field) == (BASIS, ("serving", "flags", "chat-template"))
    (lora,) = judged({"lora-modules": ["sql=org/lora", "x=/root/.ssh/k"]}, image=None)
    assert lora.option == "--lora-modules /root/.ssh/k" and lora.why == "reads a folder of credentials"
    assert judged({"model": "org/model", "tokenizer": "org/model"}, image=None) == []


def test_a_path_flag_in_a_container_reads_the_containers_files_except_the_home_folder():
    assert judged({"chat-template": "/etc/x.jinja", "download-dir": "/srv/x"}) == []
    (found,) = judged({"chat-template": "~/.ssh/id_ed25519"})
    assert found.line() == ("never: --chat-template ~/.ssh/id_ed25519: reads a folder of credentials (never allowed)")
    (home,) = judged({"model": "$HOME/.aws/m"})
    assert home.option == "--model ~/.aws/m"


def test_the_notes_read_each_name_as_vllms_parser_does():
    """An abbreviation or an underscore spelling is the flag itself for the notes too."""
    assert [f.option for f in judged({"trust-remote": True})] == ["--trust-remote-code"]
    assert check_flags({"ho": "0.0.0.0", "api-k": "$KEY"}, ["-p", "8000:8000"], {}, "img:1") == []
    (opened,) = check_flags({"ho": "0.0.0.0"}, ["-p", "8000:8000"], {}, "img:1")
    assert opened.option == "--host 0.0.0.0"


def test_an_empty_host_listens_everywhere():
    (found,) = check_flags({"host": ""}, [], {}, None)
    assert (found.option, found.field) == (
        "--host unset (vLLM listens on every interface)",
        ("serving", "flags", "host"),
    )


def test_each_value_of_a_path_flag_is_read():
    (found,) = judged({"model": ["org/x", "/srv/x"]}, image=None)
    assert (found.cls, found.option) == ("consent", "--model")
    (never,) = judged({"lora-modules": ["a=/srv/x", "b=~/.ssh/k"]})  # in a container: the next value too
    assert (never.cls, never.option) == ("never", "--lora-modules ~/.ssh/k")
    assert judged({"lora-modules": "a=b=/etc/x"}, image=None) == []  # the name ends at the first '='


def test_every_flag_is_judged_after_an_ambiguous_or_a_data_one():
    found = judged({"enable-p": True, "mystery-option": 3, "worker-cls": "evil.W", "middleware": ["evil.mw"]})
    assert [(f.cls, f.option) for f in found] == [
        ("never", "--enable-p"),
        ("consent", "--worker-cls"),
        ("consent", "--middleware"),
    ]


def test_a_list_of_named_values_only_is_data():
    assert judged({"distributed-executor-backend": ["ray", "mp", "uni", "external_launcher"]}) == []
    (found,) = judged({"distributed-executor-backend": ["ray", "evil.X"]})
    assert found.cls == "never"


def test_a_code_flag_holding_only_an_empty_word_loads_nothing():
    assert judged({"logits-processors": [""]}) == []


def test_a_path_flag_reads_the_whole_value_and_a_lora_path_after_its_name():
    (found,) = judged({"chat-template": "/etc/a=b.jinja"}, image=None)
    assert (found.cls, found.option) == ("never", "--chat-template /etc/a=b.jinja")
    (lora,) = judged({"lora-modules": "sql=/etc/x=y"}, image=None)
    assert (lora.cls, lora.option) == ("never", "--lora-modules /etc/x=y")
    (bare,) = judged({"lora-modules": "/etc/lora"}, image=None)
    assert (bare.cls, bare.option) == ("never", "--lora-modules /etc/lora")
    (consent,) = judged({"tokenizer": "/srv/tok"}, image=None)
    assert consent.field == ("serving", "flags", "tokenizer")
    assert looks_like_path("chat-template", "/x\ny") is False
    assert looks_like_path("lora-modules", "/srv/lora") is True


def test_a_written_path_is_judged_where_it_lands():
    """writes-path (catalogue/policy/flags.yaml): the container's own file, a bind of the recipe's (consent), a bind the
    runner adds (never), and anything on the owner's machine (never)."""
    assert judged({"download-dir": "/srv/models"}) == []
    (own,) = judged({"download-dir": "/models/x"}, options=["-v", "/srv/m:/models"])
    assert own.line() == (
        "consent: --download-dir /srv/m/x: writes into /srv/m/x, the recipe's bind at /models: files there outlive the "
        "run and can be another run's code (declare it in serving.consent with a reason; the owner runs it with "
        "--allow '--download-dir /srv/m/x')"
    )
    (runner,) = judged({"download-dir": "/catalogue-cache/x"})
    assert (runner.cls, runner.basis, runner.field) == ("never", BASIS, ("serving", "flags", "download-dir"))
    assert runner.why.startswith("writes into ~/.cache/catalogue/compile/<image>/<recipe>/x, a folder of the owner's")
    (host,) = judged({"download-dir": "/srv/models"}, image=None)
    assert host.line() == (
        "never: --download-dir /srv/models: writes there on your machine (vLLM runs outside a container, or --local): "
        "a file the recipe names could be any of your user's files, or code another program loads (never allowed)"
    )
