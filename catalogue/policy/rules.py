"""The run policy as data: what a recipe may ask of the machine that runs it.

Every `docker run` option, environment variable and vLLM flag of a recipe falls in one class:

- never: an error everywhere, with no override;
- consent: the recipe declares it with a reason (`serving.consent`) and the owner allows it by name
  (`catalogue refresh --allow NAME`);
- allowed: nothing to do; a few carry a note that the recipe page shows.

The basis is the container-runtime section of the CIS Docker Benchmark v1.6.0 (section 5, cited as
"CIS 5.n") and the Kubernetes Pod Security Standards "baseline" profile (cited as "PSS baseline: control"),
adapted to vLLM on a DGX Spark: host IPC and host networking are allowed (vLLM's shared memory and NCCL
need them), where both standards would refuse them. `catalogue.policy.check` applies this table; the
methodology page explains it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Cls = Literal["never", "consent", "allowed"]


@dataclass(frozen=True)
class OptionRule:
    """A class for one `docker run` option whose value matches `value` (a glob; '*' is any value)."""

    option: str
    """Long name without dashes, as in snapshots/docker-run.json."""
    value: str
    cls: Cls
    why: str
    basis: str
    named_by_value: bool = False
    """The finding's name carries the value ('--cap-add IPC_LOCK'), so consent is given per value."""


CONSENT_HOW = "declare it in serving.consent with a reason; the owner runs it with --allow '{name}'"
NEVER_HOW = "never allowed"

