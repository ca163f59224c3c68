"""catalogue.policy.flags on JSON config flags: each key by its class (catalogue/policy/flags.yaml configs:), a dotted
flag name as a key path, nested tables, a `when:` value, a config that is not a JSON object, where each finding
points, and a key that reads a path judged against the machine that reads it."""

from __future__ import annotations

from catalogue.policy.flags import check_flags

BASIS = "catalogue code and file rule"
LOADS = "loads Python code the recipe names into the server"
CONSENT_HOW = "(declare it in serving.consent with a reason; the owner runs it with --allow '{name}')"
LOCAL = "127.0.0.1"


def judged(flags: dict, image: str | None = "img:1", declared=None):
    """The findings for flags on an image, the server bound to the loopback."""
    return check_flags({"host": LOCAL, **flags}, [], {}, image, (), declared)


def test_a_config_is_judged_key_by_key():
    found = judged(
        {
            "kv-transfer-config": '{"kv_role": "kv_both", "kv_connector_module_path": "evil"}',
            "compilation-config": {"inductor_compile_config": {"cpp.cxx": "/tmp/cc", "max_autotune": True}},
            "kv-events-config": {"enable_kv_cache_events": True, "endpoint": "tcp://10.0.0.1:5557"},
        }
    )
    assert [(f.cls, f.option, f.why) for f in found] == [
        ("consent", "--kv-transfer-config kv_connector_module_path", LOADS),
        (
            "consent",
            "--compilation-config inductor_compile_config cpp.cxx",
            "takes free text the run policy has not classed (catalogue/policy/flags.yaml)",
        ),
        (
            "consent",
            "--kv-events-config endpoint",
            "sends data to a server of the recipe's choice, or publishes it on an address",
        ),
    ]
    assert [f.field for f in found] == [
        ("serving", "flags", "kv-transfer-config"),
        ("serving", "flags", "compilation-config"),
        ("serving", "flags", "kv-events-config"),
    ]
    assert found[0].line().endswith(CONSENT_HOW.format(name="--kv-transfer-config kv_connector_module_path"))


def test_a_config_key_spelled_with_dashes_is_read_with_underscores():
    (found,) = judged({"kv-transfer-config": {"kv-connector-module-path": "evil"}})
    assert found.option == "--kv-transfer-config kv_connector_module_path"


def test_a_dotted_flag_is_a_config_key():
    (found,) = judged({"compilation-config.backend": "evil.compile"})
    assert (found.option, found.why) == ("--compilation-config backend", LOADS)
    assert found.field == ("serving", "flags", "compilation-config.backend")
    assert judged({"compilation-config.backend": "eager"}) == []  # a value the when: list makes data
    (nested,) = judged({"compilation-config.inductor_compile_config.cpp.cxx": "/tmp/cc"})
    assert nested.option == "--compilation-config inductor_compile_config cpp"


def test_a_config_that_is_not_a_json_object():
    not_json = "not a JSON object the run policy can open key by key"
    (text,) = judged({"kv-transfer-config": "kv_connector=X"}, declared={"--kv-transfer-config": "r"})
    assert (text.cls, text.option, text.why, text.basis, text.reason) == (
        "consent",
        "--kv-transfer-config",
        not_json,
        BASIS,
        "r",
    )
    (listed,) = judged({"kv-transfer-config": ["a"]})
    assert (listed.option, listed.why) == ("--kv-transfer-config", not_json)
    (quoted_list,) = judged({"kv-transfer-config": '["a"]'})
    assert quoted_list.why == not_json
    assert judged({"compilation-config": 3, "optimization-level": "3"}) == []  # a level given as a number
    assert judged({"compilation-config": "3"}) == []


def test_a_config_key_of_data_or_empty_code_passes():
    assert judged({"compilation-config": {"mode": 3, "cudagraph_capture_sizes": [1, 2]}}) == []
    assert judged({"kv-transfer-config": {"kv_connector_module_path": ""}}) == []
    assert judged({"ec-manager-config": {"encoder_cache_manager_cls": {}}}) == []
    (found,) = judged({"ec-manager-config": {"encoder_cache_manager_cls": {"a": 1}}})
    assert found.option == "--ec-manager-config encoder_cache_manager_cls"


def test_where_each_config_finding_points():
    field = ("serving", "flags", "kv-transfer-config")
    for value in ("kv_connector=X", ["a"]):
        (found,) = judged({"kv-transfer-config": value})
        assert (found.basis, found.field) == (BASIS, field)
    (never,) = judged({"compilation-config": {"backend": "eager"}, "config": "/x.yaml"})
    assert never.field == ("serving", "flags", "config")
    (keyed,) = judged({"kv-transfer-config": {"kv_connector_module_path": "evil"}})
    assert (keyed.basis, keyed.field) == (BASIS, field)


def test_a_config_key_that_reads_a_path_is_judged_against_the_machine_that_reads_it():
    draft = {"method": "eagle", "model": "/srv/draft"}
    assert judged({"speculative-config": draft}) == []  # the container's own folder
    (host,) = judged({"speculative-config": draft}, image=None)
    assert host.line() == (
        "consent: --speculative-config model: reads a file on your machine (vLLM runs outside a container) "
        + CONSENT_HOW.format(name="--speculative-config model")
    )
    (dotted,) = judged({"speculative-config.model": "/etc/d"}, image=None)
    assert (dotted.option, dotted.why) == (
        "--speculative-config model /etc/d",
        "reads the host's /etc, a system folder",
    )


def test_a_nested_config_finding_keeps_the_ones_before_it():
    found = judged({"compilation-config": {"backend": "evil.x", "inductor_compile_config": {"cpp.cxx": "/x"}}})
    assert [f.option for f in found] == [
        "--compilation-config backend",
        "--compilation-config inductor_compile_config cpp.cxx",
    ]


def test_a_config_key_that_writes_a_path_is_judged_where_it_lands():
    assert judged({"compilation-config": {"cache_dir": "/srv/cache"}}) == []  # the container's own folder
    (host,) = judged({"compilation-config": {"cache_dir": "/srv/cache"}}, image=None)
    assert (host.cls, host.option) == ("never", "--compilation-config cache_dir /srv/cache")


def test_a_config_nested_past_the_limit_is_never_and_unparsed():
    # 1,100 brackets inside the string were a RecursionError traceback from validate and refresh --dry-run.
    found = judged({"compilation-config": "[" * 1100 + "]" * 1100})
    assert [(f.cls, f.option, f.why) for f in found] == [
        ("never", "--compilation-config", "its JSON is nested more than 64 deep: refused unparsed")
    ]
