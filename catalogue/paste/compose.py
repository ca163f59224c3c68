"""A docker-compose service -> the same launch a `docker run` paste gives.

Each key a vLLM service uses maps onto the `docker run` option docker compose itself would set: `image`,
`container_name`, `entrypoint`, `command` (a list, or a string split as a shell would), `environment`, `ports`,
`volumes` (short and long syntax), `ipc`, `shm_size`, `ulimits`, `restart`, `network_mode`, GPUs
(`deploy.resources.reservations.devices` with the gpu capability, `gpus`, `runtime`), and the rarer container
options below. Keys that do not change what the container runs (healthcheck, labels, logging, depends_on, ...)
are left out with a note. Compose fills `${NAME}` from the host's environment or `.env`: an environment value that
is exactly one such reference becomes the host variable passed by name (`-e NAME`); `${NAME:-default}` is read
as its default, said in a note; anywhere else a reference is refused, as its value is not in the paste. Any other
key is refused: one line naming the file and the field."""

from __future__ import annotations

import re
from typing import Any

import yaml

from catalogue.models.bounded import check_yaml
from catalogue.models.errors import CatalogueError, yaml_line
from catalogue.models.recipe import ENV_NAME
from catalogue.paste.launch import Launch, docker_launch
from catalogue.paste.shell import split_commands
from catalogue.policy.docker_run import DockerRunOptions

REFERENCE = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$")
"""An environment value that is one host variable: `${NAME}` or `$NAME`."""
DEFAULTED = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(:?-)([^}$]*)\}")
"""`${NAME:-default}` / `${NAME-default}`: what compose uses when NAME is unset (or, with `:-`, empty)."""
LEFT_OUT = ("healthcheck", "labels", "logging", "depends_on", "profiles", "networks", "expose", "stop_grace_period")
"""Keys that do not change what the container runs; the runner starts, checks and names containers itself."""
STRING_OPTIONS = {
    "container_name": "name",
    "ipc": "ipc",
    "pid": "pid",
    "network_mode": "network",
    "shm_size": "shm-size",
    "restart": "restart",
    "runtime": "runtime",
    "user": "user",
    "working_dir": "workdir",
    "hostname": "hostname",
    "platform": "platform",
    "gpus": "gpus",
    "stop_signal": "stop-signal",
}
LIST_OPTIONS = {
    "cap_add": "cap-add",
    "cap_drop": "cap-drop",
    "devices": "device",
    "security_opt": "security-opt",
    "group_add": "group-add",
    "dns": "dns",
    "extra_hosts": "add-host",
    "tmpfs": "tmpfs",
}
SWITCHES = {"privileged": "--privileged", "stdin_open": "--interactive", "tty": "--tty", "init": "--init"}