OPTION_RULES: tuple[OptionRule, ...] = (
    # Never: the container would own the host.
    OptionRule(
        "volumes-from", "*", "never", "mounts every volume of another container", "CIS 5.5; PSS baseline: HostPath"
    ),
    OptionRule(
        "use-api-socket", "*", "never", "mounts the docker API socket: control of the host's docker", "CIS 5.31"
    ),
    # Consent: legitimate on a Spark (RDMA over ConnectX-7 needs devices, IPC_LOCK, memlock), but the owner decides.
    OptionRule(
        "privileged",
        "*",
        "consent",
        "gives the container every capability and every host device",
        "CIS 5.4; PSS baseline: Privileged Containers",
    ),
    OptionRule(
        "cap-add",
        "*",
        "consent",
        "adds a kernel capability beyond docker's default set",
        "CIS 5.3; PSS baseline: Capabilities",
        named_by_value=True,
    ),
    OptionRule(
        "device",
        "nvidia.com/gpu=*",
        "allowed",
        "the GPU through its runtime (CDI)",
        "CIS 5.17 (GPU runtime)",
        named_by_value=True,
    ),
    OptionRule(
        "device",
        "*",
        "consent",
        "exposes a host device to the container",
        "CIS 5.17; PSS baseline: HostPath",
        named_by_value=True,
    ),
    OptionRule(
        "device-cgroup-rule",
        "*",
        "consent",
        "lets the container use host devices by number",
        "CIS 5.17",
        named_by_value=True,
    ),
    OptionRule(
        "pid",
        "*",
        "consent",
        "shares a process namespace: the container sees and signals those processes",
        "CIS 5.15; PSS baseline: Host Namespaces",
        named_by_value=True,
    ),
    OptionRule(
        "uts",
        "host",
        "consent",
        "shares the host's UTS namespace (its hostname)",
        "CIS 5.20; PSS baseline: Host Namespaces",
        named_by_value=True,
    ),
    OptionRule(
        "userns",
        "host",
        "consent",
        "turns off user-namespace remapping: root in the container is root on the host",
        "CIS 5.30",
        named_by_value=True,
    ),
    OptionRule(
        "cgroupns",
        "host",
        "consent",
        "shares the host's cgroup namespace",
        "CIS 5.24; PSS baseline: Host Namespaces",
        named_by_value=True,
    ),
    OptionRule(
        "ipc",
        "container:*",
        "consent",
        "shares another container's IPC namespace",
        "CIS 5.16",
        named_by_value=True,
    ),
    OptionRule(
        "network",
        "container:*",
        "consent",
        "joins another container's network namespace",
        "CIS 5.9",
        named_by_value=True,
    ),
    OptionRule(
        "security-opt",
        "no-new-privileges",
        "allowed",
        "keeps setuid binaries from gaining privileges",
        "CIS 5.25",
        named_by_value=True,
    ),
    OptionRule(
        "security-opt",
        "no-new-privileges[:=]true",
        "allowed",
        "keeps setuid binaries from gaining privileges",
        "CIS 5.25",
        named_by_value=True,
    ),
    OptionRule(
        "security-opt",
        "*",
        "consent",
        "changes the seccomp, AppArmor or SELinux confinement docker applies by default",
        "CIS 5.1, 5.2, 5.21; PSS baseline: Seccomp, AppArmor, SELinux, /proc Mount Type",
        named_by_value=True,
    ),
    OptionRule(
        "sysctl",
        "kernel.shm_rmid_forced=*",
        "allowed",
        "a namespaced sysctl",
        "PSS baseline: Sysctls (safe set)",
        named_by_value=True,
    ),
    OptionRule(
        "sysctl",
        "net.ipv4.ip_local_port_range=*",
        "allowed",
        "a namespaced sysctl",
        "PSS baseline: Sysctls (safe set)",
        named_by_value=True,
    ),
    OptionRule(
        "sysctl",
        "net.ipv4.tcp_*=*",
        "allowed",
        "a namespaced sysctl",
        "PSS baseline: Sysctls (safe set)",
        named_by_value=True,
    ),
    OptionRule(
        "sysctl",
        "*",
        "consent",
        "sets a kernel parameter outside the baseline's safe set",
        "PSS baseline: Sysctls",
        named_by_value=True,
    ),
    OptionRule("runtime", "nvidia", "allowed", "the GPU runtime", "CIS 5.17 (GPU runtime)"),
    OptionRule("runtime", "runc", "allowed", "docker's default runtime", "CIS 5"),
    OptionRule(
        "runtime", "*", "consent", "another container runtime, with its own isolation", "CIS 5", named_by_value=True
    ),
    OptionRule("entrypoint", "*", "consent", "replaces the image's entrypoint with another program", "CIS 5"),
    OptionRule(
        "env-file",
        "*",
        "never",
        "copies variables from a file on the owner's machine into the container: the runner passes variables itself",
        "CIS 5; catalogue secrets rule",
    ),
    OptionRule(
        "cgroup-parent", "*", "consent", "places the container in a host cgroup of the recipe's choice", "CIS 5.24"
    ),
    OptionRule(
        "oom-kill-disable",
        "*",
        "consent",
        "the kernel may not kill the container when memory runs out (the host may hang instead)",
        "CIS 5.10",
    ),
    OptionRule("cidfile", "*", "consent", "writes a file at a host path", "CIS 5"),
    OptionRule("volume-driver", "*", "consent", "a volume plugin decides what the volumes are", "CIS 5.5"),
    # The runner keeps the container's log and its own labels: a recipe's choice would send the log (and the
    # variables it names) elsewhere, or hide the container from clean-up.
    OptionRule(
        "log-driver", "*", "never", "sends the container's log where the recipe says (the runner keeps it)", "CIS 2.13"
    ),
    OptionRule(
        "log-opt", "*", "never", "log-driver settings can copy variables and labels to another host", "CIS 2.13"
    ),
    OptionRule(
        "label-file", "*", "never", "reads labels from a host file (any file: its lines become labels)", "CIS 5"
    ),
    OptionRule(
        "label",
        "catalogue.*",
        "never",
        "a label of the runner's own: clean-up finds its containers by them",
        "catalogue policy",
        named_by_value=True,
    ),
    OptionRule(
        "oom-score-adj",
        "-*",
        "consent",
        "makes the kernel kill other processes before this container when memory runs out",
        "CIS 5.10",
        named_by_value=True,
    ),
    # Name resolution decides which server receives the Hugging Face token.
    OptionRule(
        "add-host", "*", "consent", "points a host name at an address of the recipe's choice", "catalogue token rule"
    ),
    OptionRule(
        "dns", "*", "consent", "a name server of the recipe's choice answers every lookup", "catalogue token rule"
    ),
    OptionRule(
        "dns-search",
        "*",
        "consent",
        "the recipe's search domains complete every short host name",
        "catalogue token rule",
    ),
    OptionRule(
        "dns-option", "*", "consent", "the recipe's resolver options shape every lookup", "catalogue token rule"
    ),
    # The image: the owner's local/ images are built here and never pulled; a pull or another platform would fetch
    # docker.io/local/... from Docker Hub in its place. Neither shows in `docker inspect`: only this gate sees them.
    OptionRule("pull", "never", "allowed", "the image already here", "catalogue image rule"),
    OptionRule(
        "pull",
        "*",
        "never",
        "docker fetches the image from its registry, replacing the owner's local image (local/ names too)",
        "catalogue image rule",
    ),
    OptionRule(
        "platform",
        "*",
        "never",
        "docker fetches the image for that platform from its registry, replacing the owner's local image",
        "catalogue image rule",
    ),
    # A health check is a command docker runs in the container, with its variables (the token) and its network: the
    # runner checks the server's health itself, from outside.
    OptionRule(
        "health-cmd",
        "*",
        "never",
        "docker runs this command in the container (a shell, with its variables and network): the runner checks "
        "health itself",
        "CIS 5.26 (adapted); catalogue policy",
    ),
    # A legacy link copies the linked container's environment in (ALIAS_ENV_*): another container's secrets.
    OptionRule("link", "*", "consent", "copies another container's variables into this one", "docker legacy links"),
)

