"""Twenty fake credentials in the test's own environment, and what each process and container of a run got.

Used by tests/test_child_env.py (a run in docker) and tests/test_runner.py (a local `vllm serve`): a probe step
runs once the servers answer and reads /proc/<pid>/environ of every process the runner started (and their
children), and /proc/1/environ inside every running container of the run (`docker exec`)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import psutil

import runner.refresh as refresh_module
from runner.hosts import server as srv

NAMES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITLAB_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET",
    "DOCKER_AUTH_CONFIG",
    "NPM_TOKEN",
    "SLACK_BOT_TOKEN",
    "STRIPE_SECRET_KEY",
    "DATABASE_URL",
    "VAULT_TOKEN",
    "KUBECONFIG",
    "SSH_AUTH_SOCK",
)
FAKE = {name: f"fake-{name.lower().replace('_', '-')}-5ec7e7" for name in NAMES}


def set_fake_credentials(monkeypatch) -> dict[str, str]:
    """Put the twenty fake credentials into this process's environment (undone after the test)."""
    for name, value in FAKE.items():
        monkeypatch.setenv(name, value)
    return FAKE


def environ_of(pid: int) -> dict[str, str]:
    """A live process's environment as the kernel keeps it."""
    with open(f"/proc/{pid}/environ", "rb") as f:
        items = f.read().split(b"\0")
    return dict(item.decode(errors="replace").partition("=")[::2] for item in items if item)


def process_environs(process: subprocess.Popen) -> dict[str, dict[str, str]]:
    """The environment of a process the runner started and of each of its children, by `pid command`."""
    out = {}
    try:
        family = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return out
    for proc in family:
        try:
            out[f"pid {proc.pid} {' '.join(proc.cmdline()[:3])}"] = environ_of(proc.pid)
        except (OSError, psutil.Error):
            continue
    return out


def container_environs(label: str) -> dict[str, dict[str, str]]:
    """/proc/1/environ inside every running container with `label`, by `container <name>`."""
    ids = subprocess.run(["docker", "ps", "-q", "--filter", f"label={label}"], capture_output=True, text=True)
    out = {}
    for cid in ids.stdout.split():
        name = subprocess.run(["docker", "inspect", "--format", "{{.Name}}", cid], capture_output=True, text=True)
        read = subprocess.run(["docker", "exec", cid, "cat", "/proc/1/environ"], capture_output=True)
        if read.returncode == 0:
            items = read.stdout.split(b"\0")
            out[f"container {name.stdout.strip()}"] = dict(
                item.decode(errors="replace").partition("=")[::2] for item in items if item
            )
    return out


def inside(name: str) -> tuple[int, set[str], set[str], str]:
    """(CapEff, mount points, variable names, NoNewPrivs) of PID 1 in a running container."""
    status = subprocess.run(["docker", "exec", name, "cat", "/proc/1/status"], capture_output=True, text=True).stdout
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    mountinfo = subprocess.run(["docker", "exec", name, "cat", "/proc/1/mountinfo"], capture_output=True, text=True)
    points = {line.split()[4] for line in mountinfo.stdout.splitlines()}
    environ = subprocess.run(["docker", "exec", name, "cat", "/proc/1/environ"], capture_output=True, text=True)
    names = {item.split("=", 1)[0] for item in environ.stdout.split("\0") if item}
    return int(fields["CapEff"].strip(), 16), points, names, fields["NoNewPrivs"].strip()


def plain(image: str, label: str) -> tuple[int, set[str], set[str]]:
    """(CapEff, mount points, variable names) of a container of `image` started with no options: docker's defaults."""
    script = "cat /proc/1/status; echo @@; cat /proc/1/mountinfo; echo @@; tr '\\0' '\\n' < /proc/1/environ"
    out = subprocess.run(
        ["docker", "run", "--rm", "--label", label, "--entrypoint", "sh", image, "-c", script],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    status, mountinfo, environ = out.split("@@\n")
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    points = {line.split()[4] for line in mountinfo.splitlines() if line.strip()}
    names = {line.split("=", 1)[0] for line in environ.splitlines() if "=" in line}
    return int(fields["CapEff"].strip(), 16), points, names - {"HOSTNAME"}


def probing(
    monkeypatch,
    seen: dict[str, dict[str, str]],
    *,
    stop: bool,
    also: Callable[[refresh_module.Refresh], None] | None = None,
) -> None:
    """Run a probe step right after the servers answer: it fills `seen` with every environment of the run, then
    calls `also` (more reads while everything runs); with `stop`, the refresh then ends there (a ServerFailed:
    everything is stopped, nothing recorded)."""

    def probe(r: refresh_module.Refresh) -> None:
        started = [*r.running.nodes.values(), r.running.client, r.running.snapshot, r.running.router]
        for process in started:
            if process is not None:
                seen.update(process_environs(process))
        seen.update(container_environs(r.plan.label))
        if also is not None:
            also(r)
        if stop:
            raise srv.ServerFailed("environment probe done")

    steps = list(refresh_module.STEPS)
    monkeypatch.setattr(refresh_module, "STEPS", (*steps[:4], probe, *steps[4:]))
    assert steps[3] is refresh_module.step_ready


def leaks(seen: dict[str, dict[str, str]], allowed: set[str]) -> list[str]:
    """`<where>: <variable>` for each fake credential's value found in an environment, but for `allowed` names."""
    return [
        f"{where}: {name} (as {variable})"
        for where, environ in seen.items()
        for variable, value in environ.items()
        for name, fake in FAKE.items()
        if fake in value and name not in allowed
    ]