class _Service:
    """One service's mapping, read key by key into `docker run` words."""

    def __init__(self, text: str, label: str, name: str, body: dict[str, Any]) -> None:
        self.text, self.label, self.name, self.body = text, label, name, body
        self.options: list[str] = []
        self.notes: list[str] = []
        self.from_host: list[str] = []

    def fail(self, key: tuple[Any, ...], message: str) -> CatalogueError:
        where = ".".join(str(k) for k in ("services", self.name, *key))
        return CatalogueError(
            self.label, message, field=where, line=yaml_line(self.text, ("services", self.name, *key))
        )

    def scalar(self, key: tuple[Any, ...], value: Any) -> str:
        """A plain value as compose reads it; `${...}` is refused (its value is not in the paste)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if not isinstance(value, (str, int, float)):
            raise self.fail(key, f"expected a single value, got {type(value).__name__}")
        text = str(value)
        written = DEFAULTED.sub(lambda m: m.group(3), text)
        if written != text:
            self.notes.append(
                f"services.{self.name}.{'.'.join(str(k) for k in key)}: {text!r} read with compose's defaults "
                f"({written!r}); set the variables and compose would use them instead"
            )
        if "$" in written.replace("$$", ""):
            raise self.fail(key, f"{text!r}: compose fills this from the host's environment or .env: write the value")
        return written.replace("$$", "$")

    def words(self, key: str) -> list[str]:
        """`command` / `entrypoint`: a list, or a string split as a shell would."""
        value = self.body[key]
        if isinstance(value, list):
            return [self.scalar((key, i), item) for i, item in enumerate(value)]
        if isinstance(value, str):
            commands = split_commands(self.scalar((key,), value), self.label)
            if len(commands) > 1:
                raise self.fail((key,), "several commands in one string: compose runs it without a shell")
            return commands[0].words if commands else []
        raise self.fail((key,), "expected a list or a string")

    def items(self, key: str) -> list[Any]:
        value = self.body[key]
        if isinstance(value, str) and key in LIST_OPTIONS:
            return [value]
        if not isinstance(value, list):
            raise self.fail((key,), "expected a list")
        return value

    def environment(self) -> None:
        value = self.body["environment"]
        if isinstance(value, list):
            pairs = [
                (str(item).partition("=")[0], str(item).partition("=")[2] if "=" in str(item) else None)
                for item in value
            ]
        elif isinstance(value, dict):
            pairs = [(str(k), v) for k, v in value.items()]
        else:
            raise self.fail(("environment",), "expected a mapping or a list of NAME=VALUE")
        for key, raw in pairs:
            if not ENV_NAME.match(key):
                raise self.fail(("environment",), f"{key!r} is not a variable name")
            ref = REFERENCE.match(raw) if isinstance(raw, str) else None
            if raw is None or ref:
                host = (ref.group(1) or ref.group(2)) if ref else key
                if host not in self.from_host:
                    self.from_host.append(host)
                    self.options += ["-e", host]
                if host != key:
                    self.notes.append(
                        f"environment.{key} copies the host's {host}: the recipe passes {host} by name instead "
                        f"(a recipe cannot rename a host variable); {key} is left out"
                    )
                continue
            self.options += ["-e", f"{key}={self.scalar(('environment', key), raw)}"]

    def volume(self, i: int, item: Any) -> None:
        if isinstance(item, str):
            self.options += ["-v", self.scalar(("volumes", i), item)]
            return
        if not isinstance(item, dict):
            raise self.fail(("volumes", i), "expected SOURCE:TARGET or a mapping")
        kind, target = item.get("type", "volume"), item.get("target")
        if target is None:
            raise self.fail(("volumes", i), "a long-syntax volume needs a target")
        if kind == "tmpfs":
            self.options += ["--tmpfs", self.scalar(("volumes", i, "target"), target)]
            return
        if kind not in ("bind", "volume") or "source" not in item:
            raise self.fail(("volumes", i), f"type {kind!r} without a source is not read: give type bind or volume")
        spec = (
            f"{self.scalar(('volumes', i, 'source'), item['source'])}:{self.scalar(('volumes', i, 'target'), target)}"
        )
        self.options += ["-v", spec + (":ro" if item.get("read_only") else "")]

    def port(self, i: int, item: Any) -> str:
        if not isinstance(item, dict):
            return self.scalar(("ports", i), item)
        target = self.scalar(("ports", i, "target"), item.get("target"))
        published = item.get("published")
        spec = f"{self.scalar(('ports', i, 'published'), published)}:{target}" if published is not None else target
        host_ip = item.get("host_ip")
        spec = f"{host_ip}:{spec}" if host_ip else spec
        return spec + (f"/{item['protocol']}" if item.get("protocol") else "")

    def ulimits(self) -> None:
        value = self.body["ulimits"]
        if not isinstance(value, dict):
            raise self.fail(("ulimits",), "expected a mapping of limit: value")
        for limit, setting in value.items():
            if isinstance(setting, dict):
                if set(setting) != {"soft", "hard"}:
                    raise self.fail(("ulimits", limit), "expected soft and hard")
                soft = self.scalar(("ulimits", limit, "soft"), setting["soft"])
                hard = self.scalar(("ulimits", limit, "hard"), setting["hard"])
                self.options += ["--ulimit", f"{limit}={soft}:{hard}"]
            else:
                self.options += ["--ulimit", f"{limit}={self.scalar(('ulimits', limit), setting)}"]

    def deploy(self) -> None:
        """`deploy.resources.reservations.devices` with the gpu capability -> `--gpus`; nothing else."""
        devices = _dig(self.body["deploy"], ("resources", "reservations", "devices"))
        if devices is None:
            raise self.fail(("deploy",), "only deploy.resources.reservations.devices (GPUs) is read")
        for i, device in enumerate(devices if isinstance(devices, list) else [devices]):
            key = ("deploy", "resources", "reservations", "devices", i)
            if not isinstance(device, dict) or "gpu" not in (device.get("capabilities") or []):
                raise self.fail(key, "only a device with capabilities [gpu] is read")
            if "device_ids" in device:
                ids = ",".join(self.scalar((*key, "device_ids"), d) for d in device["device_ids"])
                self.options += ["--gpus", f"device={ids}"]
            else:
                self.options += ["--gpus", self.scalar((*key, "count"), device.get("count", "all"))]

    def docker_words(self) -> list[str]:
        """`docker run` words after `run`: options, the image, then the container's command."""
        if "image" not in self.body:
            what = "builds its own image (build:)" if "build" in self.body else "names no image"
            raise self.fail(("image",) if "build" not in self.body else ("build",), f"the service {what}")
        entrypoint: list[str] | None = None
        command: list[str] = []
        for key in self.body:
            if key in ("image", "build") or key.startswith("x-"):
                if key == "build":
                    self.notes.append(f"services.{self.name}.build: left out; the recipe runs the image it names")
                continue
            if key in LEFT_OUT:
                self.notes.append(f"services.{self.name}.{key}: left out (it does not change what the container runs)")
            elif key == "env_file":
                raise self.fail((key,), "a file on the author's machine: write its variables under environment")
            elif key == "command":
                command = self.words(key)
            elif key == "entrypoint":
                entrypoint = self.words(key)
            elif key == "environment":
                self.environment()
            elif key == "volumes":
                for i, item in enumerate(self.items(key)):
                    self.volume(i, item)
            elif key == "ports":
                self.options += [w for i, item in enumerate(self.items(key)) for w in ("-p", self.port(i, item))]
            elif key == "ulimits":
                self.ulimits()
            elif key == "deploy":
                self.deploy()
            elif key in STRING_OPTIONS:
                self.options += [f"--{STRING_OPTIONS[key]}", self.scalar((key,), self.body[key])]
            elif key in LIST_OPTIONS:
                self.options += [
                    w
                    for i, item in enumerate(self.items(key))
                    for w in (f"--{LIST_OPTIONS[key]}", self.scalar((key, i), item))
                ]
            elif key in SWITCHES:
                if self.body[key] is True:
                    self.options.append(SWITCHES[key])
            else:
                raise self.fail((key,), "not a compose key `catalogue new` reads (paste the `docker run` instead)")
        image = self.scalar(("image",), self.body["image"])
        if entrypoint is not None:
            # compose replaces the image's entrypoint with the whole list: as `--entrypoint ''` and the words after
            # the image (the form the catalogue renders for an image that runs `vllm serve` itself).
            self.options += ["--entrypoint", ""]
            command = entrypoint + command
        return [*self.options, image, *command]


