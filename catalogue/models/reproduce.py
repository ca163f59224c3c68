"""A measured run turned back into the commands that made it, pinned to what it ran: the image by its registry
digest (or, built locally, its content id), the model by its revision. And whether a run earns the
"reproducible" badge: image digest, model revision, flags and bench commands all pinned.

A run file is untrusted: the image is the recipe's, and a recorded digest is used only when it is a digest of
that same repository (a content id only when it is one); anything else makes the run "not reproducible". Its
command text is never printed: the runner rebuilds every command from the recipe and the run's typed figures
(runner/recording/reproduction.py) and says when the file's text differs."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from catalogue.models.benchmark import BenchmarkRun, HostFacts, ImportedProvenance, MeasuredProvenance
from catalogue.models.errors import CatalogueError
from catalogue.models.image_refs import digest_of, repository, same_repository
from catalogue.models.launch import shell_command
from catalogue.models.loading import Entry
from catalogue.models.revision import is_revision
from catalogue.models.terminal import printable

PIN = "pin {value}"
"""The consent name of a run file's digest or revision (`--allow 'pin docker.io/x/y@sha256:...'`)."""
CONTENT_ID = re.compile(r"^sha256:[0-9a-f]{64}$")
"""A local image's content id, as `docker image inspect --format {{.Id}}` prints it."""


@dataclass(frozen=True)
class Pin:
    """What a reproduction pins: the image reference to run and the model revision to ask for."""

    image: str | None
    """`repo@sha256:...` when the image came from a registry, else its local id `sha256:...`, None without image."""
    revision: str | None
    """A model revision to pass as `--revision`, when the HF cache resolved one (not a local folder)."""
    notes: list[str]
    unpinned: list[str] = field(default_factory=list)
    """The run file's pins that do not run without the owner's consent, one line each (its field, --allow)."""
    source: str = ""
    """The run file the pins come from."""


def foreign_images(run: BenchmarkRun, image: str | None) -> list[str]:
    """Why the run's recorded image is not the recipe's `image` (its repository): each a field of the run file
    that names another repository, or a digest or id that is none. Empty when the run ran the recipe's image."""
    prov = run.provenance
    if not isinstance(prov, MeasuredProvenance):
        return []
    wanted = repository(image) if image else "none (the recipe runs no image)"
    out = []
    if prov.image is not None and (image is None or not same_repository(prov.image, image)):
        out.append(f"provenance.image {prov.image!r} is not of the recipe's image repository {wanted}")
    for i, host in enumerate(prov.hosts):
        if host.image_digest and (image is None or not digest_of(host.image_digest, image)):
            out.append(f"provenance.hosts[{i}].image_digest {host.image_digest!r} is not a digest of {wanted}")
        if host.image_id and not CONTENT_ID.match(host.image_id):
            out.append(f"provenance.hosts[{i}].image_id {host.image_id!r} is not an image content id (sha256:...)")
    if prov.image_id and not CONTENT_ID.match(prov.image_id):
        out.append(f"provenance.image_id {prov.image_id!r} is not an image content id (sha256:...)")
    return out


def missing_pins(run: BenchmarkRun, image: str | None) -> list[str]:
    """What keeps a run from being reproducible with the recipe's `image`; empty when image digest, model
    revision, flags and bench commands are all pinned."""
    prov = run.provenance
    if isinstance(prov, ImportedProvenance):
        return ["its commands: imported from a source, not measured by the runner"]
    missing: list[str] = foreign_images(run, image)
    if not prov.hosts:
        missing.append("host provenance: measured before the runner recorded image digests and model revisions")
    if prov.image is None:
        missing.append("an image: a local process depends on the host's Python environment")
    for host in prov.hosts:
        if prov.image is not None and not host.image_digest:
            missing.append(f"the image digest on {host.host} ({host.image_note or 'no registry digest'})")
        if not host.model_revision:
            missing.append(f"the model revision on {host.host} ({host.model_revision_from or 'unknown'})")
    if not prov.serve_command:
        missing.append("the serve command")
    if not prov.bench_commands:
        missing.append("the bench commands")
    return list(dict.fromkeys(missing))


