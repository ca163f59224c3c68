"""A fuzzer that argues with docker: Hypothesis writes `docker run` option lists (mounts in odd CSV, quoting and
letter case, `=` and short forms, repeats, abbreviations, control characters, paths with `..`, `~` and `//`, the
owner's variables, capabilities), the static policy judges the words, and the real engine's `docker create` +
`docker inspect` shows what they made, judged by the inspect gate. The static verdict must be at least as strict as
the verdict on docker's own view: otherwise the static gate let through what docker would have made, and the
example is a disagreement (the test fails; each class found is kept in tests/policy_corpus_docker.py).

CI runs a fixed, derandomised budget (CATALOGUE_FUZZ_EXAMPLES, default 60); `nox -s fuzz` runs a deeper one."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalogue.models.platform import load_platform
from catalogue.policy.check import check_options, context_for
from catalogue.policy.words import control_char
from runner.hosts.docker_view import read_view
from runner.hosts.hosts import LOCAL
from runner.planning.inspect_gate import Container, Verdicts, baseline, inspect, judge

IMAGE = "local/debian-py:bookworm"
LABEL = "catalogue-test.gate=fuzz"
pytestmark = [pytest.mark.docker]
EXAMPLES = int(os.environ.get("CATALOGUE_FUZZ_EXAMPLES", "60"))
ROOT = Path("/tmp/catalogue-fuzz")
"""The docker CLI's working folder (relative sources resolve here) and the only folder its binds may create."""
SEVERITY = {"never": 2, "consent": 1}
TARGETS = st.sampled_from(["/data", "/d1", "/d2", "/d3"])

EXISTING = ["/", "/etc", "/etc/hostname", "/run", "/var/run", "/usr/share", "/tmp", str(ROOT / "data"), "~", "~/.."]
"""Host paths that exist here, so a `-v` bind never makes a folder outside ROOT."""


def _respell(path: str, trick: str) -> str:
    if path.startswith("~"):
        return "$HOME" + path[1:] if trick == "home" else path
    if trick == "//":
        return "/" + path
    if trick == "/./":
        return "/./" + path.lstrip("/")
    if trick == "..":
        return f"{ROOT}/data/../../.." + path
    return path.rstrip("/") + "/" if trick == "/" else path


@st.composite
def host_paths(draw: st.DrawFn) -> str:
    """An existing path in another spelling: doubled slashes, `.`, `x/..`, a trailing slash, `$HOME`; or relative."""
    path = draw(st.sampled_from(EXISTING))
    for trick in draw(st.lists(st.sampled_from(["//", "/./", "..", "/", "home"]), max_size=2)):
        path = _respell(path, trick)
    return draw(st.sampled_from([path, path, path, "./data", ".", ".."]))


def _case(draw: st.DrawFn, word: str) -> str:
    return draw(st.sampled_from([word, word.upper(), word.capitalize()]))


@st.composite
def mount_values(draw: st.DrawFn) -> str:
    """A `--mount` value: key=value fields in docker's spellings, some quoted, some repeated, odd records."""
    kind = draw(st.sampled_from(["bind", "volume"]))
    fields = [f"{_case(draw, 'type')}={_case(draw, kind)}"]
    source = draw(host_paths())
    if kind == "bind":
        fields.append(f"{draw(st.sampled_from(['source', 'src', 'SOURCE']))}={source}")
    else:
        fields += ["volume-opt=type=none", "volume-opt=o=bind", f"volume-opt=device={source}"]
    fields.append(f"{draw(st.sampled_from(['target', 'dst', 'destination']))}={draw(TARGETS)}")
    extras = ["readonly", "bind-propagation=rshared", "bind-propagation=RPRIVATE", "target=/other", "src=/etc"]
    fields += draw(st.lists(st.sampled_from(extras), max_size=2))
    fields = draw(st.permutations(fields))
    quoted = [f'"{f}"' if draw(st.booleans()) and '"' not in f else f for f in fields]
    value = ",".join(quoted)
    tail = draw(st.sampled_from(["", "", "\n,type=volume,target=/d", "\r\n", '"']))
    return draw(st.sampled_from(["", "", "\n"])) + value + tail


