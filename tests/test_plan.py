"""The plan on real hosts: reachable addresses, one GPU host per server, the link's interface, what the client
gets, and a resume that measures the same thing. No engine needed: nothing here starts."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from catalogue.commands.cli import main
from catalogue.models.errors import CatalogueError
from catalogue.models.launch import sweep_workload
from catalogue.models.loading import load_entry
from runner.hosts.hosts import parse_hosts
from runner.planning.plan import make_plan
from runner.recording.record import build_run, provenance
from runner.recording.rerun import refuse_different

REPO = Path(__file__).resolve().parents[1]
DOCKER_IMAGE = "local/debian-py:bookworm"
SPARKS = """hosts:
  spark1: {docker: local, address: 192.168.100.10, interface: enp1s0f1np1, trusted_images: [vllm-node-mxfp4]}
  spark2: {docker: "ssh://me@192.168.100.11", address: 192.168.100.11, interface: enp1s0f1np1}
  bare: {docker: "ssh://me@192.168.100.12"}
  nolink: {docker: "ssh://me@192.168.100.13", address: 192.168.100.13, trusted_images: [vllm-node-mxfp4]}
"""


@pytest.fixture
def hosts_file(tmp_path: Path) -> Path:
    path = tmp_path / "hosts.yaml"
    path.write_text(SPARKS)
    return path


def entry(recipe_id: str):
    root = "examples" if recipe_id.startswith("tiny") else "recipes"
    return load_entry(REPO / root / recipe_id)


def test_a_remote_head_is_reached_at_its_link_address(hosts_file):
    plan = make_plan(entry("gptoss-120b-topology-cluster-tp2"), hosts=parse_hosts("spark2,spark1", hosts_file))
    head, worker = (n.argv for n in plan.nodes)
    assert head[:3] == ["docker", "-H", "ssh://me@192.168.100.11"] and worker[:2] == ["docker", "run"]
    for argv in (head, worker):
        assert argv[argv.index("--master-addr") + 1] == "192.168.100.11"
    assert "VLLM_HOST_IP=192.168.100.11" in head and "VLLM_HOST_IP=192.168.100.10" in worker
    assert plan.endpoint == "http://192.168.100.11:8000" and not plan.missing


def test_a_local_head_with_a_loopback_address_and_a_remote_worker_is_refused(hosts_file):
    with pytest.raises(CatalogueError) as err:
        make_plan(entry("gptoss-120b-topology-cluster-tp2"), hosts=parse_hosts("local,spark2", hosts_file))
    assert str(err.value) == (
        "--hosts: host local has the loopback address 127.0.0.1, which host spark2 cannot reach: give local its "
        "address on the link between the machines (hosts.yaml: hosts.local.address)"
    )
    with pytest.raises(CatalogueError, match="host local has the loopback address"):  # a replica too
        make_plan(entry("gptoss-120b-topology-2x-shuffle"), hosts=parse_hosts("spark2,local", hosts_file))


@pytest.mark.parametrize("recipe_id", ["gptoss-120b-topology-cluster-tp2", "gptoss-120b-topology-2x-least-busy"])
def test_two_servers_never_share_a_gpu_host_unasked(recipe_id, hosts_file):
    with pytest.raises(CatalogueError) as err:
        make_plan(entry(recipe_id))
    assert "host local would take 2 of them on one GPU" in str(err.value) and "--allow-shared-host" in str(err.value)
    with pytest.raises(CatalogueError, match="host spark1 would take 2 of them"):
        make_plan(entry(recipe_id), hosts=parse_hosts("spark1", hosts_file))
    shared = make_plan(entry(recipe_id), allow_shared_host=True)
    assert len(shared.nodes) == 2 and {n.host.name for n in shared.nodes} == {"local"}


def test_cpu_examples_share_this_machine_and_talk_over_loopback():
    plan = make_plan(entry("tiny-cpu-cluster"))
    assert [n.host.name for n in plan.nodes] == ["local", "local"] and not plan.missing
    for node in plan.nodes:
        assert "GLOO_SOCKET_IFNAME=lo" in node.argv and "VLLM_HOST_IP=127.0.0.1" in node.argv
        assert node.argv[node.argv.index("--shm-size") + 1] == "1g"  # from the cpu profile


def test_a_cluster_host_without_its_interface_is_named_before_anything_starts(hosts_file, capsys):
    plan = make_plan(entry("gptoss-120b-topology-cluster-tp2"), hosts=parse_hosts("spark1,nolink", hosts_file))
    assert plan.missing == ["hosts.nolink.interface"]
    assert "NCCL_SOCKET_IFNAME=<nolink.interface>" in plan.nodes[1].argv
    args = ["--root", str(REPO / "recipes"), "refresh", "gptoss-120b-topology-cluster-tp2"]
    assert main([*args, "--hosts", "spark1,nolink", "--hosts-file", str(hosts_file)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"error: {hosts_file}: hosts.nolink.interface: not given: gptoss-120b-topology-cluster-tp2 runs across "
        "machines, so each host needs the interface of the link between them (e.g. enp1s0f1np1; `ip -br addr` on "
        "the host lists them)"
    )


def test_the_client_gets_the_cache_and_the_model_mount_not_the_recipes_other_mounts(tmp_path):
    folder = tmp_path / "r"
    shutil.copytree(REPO / "examples" / "tiny-cpu-docker", folder, ignore=shutil.ignore_patterns("runs"))
    data = yaml.safe_load((folder / "recipe.yaml").read_text())
    data["serving"]["container"]["options"] += ["-v", "/srv/data:/data", "-v", "/opt/models:/models"]
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    plan = make_plan(load_entry(folder))
    client = " ".join(plan.client_argv)
    assert "-v /opt/models:/models" in client and "/srv/data" not in client and "/data" not in client.split()
    assert ":/root/.cache/huggingface" in client or ":/tmp/hf-cache" in client
    assert "-e HF_HUB_OFFLINE=1" in client and "--ipc" not in client


def test_resume_refuses_a_different_serve_command_or_workload():
    tiny = entry("tiny-cpu-cluster")
    same = make_plan(tiny, port=8300, stamp="20261123T100000Z")
    prov = provenance(same, vllm_version="0.32.0", client_vllm_version=None, flag_snapshot=None, image_id=None, done=[])
    previous = build_run(
        stamp=same.stamp,
        provenance=prov,
        levels=[],
        long_context=[],
        workload=sweep_workload(tiny.recipe),
        complete=False,
        reason="interrupted (Ctrl-C)",
        notes=[],
    )
    refuse_different(previous, same, tiny)  # the same plan resumes
    other_port = make_plan(tiny, port=8301, stamp=same.stamp)
    with pytest.raises(CatalogueError, match=r"cannot resume: the serve command differs from the run's \('"):
        refuse_different(previous, other_port, tiny)
    longer = tiny.recipe.model_copy(update={"sweep": tiny.recipe.sweep.model_copy(update={"output_len": 99})})
    changed = type(tiny)(tiny.id, tiny.folder, longer, tiny.runs, tiny.platform)
    with pytest.raises(CatalogueError, match="cannot resume: the workload differs"):
        refuse_different(previous, same, changed)


def test_an_unknown_platform_is_one_line_naming_the_field(tmp_path):
    folder = tmp_path / "r"
    shutil.copytree(REPO / "examples" / "tiny-cpu", folder, ignore=shutil.ignore_patterns("runs"))
    text = (folder / "recipe.yaml").read_text().replace("platform: cpu", "platform: tpu-v9")
    (folder / "recipe.yaml").write_text(text)
    with pytest.raises(CatalogueError) as err:
        load_entry(folder)
    line = text.splitlines().index("  platform: tpu-v9") + 1
    assert str(err.value) == (
        f"{folder / 'recipe.yaml'}:{line}: hardware.platform: unknown platform 'tpu-v9': no platforms/tpu-v9.yaml "
        "(known: cpu, dgx-spark)"
    )


def test_every_level_sends_its_own_prompts_and_a_resume_sends_the_same():
    """A distinct --seed per level (the prefix cache would otherwise serve each later level the prompts of the
    first), the same seeds when the plan is made again (a resume), and recorded in the workload."""
    tiny = entry("tiny-cpu-capacity")
    plan = make_plan(tiny, capacity=True, stamp="20261123T100000Z")
    seeds = [job.argv[job.argv.index("--seed") + 1] for job in plan.jobs]
    assert len(plan.jobs) >= 3 and len(set(seeds)) == len(seeds)
    again = make_plan(tiny, capacity=True, stamp="20261123T100000Z")
    assert [job.argv for job in again.jobs] == [job.argv for job in plan.jobs]
    assert all(job.argv.count("--seed") == 1 for job in plan.jobs)
    assert sweep_workload(tiny.recipe).seeds == "per level"


def test_a_simulated_recipe_runs_the_simulator_with_the_serve_flags_in_this_python():
    import sys

    entry = load_entry(REPO / "examples" / "sim-tiny")
    plan = make_plan(entry, local=True, port=9123)
    argv = plan.nodes[0].argv
    assert argv[:3] == [sys.executable, "-m", "simulator"]
    assert argv[3] == str((REPO / "examples" / "tiny-cpu" / "model").resolve())
    assert argv[argv.index("--port") + 1] == "9123" and argv[argv.index("--max-num-seqs") + 1] == "8"
    assert argv[-2:] == ["--profile", "ci"]
    assert sweep_workload(entry.recipe).simulator == "ci"


def _cache_of(folder: Path, image: str | None = None) -> str:
    if image is not None:
        path = folder / "recipe.yaml"
        path.write_text(path.read_text().replace("image: local/vllm-cpu:0.32.0", f"image: {image}"))
    (node,) = make_plan(load_entry(folder)).nodes
    (cache,) = (m.source for m in node.own_mounts if m.target == "/catalogue-cache")
    return cache


def test_the_compile_cache_is_keyed_by_the_exact_image_and_the_recipe_folder(tmp_path):
    """attack44b F8: slug('local/vllm-cpu:0.32.0') == slug('local/vllm-cpu-0.32.0'), and the key had no root."""
    copies = {}
    for name, image in (("a", None), ("b", None), ("c", "local/vllm-cpu-0.32.0"), ("d", "local/vllm/cpu:0.32.0")):
        copies[name] = tmp_path / name / "tiny-cpu-docker"
        shutil.copytree(REPO / "examples" / "tiny-cpu-docker", copies[name], ignore=shutil.ignore_patterns("runs"))
        copies[name] = _cache_of(copies[name], image)
    assert len(set(copies.values())) == 4, copies  # two checkouts, three images whose slugs are one
    assert copies["a"].split("/")[-2].startswith("local-vllm-cpu-0-32-0-")  # still readable
    assert copies["a"].split("/")[-1].startswith("tiny-cpu-docker-")
    assert _cache_of(REPO / "examples" / "tiny-cpu-docker") == _cache_of(REPO / "examples" / "tiny-cpu-docker")


@pytest.mark.parametrize(
    ("recipe_id", "mode"),
    [("tiny-cpu-docker", "ro"), ("glm4-9b-chat-ngc-2510", "ro"), ("gemma4-26b-a4b-bf16-djangs", "")],
)
def test_the_hf_cache_is_read_only_where_repo_code_may_run_or_the_recipe_is_offline(recipe_id, mode, hosts_file):
    """tiny-cpu-docker runs offline, glm4 trusts the repository's code: the hub is read-only for the server (its
    own mount as the inspect gate matches it) and the client, and the dry run says why; gemma4 downloads into it."""
    hosts = parse_hosts("spark1", hosts_file) if recipe_id.startswith(("glm", "gemma")) else None
    plan = make_plan(entry(recipe_id), hosts=hosts)
    server = plan.nodes[0]
    hub = [m for m in server.own_mounts if m.target.endswith("/hub")]
    assert [m.mode for m in hub] == [mode]
    suffix = ":ro" if mode else ""
    assert f"{hub[0].source}:{hub[0].target}{suffix}" in server.argv
    client_hub = [w for w in plan.client_argv if w.startswith(hub[0].source + ":")]
    assert len(client_hub) == 1 and client_hub[0].endswith(":ro") == bool(mode), client_hub
    assert any("hub read-only" in change for change in plan.changes) == bool(mode)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"flags": {"tool-parser-plugin": "/r/p.py"}}, "--tool-parser-plugin"),
        ({"flags": {"compilation-config": {"backend": "evil.mod"}}}, "--compilation-config backend"),
        ({"flags": {"middleware": "evil.Middleware"}}, "--middleware"),
        ({"env": {"VLLM_PLUGINS": "evil"}}, "VLLM_PLUGINS"),
        ({"image": "ghcr.io/someone/vllm:1"}, "image ghcr.io/someone/vllm"),
    ],
)
def test_the_hf_cache_is_read_only_where_the_recipe_loads_code_of_its_choice(change, named, hosts_file):
    """attack44c B4: only --trust-remote-code and HF_HUB_OFFLINE made the hub read-only; a plugin, a module path, a
    loads-code variable or an image off the trust list runs code that could rewrite other models' files too."""
    base = entry("gemma4-26b-a4b-bf16-djangs")  # downloads into the hub: read-write as it is
    serving = base.recipe.serving
    update = {k: {**getattr(serving, k), **v} if isinstance(v, dict) else v for k, v in change.items()}
    recipe = base.recipe.model_copy(update={"serving": serving.model_copy(update=update)})
    plan = make_plan(replace(base, recipe=recipe), hosts=parse_hosts("spark1", hosts_file))
    assert [m.mode for m in plan.nodes[0].own_mounts if m.target.endswith("/hub")] == ["ro"]
    (why,) = [c for c in plan.changes if "hub read-only" in c]
    assert f"{named} runs code the recipe chooses" in why, why


