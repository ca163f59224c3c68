"""Control characters from untrusted files reach the terminal escaped: `reproduce` (a run file's fields), `validate`
(a recipe's words in its findings), and any error line; the module's own escapes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from catalogue.commands.cli import main
from catalogue.models.terminal import CONTROL, printable, terminal_safe

REPO = Path(__file__).resolve().parents[1]
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[1A\r\u202eok\x9b31m\x00"
"""A window title, a cleared screen, a cursor moved up, a line rewritten, text reversed, a C1 CSI, a NUL."""


def raw_controls(text: str) -> list[str]:
    """The control characters left in printed text, beyond newline and tab."""
    return [c for c in CONTROL.findall(text) if c not in "\n\t"]


def test_printable_escapes_every_control_and_terminal_safe_keeps_lines():
    assert printable("a\x1b[2Jb\nc\u202e") == "a\\x1b[2Jb\\x0ac\\u202e"
    assert terminal_safe("a\x1b[2J\nb\tc\rd\x07") == "a\\x1b[2J\nb\tc\rd\\x07"
    assert printable("plain text: ~/x, é, 中") == "plain text: ~/x, é, 中"


def test_reproduce_prints_a_run_files_text_with_its_controls_escaped(tmp_path, capsys):
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / "tiny-cpu-docker", root / "tiny-cpu-docker")
    (path,) = (root / "tiny-cpu-docker" / "runs").glob("*.json")
    data = json.loads(path.read_text())
    prov = data["provenance"]
    prov["vllm_version"] = f"0.32.0{HOSTILE}"
    prov["hosts"][0] |= {"image_note": f"built{HOSTILE}\nreproducible", "model_revision_from": HOSTILE}
    path.write_text(json.dumps(data, indent=2))
    assert main(["--root", str(root), "reproduce", "tiny-cpu-docker"]) == 0
    out = capsys.readouterr().out
    assert raw_controls(out) == [] and "\\x1b]0;owned\\x07" in out, ascii(out[:400])
    assert "built\\x1b]0;owned" in out and "\\x0areproducible" in out  # one line: no forged line of its own


def test_every_command_writes_through_the_escaping_stream(tmp_path, capsys):
    """`export --sparkrun` names the container options it does not carry, as the recipe wrote them: the stream
    every command writes through escapes what the line itself does not."""
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes" / "gptoss-120b", root / "gptoss-120b")
    recipe = root / "gptoss-120b" / "recipe.yaml"
    data = yaml.safe_load(recipe.read_text())
    data["serving"]["container"]["options"] += ["-v", f"/srv/a{HOSTILE}:/x"]
    recipe.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["--root", str(root), "export", "--sparkrun", "gptoss-120b", str(tmp_path / "out.yaml")]) == 0
    captured = capsys.readouterr()
    assert "/srv/a\\x1b]0;owned" in captured.out, ascii(captured.out)
    assert raw_controls(captured.out) == [] and raw_controls(captured.err) == []


def test_an_error_line_holding_a_files_text_is_escaped(tmp_path, capsys):
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes" / "gptoss-120b", root / "gptoss-120b")
    recipe = root / "gptoss-120b" / "recipe.yaml"
    data = yaml.safe_load(recipe.read_text())
    data["serving"]["flags"][f"bad{HOSTILE}"] = 1
    recipe.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["--root", str(root), "validate", "--no-flags"]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and raw_controls(err) == [], ascii(err)


def test_the_sparkrun_files_comment_lines_hold_no_control_character(tmp_path):
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes" / "gptoss-120b", root / "gptoss-120b")
    recipe = root / "gptoss-120b" / "recipe.yaml"
    data = yaml.safe_load(recipe.read_text())
    data["serving"]["container"]["options"] += ["-v", f"/srv/a{HOSTILE}\u2028evil: 1:/x"]
    recipe.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["--root", str(root), "export", "--sparkrun", "gptoss-120b", str(tmp_path / "out.yaml")]) == 0
    text = (tmp_path / "out.yaml").read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert any("/srv/a\\x1b]0;owned" in line for line in comments) and raw_controls(text) == []
    assert "evil" not in yaml.safe_load(text)
