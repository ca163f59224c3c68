"""The runner owns its containers: no -d, no --restart, its own name and labels."""

from __future__ import annotations

from runner.hosts.containers import own_options


def test_detach_restart_rm_and_name_are_dropped_and_said():
    owned = own_options(
        ["-d", "--restart", "unless-stopped", "--rm", "--name", "x", "--gpus", "all", "--restart=always"],
        name="catalogue-r",
        labels={"catalogue.recipe": "r", "catalogue.run": "s"},
        cache_dir=None,
    )
    assert owned.options == [
        "--gpus",
        "all",
        "--name",
        "catalogue-r",
        "--security-opt",
        "no-new-privileges",
        "--log-driver",
        "json-file",
        "--label",
        "catalogue.recipe=r",
        "--label",
        "catalogue.run=s",
        "--network",
        "host",
    ]
    assert any("dropped -d" in c for c in owned.changes)
    assert any("dropped --restart unless-stopped" in c for c in owned.changes)
    assert any("dropped --restart always" in c for c in owned.changes)


def test_the_runner_s_name_and_labels_come_after_the_recipe_s_so_docker_keeps_them():
    owned = own_options(
        ["--label", "catalogue.run=keep", "-l", "x=1"], name="n", labels={"catalogue.run": "s"}, cache_dir=None
    )
    words = owned.options
    assert words.index("catalogue.run=s") > words.index("catalogue.run=keep")


def test_host_network_always_so_that_the_served_port_is_the_reachable_port():
    added = own_options([], name="n", labels={}, cache_dir=None)
    assert added.options[-2:] == ["--network", "host"] and added.changes
    kept = own_options(["--net=host"], name="n", labels={}, cache_dir=None)
    assert "--network" not in kept.options and kept.options[0] == "--net=host" and not kept.changes
    bridged = own_options(
        ["--network", "bridge", "-p", "8000:8000", "-p8001:8001"], name="n", labels={}, cache_dir=None
    )
    assert bridged.options[-2:] == ["--network", "host"] and "8000:8000" not in bridged.options
    assert "-p8001:8001" not in bridged.options
    assert any("replaced --network bridge with --network host" in c for c in bridged.changes)
    assert any("dropped -p 8000:8000" in c for c in bridged.changes)


def test_compile_cache_is_mounted_and_named_for_vllm_and_torch():
    owned = own_options([], name="n", labels={}, cache_dir="/var/tmp/c/img/r")
    words = " ".join(owned.options)
    assert "-v /var/tmp/c/img/r:/catalogue-cache" in words
    assert (
        "VLLM_CACHE_ROOT=/catalogue-cache/vllm" in words
        and "TORCHINDUCTOR_CACHE_DIR=/catalogue-cache/inductor" in words
    )