def pin(
    run: BenchmarkRun,
    recipe_image: str | None,
    *,
    revision: object = None,
    allowed: Iterable[str] = (),
    path: Path | str | None = None,
) -> Pin:
    """The image (the recipe's, pinned by what the run recorded of it) and model revision a reproduction runs
    with. The run file is untrusted, so its registry digest (any release of the same repository: a downgrade) and its
    model revision (any commit: a pull request's head too) are pinned only where they match the recipe (its image
    written with that digest, its own `revision`) or the owner allows each by name (`--allow 'pin <value>'`); else
    the recipe's tag and revision run and `unpinned` says why, one line naming the run file's field. A run that
    recorded another repository's digest is not pinned at all."""
    prov = run.provenance
    assert isinstance(prov, MeasuredProvenance)
    hosts: list[HostFacts] = prov.hosts
    given = {" ".join(a.split()) for a in allowed}
    where = str(path if path is not None else f"runs/{run.file_stem}.json")
    notes, unpinned = [], []
    image = None
    if recipe_image is not None:
        trusted = not foreign_images(run, recipe_image)
        digests = {h.image_digest for h in hosts if h.image_digest} if trusted else set()
        ids = {h.image_id or prov.image_id for h in hosts} - {None} or ({prov.image_id} - {None})
        if len(digests) == 1:
            digest = digests.pop()
            at = next(f"hosts[{i}].image_digest" for i, h in enumerate(hosts) if h.image_digest == digest)
            image = digest if _matches(digest, recipe_image) or PIN.format(value=digest) in given else recipe_image
            if image != digest:
                why = f"the recipe names {recipe_image}: a digest the file records could be any release of it"
                unpinned.append(_unpinned(at, digest, why))
        elif len(ids) == 1 and trusted:
            image = ids.pop()
            notes.append(
                f"{recipe_image} has no registry digest: pinned to its local id {image}, on the same host only"
            )
        else:
            image = recipe_image
            notes.append(f"{recipe_image} is not pinned: the run recorded no single digest or id of it")
    revisions = {
        h.model_revision
        for h in hosts
        if is_revision(h.model_revision)
        and h.model_revision_from != "local folder"
        and not (h.model_revision or "").startswith("sha256:")
    }
    recorded = revisions.pop() if len(revisions) == 1 else None
    agreed = recorded is not None and (recorded == revision or PIN.format(value=recorded) in given)
    pinned = recorded if agreed else None
    if recorded is not None and pinned is None:
        at = next(f"hosts[{i}].model_revision" for i, h in enumerate(hosts) if h.model_revision == recorded)
        declared = f"--revision {revision}" if revision is not None else "no --revision"
        why = f"the recipe has {declared}: a commit the file records could be a pull request's unreviewed files"
        unpinned.append(_unpinned(at, recorded, why))
    return Pin(image, pinned, notes, unpinned, where)


def _matches(digest: str, recipe_image: str) -> bool:
    """Whether the recipe's own image is written with this digest (`repo:tag@sha256:...`): the same image."""
    return "@" in recipe_image and recipe_image.rsplit("@", 1)[1] == digest.rsplit("@", 1)[1]


def _unpinned(at: str, value: str, why: str) -> str:
    """One line: a run file's pin that runs only when the owner allows it."""
    name = PIN.format(value=value)
    return printable(
        f"provenance.{at}: consent: {name}: not pinned, {why}; the recipe's own runs instead (check it, "
        f"then run with --allow '{name}')"
    )


@dataclass(frozen=True)
class Step:
    """One thing to run: where, and its argv (or a config file's text)."""

    title: str
    argv: list[str] | None
    text: str | None = None


