"""`catalogue reproduce`: every command of a measured run rebuilt by the runner's own plan from the recipe, pinned to
what the run recorded of its image and model (catalogue.models.reproduce.pin), and from the run's typed figures: the
concurrencies, prompt lengths, offered rates, probe numbers and request counts of its levels, its ports.

A run file is untrusted, and its command text (`provenance.serve_command`, `nodes[].command`, `serve_env`,
`bench_commands`, `router`) is free text: it is never printed as a command. It is compared with what the recipe
makes, and where it differs one line says so, the differing words escaped (ascii(), shortened), never echoed."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from catalogue.models.benchmark import BenchmarkRun, Figures, MeasuredProvenance
from catalogue.models.loading import RUNS_DIR, Entry
from catalogue.models.reproduce import Pin, Step, pin
from catalogue.models.topology import LITELLM_VERSION
from runner.hosts.containers import CACHE_MOUNT
from runner.hosts.hosts import Host
from runner.planning.jobs import Job, rate_job
from runner.planning.plan import CACHE_ROOT, REMOTE_CACHE_ROOT, Plan, make_plan, router_yaml
from runner.planning.policy_gate import findings, refusals
from runner.recording.record import local_env

HOME = re.compile(r"(?<![\w.~-])(?:/home/[^/:,=\s]+|/Users/[^/:,=\s]+|/root)(?=/|$|[:,=])")
"""A home folder at the start of a path in a command word: the recorder's differs from this machine's."""
COMPILE_CACHE = re.compile(
    rf"^({re.escape(CACHE_ROOT)}|{re.escape(REMOTE_CACHE_ROOT)})/[a-z0-9-]+/[a-z0-9-]+:{re.escape(CACHE_MOUNT)}$"
)
"""The runner's own compile-cache mount (`-v <root>/<image>/<recipe>:/catalogue-cache`) after _normal's `~`."""
SHOWN = 40
"""Characters of a differing word shown in the note."""


def recorded_port(word: str | None) -> int | None:
    """A port from recorded text when it is one (1 to 65535, digits only); anything else is not used."""
    if word is None or not (word.isascii() and word.isdigit()) or len(word) > 5:
        return None
    port = int(word)
    return port if 0 < port <= 65535 else None


def after(argv: list[str], option: str) -> str | None:
    """The word after `option` in an argv, if there is one."""
    return argv[argv.index(option) + 1] if option in argv[:-1] else None


def run_ports(run: BenchmarkRun) -> tuple[int | None, int | None]:
    """The server's `--port` and, behind a router, the router's (the clients' --base-url) as the run recorded them."""
    prov = run.provenance
    assert isinstance(prov, MeasuredProvenance)
    port = recorded_port(after(prov.serve_command, "--port"))
    router = None
    if prov.router is not None:
        urls = [after(argv, "--base-url") for argv in prov.bench_commands]
        router = next((recorded_port(u.rsplit(":", 1)[-1]) for u in urls if u and ":" in u), None)
    return port, router


def run_pin(entry: Entry, run: BenchmarkRun, allowed: list[str]) -> Pin:
    """What the run file pins of the recipe (catalogue.models.reproduce.pin): its digest and revision only where they
    match the recipe or the owner allows them (`--allow 'pin ...'`)."""
    return pin(
        run,
        entry.recipe.serving.image,
        revision=entry.recipe.serving.flags.get("revision"),
        allowed=allowed,
        path=entry.folder / RUNS_DIR / f"{run.file_stem}.json",
    )


def with_pin(entry: Entry, the_pin: Pin) -> Entry:
    """The recipe with the pinned image and, unless it names one itself, the pinned model revision."""
    serving = entry.recipe.serving
    flags = dict(serving.flags)
    if the_pin.revision and "revision" not in flags:
        flags["revision"] = the_pin.revision
    pinned = serving.model_copy(update={"image": the_pin.image or serving.image, "flags": flags})
    return replace(entry, recipe=entry.recipe.model_copy(update={"serving": pinned}))


def rebuilt_plan(
    entry: Entry,
    run: BenchmarkRun,
    hosts: list[Host],
    *,
    local: bool = False,
    client: str | None = None,
    port: int | None = None,
    router_port: int | None = None,
) -> Plan:
    """The plan of the run's refresh, made again from `entry` (pin it first for the commands to print)."""
    prov = run.provenance
    assert isinstance(prov, MeasuredProvenance)
    ran_port, ran_router = run_ports(run)
    return make_plan(
        entry,
        hosts=hosts,
        local=local,  # the recipe's container, whatever the run file says (its image null must not make it local)
        port=port if port is not None else ran_port,
        stamp=run.stamp,
        client=client,
        router_port=router_port if router_port is not None else ran_router,
        capacity=any(lv.probe is not None for lv in run.rates),
    )


def _prompts(job: Job, level: Figures | None) -> Job:
    """The job with `--num-prompts` as the level sent them (completed + failed: a short level runs again longer)."""
    sent = (level.completed or 0) + (level.failed or 0) if level is not None else 0
    if sent and "--num-prompts" in job.argv[:-1]:
        argv = list(job.argv)
        argv[argv.index("--num-prompts") + 1] = str(sent)
        return replace(job, argv=argv)
    return job


def bench_jobs(plan: Plan, run: BenchmarkRun, texts: list[str]) -> list[Job]:
    """The client's jobs for the levels the run holds, from its typed fields, in the plan's order; then its probes."""
    text = run.part if run.part in texts else texts[0]
    closed = {lv.concurrency: lv for lv in run.levels}
    longer = {lv.prompt_tokens: lv for lv in run.long_context}
    planned = [lv for lv in run.rates if lv.probe is None and lv.offered_rps is not None]
    out = []
    for job in plan.levels:
        if job.rate is not None:
            level = next((lv for lv in planned if lv.offered_rps == job.rate), None)
            out += [_prompts(job, level)] if level is not None else []
        elif job.prompt_tokens is not None:
            out += [_prompts(job, longer[job.prompt_tokens])] if job.prompt_tokens in longer else []
        elif job.text == text and job.concurrency in closed:
            out.append(_prompts(job, closed[job.concurrency]))
    template = plan.probe_template
    for level in sorted((lv for lv in run.rates if lv.probe is not None), key=lambda lv: lv.probe or 0):
        if template is not None and level.offered_rps is not None and level.probe is not None:
            sent = (level.completed or 0) + (level.failed or 0) or 1
            out.append(rate_job(template, f"probe{level.probe}", level.offered_rps, sent, probe=level.probe))
    return out


def steps(plan: Plan, jobs: list[Job]) -> list[Step]:
    """Every command in order: the servers, the router, each level's benchmark client."""
    out = []
    for node in plan.nodes:
        env = [f"{name}={value}" for name, value in node.env.items()] if node.container is None else []
        out.append(Step(f"{node.role}, on host {node.host.name}", ["env", *env, *node.argv] if env else node.argv))
        if node.exec_argv:
            out.append(Step(f"{node.role}, once every node has joined", node.exec_argv))
    if plan.router is not None and plan.router_argv is not None:
        out.append(Step("router config, router.yaml", None, router_yaml(plan).rstrip()))
        out.append(Step(f"router (LiteLLM {LITELLM_VERSION}; LITELLM_MASTER_KEY made per run)", plan.router_argv))
    where = f"inside {plan.image}" if plan.client == "image" else "in a Python environment with this vLLM"
    for job in jobs:
        what = f"capacity search, {job.name}, its rate chosen from the results before it" if job.probe else job.name
        out.append(Step(f"benchmark client, level {what} ({where})", job.argv))
    return out


def _normal(word: str, root: str) -> str:
    """A word as it compares across machines: home folders as ~, where the checkout is (before `<root>/`) dropped,
    the runner's compile-cache folder as `<cache root>/<image>/<recipe>` (its name holds hashes of the image and
    of the checkout's folder, and runs recorded before named it otherwise)."""
    word = HOME.sub("~", word.replace(str(Path.home()), "~"))
    word = COMPILE_CACHE.sub(r"\1/<image>/<recipe>:" + CACHE_MOUNT, word)
    parts = re.split(r"([:=,\s])", word)
    return "".join(_from_root(part, root) for part in parts)


def _from_root(path: str, root: str) -> str:
    """`.../<root>/...` for a path into the catalogue's root folder, relative or absolute; else the text."""
    if path.startswith(f"{root}/"):
        return f".../{path}"
    at = path.find(f"/{root}/")
    return f"...{path[at:]}" if at >= 0 else path


def _shown(word: str) -> str:
    """A recorded word as a note may show it: escaped (ascii) and shortened."""
    return ascii(word if len(word) <= SHOWN else word[: SHOWN - 3] + "...")


def _first_difference(recorded: list[str], rebuilt: list[list[str]], recipe_id: str) -> str | None:
    """None when `recorded` equals one of the `rebuilt` forms (pinned or as the recipe says), else the first word
    that differs from the first form."""
    was = [_normal(w, recipe_id) for w in recorded]
    forms = [[_normal(w, recipe_id) for w in argv] for argv in rebuilt]
    if any(was == form for form in forms):
        return None
    now = forms[0]
    at = next((i for i, (a, b) in enumerate(zip(was, now)) if a != b), min(len(was), len(now)))
    if at >= len(was):
        return f"the file's has {len(now) - at} word(s) fewer"
    if at >= len(now):
        return f"the file's has {len(was) - at} more word(s), from {_shown(recorded[at])}"
    return f"word {at + 1} is {_shown(recorded[at])} in the file, {_shown(rebuilt[0][at])} rebuilt"


def differences(run: BenchmarkRun, pinned: Plan, unpinned: Plan, jobs: list[Job]) -> list[str]:
    """Where the run file's own command text differs from the rebuilt commands: `<what>: <first difference>`."""
    prov = run.provenance
    assert isinstance(prov, MeasuredProvenance)
    rid = pinned.folder.parent.name  # the catalogue root's folder: recipes, examples
    out = []
    recorded = [n.command for n in prov.nodes] or [prov.serve_command]
    if len(recorded) != len(pinned.nodes):
        out.append(f"servers: the file has {len(recorded)}, the recipe makes {len(pinned.nodes)}")
    for was, node, plain in zip(recorded, pinned.nodes, unpinned.nodes):
        found = _first_difference(was, [node.argv, plain.argv], rid)
        out += [f"{node.role}: {found}"] if found else []
    head = pinned.nodes[0]
    if head.container is None and {k: _normal(v, rid) for k, v in prov.serve_env.items()} != {
        k: _normal(v, rid) for k, v in local_env(head.env).items()
    }:
        out.append(f"{head.role}: the file's environment differs ({len(prov.serve_env)} variable(s))")
    if (prov.router is not None) != (pinned.router is not None) or (
        pinned.router is not None and prov.router != pinned.router.config
    ):
        out.append("router: the file's config differs")
    by_name = {after(argv, "--result-filename"): argv for argv in prov.bench_commands}
    for job in jobs:  # the client's words do not name the image: pinned or not, they are the same
        ran = by_name.pop(f"{job.name}.json", None)
        found = "the file has no command for it" if ran is None else _first_difference(ran, [job.argv], rid)
        out += [f"level {job.name}: {found}"] if found else []
    if by_name:
        out.append(f"the file has {len(by_name)} benchmark command(s) for no level of the run")
    return out


def difference_line(found: list[str]) -> str | None:
    """The one line `catalogue reproduce` prints when the run file's command text is not what the recipe makes."""
    if not found:
        return None
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (
        "note: the run file's own command text differs from these rebuilt commands, which are what this recipe "
        f"runs; the file's text is not used: {found[0]}{more}"
    )


def reproduction(
    entry: Entry,
    run: BenchmarkRun,
    hosts: list[Host],
    *,
    local: bool = False,
    client: str | None = None,
    port: int | None = None,
    router_port: int | None = None,
    allowed: list[str] | None = None,
) -> tuple[list[Step], list[str]]:
    """The rebuilt steps, and where the run file's own text differs from them (`allowed`: the owner's --allow)."""
    pinned_entry = with_pin(entry, run_pin(entry, run, allowed or []))
    pinned, unpinned = (
        rebuilt_plan(e, run, hosts, local=local, client=client, port=port, router_port=router_port)
        for e in (pinned_entry, entry)
    )
    jobs = bench_jobs(pinned, run, list(entry.recipe.sweep.texts))
    return [*host_policy(pinned_entry, pinned), *steps(pinned, jobs)], differences(run, pinned, unpinned, jobs)


def host_policy(entry: Entry, plan: Plan) -> list[Step]:
    """Before commands that run vLLM on a host outside a container: what `refresh` requires before it starts them
    (the run policy's refusals with no --allow given: the `no container` consent, a flag reading the host's files),
    one line each, so a printed host command is never one that passed no policy. None for a container plan."""
    if all(node.container is not None for node in plan.nodes):
        return []
    lines = refusals(findings(entry, plan), [])
    title = "run policy: these commands run on your machine; refresh starts them only with these allowed"
    return [Step(title, None, "\n".join(lines))] if lines else []