@st.composite
def option_groups(draw: st.DrawFn) -> list[str]:
    """One option in one of the spellings docker reads (or refuses)."""
    kind = draw(st.sampled_from(["mount", "volume", "env", "cap", "switch", "other"]))
    if kind == "mount":
        value = draw(mount_values())
        return draw(st.sampled_from([["--mount", value], [f"--mount={value}"], ["--mou", value]]))
    if kind == "volume":
        value = f"{draw(host_paths())}:{draw(TARGETS)}" + draw(st.sampled_from(["", ":ro", ":rshared", ":RW"]))
        return draw(st.sampled_from([["-v", value], [f"-v{value}"], [f"--volume={value}"], ["--VOLUME", value]]))
    if kind == "env":
        name = draw(st.sampled_from(["HF_ENDPOINT=x", "LD_PRELOAD=/x", "PATH=/x", "LANG", "GREETING=\x1b[2J", "A=b"]))
        return draw(st.sampled_from([["-e", name], [f"--env={name}"], [f"-e{name}"]]))
    if kind == "cap":
        cap = draw(st.sampled_from(["sys_admin", "CAP_SYS_ADMIN", "ALL", "chown"]))
        return draw(st.sampled_from([["--cap-add", cap], [f"--cap-add={cap}"]]))
    if kind == "switch":
        name = draw(st.sampled_from(["--privileged", "--oom-kill-disable", "--init"]))
        return [draw(st.sampled_from([name, f"{name}=false", f"{name}=F", f"{name}=true", f"{name}=1"]))]
    return draw(
        st.sampled_from(
            [
                ["--security-opt", "seccomp=unconfined"],
                ["--security-opt=no-new-privileges"],
                ["--pid=host"],
                ["--ipc", "host"],
                ["--userns=host"],
                ["--device", "/dev/null"],
                ["--log-driver", "none"],
                ["--label", "catalogue.run=x"],
                ["--network", "name=host"],
                ["--sysctl", "kernel.msgmax=1"],
                ["-l", "Catalogue.Run=x"],
            ]
        )
    )


def static_severity(options: list[str], context) -> int:
    """The static gate's verdict on the words: a control character anywhere is never; else the policy's classes."""
    if any(control_char(word) for word in options):
        return 2
    return max((SEVERITY.get(f.cls, 0) for f in check_options(options, {}, context) if f.is_error), default=0)


@pytest.fixture(scope="module")
def judged(engine):
    """What the inspect gate needs: the platform context and a baseline container of the image."""
    (ROOT / "data").mkdir(parents=True, exist_ok=True)
    return context_for(load_platform("cpu")), baseline(LOCAL, IMAGE, {"catalogue-test.gate": "baseline"})


def docker_severity(options: list[str], context, base) -> int | None:
    """The inspect gate's verdict on what `docker create` made of the words (as the runner passes them: a word
    starting with `~/` expanded); None when docker refuses to create it."""
    words = [os.path.expanduser(w) if w.startswith("~/") or w == "~" else w for w in options]
    out = subprocess.run(
        ["docker", "create", "--label", LABEL, *words, IMAGE, "true"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "LANG": "C.UTF-8"},
        check=False,
    )
    if out.returncode != 0:
        return None
    cid = out.stdout.strip()
    try:
        view = read_view(*inspect(LOCAL, cid))
    finally:
        subprocess.run(["docker", "rm", "-f", "-v", cid], capture_output=True, check=False)
    found = judge(Container("server", LOCAL, [], {}, {}), view, base, Verdicts({}, [], context))
    return max((SEVERITY.get(f.cls, 0) for f in found if f.is_error), default=0)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("CATALOGUE_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
)
@given(groups=st.lists(option_groups(), min_size=1, max_size=3))
def test_the_static_verdict_is_never_laxer_than_dockers_own_view(judged, groups):
    context, base = judged
    options = [word for group in groups for word in group]
    inspected = docker_severity(options, context, base)
    if inspected is None:
        return  # docker refuses it: nothing would run
    assert static_severity(options, context) >= inspected, (options, inspected)