ALLOWED_OPTIONS: dict[str, str] = {
    "gpus": "the GPUs, through the NVIDIA runtime",
    "ipc": "host IPC: vLLM's shared memory between processes (CIS 5.16 adapted)",
    "network": "host networking: NCCL and the nodes reach each other by host address (CIS 5.9 adapted)",
    "shm-size": "shared-memory size",
    "ulimit": "resource limits, e.g. memlock=-1 for RDMA (CIS 5.18)",
    "publish": "a published port",
    "publish-all": "published ports",
    "expose": "a port the container declares",
    "env": "a variable (its name and value are checked separately)",
    "detach": "handled by the runner (it drops -d)",
    "rm": "handled by the runner (it removes the container)",
    "restart": "handled by the runner (it drops --restart)",
    "name": "handled by the runner (it names the container)",
    "label": "a label (the runner adds its own)",
    "attach": "terminal handling",
    "interactive": "terminal handling",
    "tty": "terminal handling",
    "sig-proxy": "terminal handling",
    "detach-keys": "terminal handling",
    "quiet": "pull output",
    "help": "prints help",
    "disable-content-trust": "image verification setting",
    "init": "an init process in the container",
    "read-only": "a read-only root filesystem (CIS 5.12)",
    "tmpfs": "a memory-backed folder inside the container",
    "user": "the user inside the container",
    "group-add": "extra groups inside the container",
    "workdir": "the working folder inside the container",
    "hostname": "the container's own hostname",
    "domainname": "the container's own domain name",
    "ip": "a container address",
    "ip6": "a container address",
    "link-local-ip": "a container address",
    "mac-address": "a container address",
    "network-alias": "a container name on its network",
    "isolation": "Windows isolation technology",
    "stop-signal": "how docker stops the container",
    "stop-timeout": "how docker stops the container",
    "health-interval": "a health check in the container (CIS 5.26)",
    "health-retries": "a health check in the container (CIS 5.26)",
    "health-start-period": "a health check in the container (CIS 5.26)",
    "health-timeout": "a health check in the container (CIS 5.26)",
    "no-healthcheck": "no health check",
    "memory": "a resource limit (CIS 5.10)",
    "memory-reservation": "a resource limit (CIS 5.10)",
    "memory-swap": "a resource limit (CIS 5.10)",
    "memory-swappiness": "a resource limit (CIS 5.10)",
    "kernel-memory": "a resource limit (CIS 5.10)",
    "oom-score-adj": "a resource setting",
    "pids-limit": "a resource limit (CIS 5.28)",
    "cpus": "a resource limit (CIS 5.11)",
    "cpu-shares": "a resource limit (CIS 5.11)",
    "cpu-period": "a resource limit (CIS 5.11)",
    "cpu-quota": "a resource limit (CIS 5.11)",
    "cpu-rt-period": "a resource limit (CIS 5.11)",
    "cpu-rt-runtime": "a resource limit (CIS 5.11)",
    "cpuset-cpus": "a resource limit (CIS 5.11)",
    "cpuset-mems": "a resource limit (CIS 5.11)",
    "blkio-weight": "a resource limit",
    "blkio-weight-device": "a resource limit",
    "device-read-bps": "a resource limit",
    "device-read-iops": "a resource limit",
    "device-write-bps": "a resource limit",
    "device-write-iops": "a resource limit",
    "storage-opt": "the container's storage size",
    "cap-drop": "removes a capability (CIS 5.3)",
    "uts": "the container's own UTS namespace",
    "userns": "user-namespace setting other than host",
    "cgroupns": "the container's own cgroup namespace",
}
"""Options allowed whatever their value (after the value rules above): the long name and what it is for."""

MOUNT_OPTIONS = ("volume", "mount")
"""Checked by what they mount (the rules below), not by a row of OPTION_RULES."""


# Mounts: catalogue/policy/paths.py (host paths never mounted, credentials, sockets).

NO_IMAGE_OPTION = "no container"
NO_IMAGE_WHY = "runs vLLM on your machine outside a container, with your user's rights and files"

FLAGS_BASIS = "catalogue code and file rule"

SECRET_WHY = "a secret written in the recipe ({masked})"
SECRET_HOW = "never written down: name it in serving.env_from_host ({name}); the runner passes it by name"
SECRET_BASIS = "catalogue secrets rule (detect-secrets plugins and *_TOKEN, *_KEY, *_SECRET, --api-key)"
