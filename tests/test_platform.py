"""Platform profiles: what a profile adds where the recipe is silent, per-node network settings, and profiles held
to the run policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalogue.models.errors import CatalogueError
from catalogue.models.platform import PLATFORMS_DIR, NodeNet, UnknownPlatform, load_platform, profile_part

SPARK = load_platform("dgx-spark")


def test_the_recipes_own_option_replaces_the_profiles_of_the_same_kind():
    part = profile_part(
        SPARK, ["--ulimit", "memlock=8192", "--gpus=device=0", "-v", "/data/hf:/root/.cache/huggingface"], {}
    )
    assert part.options == [
        "--ipc",
        "host",
        "--ulimit",
        "stack=67108864",
        "--network",
        "host",
        "-v",
        "~/.cache/huggingface/hub:/root/.cache/huggingface/hub",
    ]
    assert part.env == {"HF_HOME": "/root/.cache/huggingface"} and part.dropped == []
    # The recipe's own HF cache mount folds into the profile's: the owner's folder, the hub only (no token file).
    assert part.folded == ["-v /data/hf:/root/.cache/huggingface"]


def test_host_networking_makes_a_port_mapping_moot_and_says_so():
    part = profile_part(SPARK, ["-p", "8000:8000", "--publish=9000:9000"], {"HF_HOME": "/hf"})
    assert part.dropped == ["-p 8000:8000", "--publish=9000:9000"] and "HF_HOME" not in part.env
    bridged = profile_part(SPARK, ["--network", "bridge", "-p", "8000:8000"], {})
    assert bridged.dropped == [] and "--network" not in bridged.options


def test_a_cluster_node_gets_its_interface_and_address_and_rdma_only_when_asked():
    node = NodeNet("192.168.100.11", "enp1s0f1np1", "rocep1s0f1")
    plain = profile_part(SPARK, [], {}, node=node, role="worker-1")
    assert plain.env["NCCL_SOCKET_IFNAME"] == "enp1s0f1np1" and plain.env["VLLM_HOST_IP"] == "192.168.100.11"
    assert "NCCL_IB_HCA" not in plain.env and "--device" not in plain.options
    assert plain.per_node >= {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "VLLM_HOST_IP"}
    rdma = profile_part(SPARK, [], {}, node=node, role="worker-1", rdma=True)
    assert rdma.env["NCCL_IB_HCA"] == "rocep1s0f1" and rdma.options[-4:] == [
        "--device",
        "/dev/infiniband",
        "--cap-add",
        "IPC_LOCK",
    ]
    unknown = profile_part(SPARK, [], {}, node=NodeNet("<worker-1-ip>"), role="worker-1")
    assert unknown.env["GLOO_SOCKET_IFNAME"] == "<worker-1.interface>"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "name: bad\ntitle: t\ngpu: false\noptions: [-v, '/:/host']\n",
            "options: never: --volume /: ",
        ),
        (
            "name: bad\ntitle: t\ngpu: false\nenv: {LD_PRELOAD: /x.so}\n",
            "env: never: LD_PRELOAD: ",
        ),
        (
            "name: bad\ntitle: t\ngpu: false\nmulti_node:\n  env: {}\n  rdma: {options: [--privileged], env: {}}\n"
            "options: [--volumes-from, other]\n",
            "options: never: --volumes-from",
        ),
        ("name: other\ntitle: t\ngpu: false\n", "name: name is 'other' but the file is bad.yaml"),
        ("name: bad\ntitle: t\ngpu: false\nshm: 1g\n", "bad.yaml:4: shm: unknown field"),
    ],
)
def test_a_bad_profile_is_one_line_naming_the_file_and_field(tmp_path, text, message):
    path = write(tmp_path, "bad", text)
    with pytest.raises(CatalogueError) as err:
        load_platform("bad", tmp_path)
    assert str(err.value).startswith(str(path)) and message in str(err.value) and "\n" not in str(err.value)


def test_an_unknown_platform_lists_the_known_ones(tmp_path):
    write(tmp_path, "cpu", "name: cpu\ntitle: t\ngpu: false\n")
    with pytest.raises(UnknownPlatform, match=r"unknown platform 'tpu': no .*/tpu.yaml \(known: cpu\)"):
        load_platform("tpu", tmp_path)


def test_every_profile_cites_its_sources():
    paths = sorted(PLATFORMS_DIR.glob("*.yaml"))
    assert [p.stem for p in paths] == ["cpu", "dgx-spark"]
    for path in paths:
        assert all(s.what and s.where for s in load_platform(path.stem).sources) and load_platform(path.stem).sources
