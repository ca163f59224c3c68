"""Bounded parsing: the three small files that crashed or exhausted memory (a sparkrun recipe whose default names
itself, a YAML alias bomb, a run file nested 3,000 deep) and their kin are one line naming the file, each measured
in a fresh process (its own time and peak memory, VmHWM of its address space) against a second and 200 MB."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.flags.snapshot import newest_committed
from catalogue.models.bounded import (
    MAX_DEPTH,
    MAX_TEMPLATE_CHARS,
    MAX_YAML_NODES,
    bracket_depth_exceeds,
    check_yaml,
    json_value,
    load_json,
    read_bounded,
)
from catalogue.models.errors import CatalogueError
from catalogue.paste.sparkrun_format import TemplateTooLarge, render

RUN = "runs/20260506T000000Z.json"

SELF_NAMING_SPARKRUN = textwrap.dedent(
    """\
    recipe_version: "2"
    model: org/model
    runtime: vllm
    container: vllm/vllm-openai:v0.11.0
    command: vllm serve {a}
    defaults:
      a: "{a}{a}{a}{a}{a}{a}{a}{a} --x"
    """
)


def alias_bomb() -> str:
    """A 20 KB string, then five anchors each a list of ten aliases of the one before: 10^5 copies, 2 GB expanded
    (fewer alias replays than yaml-rs's limit of a million)."""
    lines = ['a0: &a0 "' + "lol " * 5000 + '"']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 6)]
    return "\n".join(lines) + "\n"


def deep_run_text(depth: int = 3000) -> str:
    """A run file's text that nests a note `depth` lists deep (6 KB)."""
    return '{"recorded_at": "2026-05-06T00:00:00Z", "notes": ' + "[" * depth + "]" * depth + "}"


def test_the_crashers_are_the_size_reported():
    assert len(SELF_NAMING_SPARKRUN) < 200
    assert 20_000 < len(alias_bomb()) < 26_000
    assert len(deep_run_text()) < 6_200


def test_yaml_alias_bomb_is_one_line_naming_the_file():
    with pytest.raises(CatalogueError) as caught:
        check_yaml(alias_bomb(), "bomb.yaml")
    assert f"more than {MAX_YAML_NODES:,} values or 8 MB of text once its aliases are expanded" in str(caught.value)
    assert str(caught.value).startswith("bomb.yaml:")


def test_a_billion_laughs_is_refused_by_its_count():
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    with pytest.raises(CatalogueError, match="aliases are expanded"):
        check_yaml("\n".join(lines), "laughs.yaml")


def test_yaml_aliases_within_the_limit_read():
    check_yaml("base: &b {x: 1, y: [1, 2]}\nother: *b\nthird: *b\n", "ok.yaml")  # no error


def test_yaml_nesting_is_capped_in_block_and_flow_style():
    flow = "k: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n"
    block = "".join(f"{'  ' * i}k{i}:\n" for i in range(MAX_DEPTH + 1)) + "  " * (MAX_DEPTH + 1) + "end: 1\n"
    for text in (flow, block, "- " * (MAX_DEPTH + 2) + "x\n"):
        with pytest.raises(CatalogueError, match=f"nested more than {MAX_DEPTH} deep"):
            check_yaml(text, "deep.yaml")
    check_yaml("k: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n", "ok.yaml")  # the mapping is one


def test_json_nesting_is_counted_outside_strings():
    assert bracket_depth_exceeds("[" * 65 + "]" * 65, 64)
    assert not bracket_depth_exceeds("[" * 64 + "]" * 64, 64)
    assert not bracket_depth_exceeds('["' + "[" * 100 + '", {"a": "}}}]]]"}]', 64)
    assert not bracket_depth_exceeds("[" * 100, 64)  # unbalanced: the parser reports it


def test_json_refuses_nan_infinity_and_long_numbers():
    cases = (("[NaN]", "NaN is not a JSON number"), ("[-Infinity]", "-Infinity"), ("[" + "9" * 41 + "]", "41 digits"))
    for text, what in cases:
        with pytest.raises(CatalogueError, match=what):
            load_json(text, "x.json")
    assert load_json('{"a": [1, 2.5]}', "x.json") == {"a": [1, 2.5]}


