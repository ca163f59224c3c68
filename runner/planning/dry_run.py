"""The dry run: every command a refresh would run, grouped by the host it runs on."""

from __future__ import annotations

import os
import shlex

from catalogue.models.launch import quote, shell_command
from catalogue.models.topology import LITELLM_VERSION
from runner.planning.jobs import Job
from runner.planning.plan import Plan, router_yaml

KIND_LINES = {
    "solo": "one server",
    "cluster": "one server across nodes (vLLM's multi-node launcher: --nnodes, --node-rank, --master-addr; "
    "--headless on workers)",
    "replicas": "independent servers behind a LiteLLM router",
}


def _where(plan: Plan, host_name: str, docker: str | None, address: str) -> str:
    engine = "local docker engine" if docker is None else f"docker {docker}"
    if not plan.image:
        engine = "local processes"
    return f"host {host_name} ({engine}, address {address}):"


def describe(plan: Plan, policy: list[str] | None = None, refused: list[str] | None = None) -> str:
    """The dry-run text; `policy` lists the run policy's findings, `refused` what would stop a real run."""
    kind = KIND_LINES[plan.kind] + (
        " with Ray (ray start on every node, then vllm serve on the head)" if plan.ray else ""
    )
    lines = [
        f"recipe {plan.recipe_id}: run {plan.stamp} -> {os.path.relpath(plan.run_file)}",
        f"topology {plan.kind}: {kind}",
        f"ready when {plan.api_node.base_url}/health answers (within {plan.health_timeout_s} s) and every node runs",
    ]
    lines += [f"  note: {change}" for change in plan.changes]
    lines += [f"  run policy: {line}" for line in policy or []]
    lines += [f"  a real run would refuse: {line}" for line in refused or []]
    if plan.missing:
        lines.append(
            "  needs before a real run (hosts.yaml): "
            + ", ".join(plan.missing)
            + " — the interface of the link between the machines; shown below as <host.interface>"
        )
    for host in plan.hosts:
        lines += ["", _where(plan, host.name, host.docker, host.address)]
        for node in (n for n in plan.nodes if n.host == host):
            title = f"  {node.role}" + (f", container {node.container}" if node.container else "")
            lines.append(title + ":")
            if node.env and not node.container:
                lines.append("    environment: " + " ".join(f"{k}={shlex.quote(v)}" for k, v in node.env.items()))
            lines.append(_indent(docker_command(node.argv)))
            if node.profile and (node.profile.options or node.profile.env):
                lines.append(
                    f"    from the {node.profile.platform} platform profile: " + ", ".join(node.profile.summary())
                )
            if node.exec_argv:
                lines += ["    then, once every node has joined:", _indent(docker_command(node.exec_argv))]
    if plan.router is not None and plan.router_argv is not None:
        lines += [
            "",
            f"router on this machine (LiteLLM proxy {LITELLM_VERSION}, routing_strategy "
            f"{plan.router.strategy}; master key made per run, passed as LITELLM_MASTER_KEY):",
            f"  config {os.path.relpath(plan.router_argv[2])}:",
            _indent(router_yaml(plan).rstrip()),
            _indent(shell_command(plan.router_argv)),
        ]
    where = f"inside {plan.image} on this machine" if plan.client == "image" else "in this Python environment"
    lines += [
        "",
        f"benchmark client (vLLM's `vllm bench serve`, {where}; one process for every level):",
        _indent(shell_command(plan.client_argv)),
        "",
        f"levels, measured at {plan.endpoint}:",
    ]
    for job in plan.levels:
        lines += [f"  {job.name} ({_what(job)}):", _indent(shell_command(job.argv))]
    template = plan.probe_template
    if template is not None:
        lines += [
            "",
            "capacity search (--capacity): after the levels, probes at request rates chosen one by one from the "
            "last result, each this command with its own --request-rate, --num-prompts and result file:",
            _indent(shell_command(template.argv)),
        ]
    lines += ["", "flag snapshot of the server's vLLM (while it boots):", _indent(shell_command(plan.snapshot_argv))]
    return "\n".join(lines)


def _what(job: Job) -> str:
    if job.rate is not None:
        return f"open loop, {job.rate:g} req/s"
    if job.prompt_tokens is not None:
        return f"long context {job.prompt_tokens} tokens, c=1"
    return f"c={job.concurrency}"


def docker_command(argv: list[str]) -> str:
    """A node's command with the docker CLI and its engine on the first line: `docker -H ssh://spark2 run \\`."""
    verbs = [i for i, word in enumerate(argv) if word in ("run", "exec")]
    if argv[:1] != ["docker"] or not verbs:
        return shell_command(argv)
    head, rest = argv[: verbs[0] + 1], argv[verbs[0] + 1 :]
    return " ".join(quote(word) for word in head) + (" \\\n  " + shell_command(rest) if rest else "")


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