def measured_run(entry: Entry, stamp: str | None) -> BenchmarkRun:
    """The run to reproduce: the one with this stamp, else the newest measured one of the runner's own sweep (a named
    profile's run, the Arena's, comes from the same refresh and is made again by it)."""
    measured = [r for r in entry.runs if isinstance(r.provenance, MeasuredProvenance)]
    if stamp is not None:
        found = [r for r in measured if r.stamp == stamp]
        if not found:
            known = ", ".join(r.stamp for r in measured) or "none"
            raise CatalogueError(entry.folder / "runs", f"no measured run {stamp} (measured runs: {known})")
        if found[0].workload is not None and found[0].workload.profile:
            raise CatalogueError(
                entry.folder / "runs" / f"{stamp}.json",
                f"run {stamp} is the {found[0].workload.profile} profile's (sweep.arena, llama-benchy): reproduce the "
                "refresh run it came from (its notes name it), whose refresh runs the profile again",
                "workload.profile",
            )
        return found[0]
    own = [r for r in measured if r.workload is None or r.workload.profile is None]
    if not own:
        raise CatalogueError(entry.folder / "runs", "no measured run to reproduce (imported runs have no commands)")
    return max(own, key=lambda r: r.recorded_at)


def reproduction_text(
    recipe_id: str,
    run: BenchmarkRun,
    recipe_image: str | None,
    steps: list[Step],
    differs: str | None = None,
    the_pin: Pin | None = None,
) -> str:
    """What `catalogue reproduce` prints: the verdict, what is not pinned, whether the run file's own command text
    differs, then every step (rebuilt from the recipe by the runner, never the run file's text)."""
    prov = run.provenance
    assert isinstance(prov, MeasuredProvenance)
    foreign = foreign_images(run, recipe_image)
    missing = missing_pins(run, recipe_image)
    verdict = "reproducible" if not missing else "not fully pinned: " + "; ".join(missing)
    if foreign:
        verdict = "not reproducible: " + "; ".join(foreign)
    lines = [f"{recipe_id} run {run.stamp} (vLLM {prov.vllm_version}, measured {run.measured_on}): {verdict}"]
    the_pin = the_pin or pin(run, recipe_image)
    lines += [f"note: {n}" for n in the_pin.notes] + [f"note: {the_pin.source}: {n}" for n in the_pin.unpinned]
    bench = [step.argv for step in steps if step.argv and "bench" in step.argv]
    lines += [f"note: {n}" for n in client_notes(run, bench)]
    lines += [differs] if differs else []
    out = [printable(line) for line in lines]  # each holds text of the run file: one line, controls escaped
    for step in steps:
        body = step.text if step.text is not None else shell_command(step.argv or [])
        out += ["", printable(f"{step.title}:"), *(printable(line) for line in body.split("\n"))]
    return "\n".join(out)


def client_notes(run: BenchmarkRun, bench: list[list[str]]) -> list[str]:
    """What the benchmark commands (`bench`, rebuilt) cannot pin themselves: the tokenizer's revision (vLLM's client
    has no option for it and reads the Hugging Face cache's current one), and where a level's prompts came from
    (whether the run's own commands set --seed)."""
    prov = run.provenance
    assert isinstance(prov, MeasuredProvenance)
    out = []
    revisions = sorted({h.model_revision for h in prov.hosts if h.model_revision})
    tokenizers = sorted({a[a.index("--tokenizer") + 1] for a in bench if "--tokenizer" in a[:-1]})
    if revisions and tokenizers:
        out.append(
            f"the client's tokenizer ({', '.join(tokenizers)}) is read at the revision the Hugging Face cache points "
            f"to: vLLM's benchmark client has no revision option, so check the cache resolves {', '.join(revisions)}"
        )
    seeded = [a for a in prov.bench_commands if "--seed" in a]
    if prov.bench_commands and not seeded:
        out.append("the levels ran without --seed (before the runner set one): each replayed vLLM's default prompts")
    return out