def test_a_file_past_its_size_is_not_read(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" * 1000)
    with pytest.raises(CatalogueError, match=r"big\.yaml: larger than 1 KB: refused unread"):
        read_bounded(big, 1024)
    assert read_bounded(big, 5000).startswith("a: 1")


def test_sparkrun_template_growth_stops_at_the_cap():
    with pytest.raises(TemplateTooLarge):
        render("vllm serve {a}", {"a": "{a}" * 8})
    with pytest.raises(TemplateTooLarge):
        render("{a}" * 10, {"a": "x" * (MAX_TEMPLATE_CHARS // 9)})  # one pass, many fields
    assert render("vllm serve {m} {a}", {"m": "org/x", "a": "--port {p}", "p": 8000}) == "vllm serve org/x --port 8000"


def test_sparkrun_self_naming_default_is_one_line(tmp_path, capsys):
    source = tmp_path / "self.yaml"
    source.write_text(SELF_NAMING_SPARKRUN)
    root = tmp_path / "recipes"
    root.mkdir()
    code = main(["--root", str(root), "new", "drafted", "--from-sparkrun", str(source)])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1, err
    assert f"{source}:5: command: the command template grows past" in err
    assert not (root / "drafted").exists()


def test_deep_run_file_fails_validate_and_export_in_one_line(recipe_copy, capsys, tmp_path, monkeypatch, repo):
    monkeypatch.setenv("CATALOGUE_FLAGS_SNAPSHOT", str(newest_committed(repo / "snapshots")))  # no vLLM import
    root, folder = recipe_copy()
    (folder / RUN).write_text(deep_run_text())
    for argv in (["validate", "--no-flags"], ["export", str(tmp_path / "out")]):
        code = main(["--root", str(root), *argv])
        err = capsys.readouterr().err.strip()
        assert code == 1 and len(err.splitlines()) == 1, err
        assert f"{RUN}: nested more than {MAX_DEPTH} deep" in err, err


def test_alias_bomb_recipe_fails_validate_in_one_line(recipe_copy, capsys):
    root, folder = recipe_copy()
    (folder / "recipe.yaml").write_text(alias_bomb() + (folder / "recipe.yaml").read_text())
    assert main(["--root", str(root), "validate", "--no-flags"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "recipe.yaml:" in err and "aliases are expanded" in err, err


def test_deep_raw_and_import_files_are_one_line(tmp_path):
    from catalogue.imports.source import read_json
    from catalogue.policy.file_secrets import file_secret_errors

    deep = tmp_path / "c1.json"
    deep.write_text(deep_run_text())
    with pytest.raises(CatalogueError, match="nested more than"):
        read_json(deep)
    (error,) = file_secret_errors(deep)
    assert "nested more than" in str(error)
    lines = tmp_path / "samples.jsonl"
    lines.write_text('{"a": 1}\n' + "[" * 3000 + "]" * 3000 + "\n")
    (error,) = file_secret_errors(lines)
    assert str(error).startswith(f"{lines}:2: nested more than")


# Each crasher in a fresh interpreter: the loader's own time, and the interpreter's peak memory (VmHWM of its own
# address space: a child's ru_maxrss also counts the parent's pages it was forked with, 660 MB under an xdist worker).
MEASURE = """
import sys, time
from pathlib import Path
from catalogue.models.errors import CatalogueError
from catalogue.flags.snapshot import newest_committed
kind, path = sys.argv[1], Path(sys.argv[2])
if kind == "sparkrun":
    from catalogue.policy.docker_run import DockerRunOptions
    from catalogue.paste.sparkrun import read_sparkrun
    options = DockerRunOptions.committed()
    load = lambda: read_sparkrun(path.read_text(), str(path), options, {})
elif kind == "recipe":
    from catalogue.models.loading import parse_recipe
    load = lambda: parse_recipe(path)
else:
    from catalogue.models.loading import parse_run
    load = lambda: parse_run(path)
started = time.perf_counter()
try:
    load()
except CatalogueError as exc:
    seconds = time.perf_counter() - started
    peak = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmHWM:"))
    print(f"{seconds:.4f}", int(peak.split()[1]), exc, sep="\\t")
"""


def measured(kind: str, path: Path) -> tuple[float, float, str]:
    """(seconds the loader took, peak MB of the process, its one line)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", MEASURE, kind, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.wait() == 0 and out.count("\n") == 1, out + err
    seconds, peak_kib, line = out.strip().split("\t", 2)
    return float(seconds), int(peak_kib) / 1024, line


@pytest.mark.parametrize("kind", ["sparkrun", "recipe", "run"])
def test_each_crasher_is_refused_within_a_second_and_200_mb(kind, tmp_path):
    texts = {"sparkrun": SELF_NAMING_SPARKRUN, "recipe": alias_bomb(), "run": deep_run_text()}
    path = tmp_path / ("20260506T000000Z.json" if kind == "run" else "file.yaml")
    path.write_text(texts[kind])
    seconds, peak_mb, line = measured(kind, path)
    print(f"{kind}: {seconds * 1000:.1f} ms, peak {peak_mb:.0f} MB: {line}")
    assert line.startswith(str(path)), line
    assert seconds < 1.0 and peak_mb < 200, (seconds, peak_mb)


def test_a_run_file_at_the_nesting_limit_still_loads_as_far_as_its_schema(tmp_path):
    path = tmp_path / "20260506T000000Z.json"
    path.write_text(json.dumps({"notes": [["x"]]}))
    from catalogue.models.loading import parse_run

    with pytest.raises(CatalogueError) as caught:
        parse_run(path)
    assert "nested" not in str(caught.value)  # the schema's error, not the limit's


LONG = "9" * 5000
"""A whole number past Python's 4,300-digit limit on printing one: it was read, then a traceback where shown."""


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("max-num-seqs: 256", f"max-num-seqs: {LONG}"),
        ("max-num-seqs: 256", f"max-num-seqs: !!int '{LONG}'"),
        ('VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8: "1"', f"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8: 0x{'f' * 60}"),
    ],
)
def test_a_long_whole_number_in_a_recipe_is_one_line(old, new, recipe_copy, capsys, tmp_path, monkeypatch, repo):
    monkeypatch.setenv("CATALOGUE_FLAGS_SNAPSHOT", str(newest_committed(repo / "snapshots")))
    root, folder = recipe_copy()
    text = (folder / "recipe.yaml").read_text()
    assert old in text
    (folder / "recipe.yaml").write_text(text.replace(old, new))
    for argv in (["validate"], ["export", str(tmp_path / "out")], ["export", "--sparkrun", "gptoss-120b"]):
        code = main(["--root", str(root), *argv])
        err = capsys.readouterr().err.strip()
        assert code == 1 and len(err.splitlines()) == 1, err
        assert "recipe.yaml:" in err and "digits" in err and "at most 40" in err, err


def test_a_long_whole_number_inside_a_pasted_json_flag_is_one_line(tmp_path, capsys, monkeypatch, repo):
    monkeypatch.setenv("CATALOGUE_FLAGS_SNAPSHOT", str(newest_committed(repo / "snapshots")))
    pasted = tmp_path / "launch.sh"
    pasted.write_text(f"vllm serve org/m --compilation-config '{{\"a\": {LONG}}}'\n")
    root = tmp_path / "recipes"
    root.mkdir()
    code = main(["--root", str(root), "new", "drafted", "--from-command", str(pasted)])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1, err
    assert f"{pasted}:1: --compilation-config: not valid JSON (a whole number too long to read)" in err, err
    assert not (root / "drafted").exists()


def test_a_long_whole_number_in_a_run_file_or_a_sparkrun_file_is_one_line(recipe_copy, capsys, tmp_path):
    root, folder = recipe_copy()
    run = folder / RUN
    run.write_text(run.read_text().replace('"recorded_at": ', f'"x": {LONG}, "recorded_at": ', 1))
    assert main(["--root", str(root), "validate", "--no-flags"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{RUN}:" in err and "5000 digits" in err, err
    source = tmp_path / "long.yaml"
    source.write_text(SELF_NAMING_SPARKRUN.replace('"{a}{a}{a}{a}{a}{a}{a}{a} --x"', LONG))
    code = main(["--root", str(root), "new", "drafted", "--from-sparkrun", str(source)])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1 and f"{source}:7: a whole number of 5000 digits" in err, err


def test_json_inside_a_string_is_refused_past_the_depth_and_size_limits():
    # A flag's value carries JSON of its own: its nesting is not the document's, and json.loads recurses.
    assert json_value("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    for text, limit, why in [
        ("[" * 1100 + "]" * 1100, 8192, f"nested more than {MAX_DEPTH} deep"),
        ("[" * 5000, 8192, f"nested more than {MAX_DEPTH} deep"),  # unbalanced: the count leaves it to the parser
        ('"' + "x" * 2000 + '"', 1024, "longer than 1 KB"),
    ]:
        with pytest.raises(ValueError, match=why):
            json_value(text, limit=limit)