def _dig(value: Any, keys: tuple[str, ...]) -> Any:
    """value[k1][k2]... when each level is a mapping with exactly that one key, else None."""
    for key in keys:
        if not isinstance(value, dict) or set(value) != {key}:
            return None
        value = value[key]
    return value


def looks_like_compose(text: str, label: str) -> bool:
    """True for YAML whose top level has `services:` (a compose file); YAML past the limits is refused here."""
    check_yaml(text, label, pyyaml_reads=True)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and "services" in data


def read_compose(text: str, label: str, service: str | None, docker_options: DockerRunOptions) -> Launch:
    """The launch of one service of a compose file (the only one, or `service`), or a one-line error."""
    check_yaml(text, label, pyyaml_reads=True)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise CatalogueError(label, "not valid YAML", line=mark.line + 1 if mark else None) from None
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict) or not services:
        raise CatalogueError(label, "a compose file needs a services: mapping", field="services")
    if service is None:
        if len(services) > 1:
            raise CatalogueError(
                label, f"{len(services)} services ({', '.join(services)}): pass --service NAME", field="services"
            )
        service = next(iter(services))
    if service not in services:
        raise CatalogueError(label, f"no service {service!r} (there are: {', '.join(services)})", field="services")
    body = services[service]
    if not isinstance(body, dict):
        raise CatalogueError(
            label, "expected a mapping", field=f"services.{service}", line=yaml_line(text, ("services", service))
        )
    reader = _Service(text, label, service, body)
    words = reader.docker_words()
    line = yaml_line(text, ("services", service, "command")) or yaml_line(text, ("services", service)) or 1
    env: dict[str, str] = {}
    notes = [f"read as the `docker run` that docker compose starts for service {service}", *reader.notes]
    docker, serve = docker_launch(words, docker_options, label, line, env, notes)
    if serve is None:
        raise reader.fail(("command",), "the service runs no `vllm serve`")
    return Launch(serve=serve, line=line, docker=docker, env={**env, **docker.env}, notes=notes)