def test_an_image_the_owner_trusts_on_every_host_keeps_the_hub_writable(hosts_file):
    """gptoss-120b's image is off the profile's trust list; the hosts file's spark1 trusts it, spark2 does not."""
    modes = {}
    for hosts in ("spark1", "spark2"):
        plan = make_plan(entry("gptoss-120b"), hosts=parse_hosts(hosts, hosts_file))
        modes[hosts] = [m.mode for m in plan.nodes[0].own_mounts if m.target.endswith("/hub")]
    assert modes == {"spark1": [""], "spark2": ["ro"]}


@pytest.mark.docker
def test_a_container_the_plan_mounts_read_only_cannot_write_into_the_owners_cache(engine, tmp_path, monkeypatch):
    """On the real engine, with the plan's own `-v` words for the hub: the container reads a model's file and its
    write there fails with EROFS; nothing lands in the owner's folder."""
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    (tmp_path / "hub" / "models--org--m").mkdir(parents=True)
    (tmp_path / "hub" / "models--org--m" / "config.json").write_text("{}")
    argv = make_plan(entry("tiny-cpu-docker")).nodes[0].argv
    i = next(i for i, w in enumerate(argv) if w.startswith(f"{tmp_path}/hub:"))
    assert argv[i].endswith(":ro") and argv[i - 1] == "-v"
    hub = argv[i].split(":")[1]
    script = f"cat {hub}/models--org--m/config.json && echo x > {hub}/models--org--other"
    out = subprocess.run(
        ["docker", "run", "--rm", "--label", "catalogue-test.plan=ro", "-v", argv[i], DOCKER_IMAGE, "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode != 0 and out.stdout == "{}", out
    assert "Read-only file system" in out.stderr, out.stderr
    assert sorted(p.name for p in (tmp_path / "hub").iterdir()) == ["models--org--m"]


def test_a_launch_that_runs_code_of_its_choice_gets_a_compile_cache_of_its_own(hosts_file):
    """attack44d finding 1: the cache was keyed by image and folder only, so a pull request that edited a recipe to
    run its code (--trust-remote-code of another repository) wrote torch.compile files the committed recipe's later
    runs in the same checkout load. A launch that runs code of its choice gets a folder keyed by the launch too."""
    base = entry("gemma4-26b-a4b-bf16-djangs")  # runs no code of its choice: the plain folder
    hosts = parse_hosts("spark1", hosts_file)

    def cache(model: str | None = None, **flags) -> tuple[str, list[str]]:
        serving = base.recipe.serving.model_copy(update={"flags": {**base.recipe.serving.flags, **flags}})
        recipe = base.recipe.model_copy(update={"serving": serving, "model": model or base.recipe.model})
        plan = make_plan(replace(base, recipe=recipe), hosts=hosts)
        (own,) = [m.source for m in plan.nodes[0].own_mounts if m.target == "/catalogue-cache"]
        return own, plan.changes

    plain, changes = cache()
    assert "-code-" not in plain and not any("compile cache" in c for c in changes)
    code, changes = cache(**{"trust-remote-code": True})
    assert code.startswith(plain + "-code-") and any("compile cache is a folder of this launch" in c for c in changes)
    other, _ = cache("attacker/other-model", **{"trust-remote-code": True})
    plugin, _ = cache(**{"tool-parser-plugin": "/r/p.py"})
    assert len({plain, code, other, plugin}) == 4
    assert cache(**{"trust-remote-code": True})[0] == code  # the same launch keeps its warm cache
