"""Golden tests (recipe in, Markdown out) and the page facts the issue names."""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import json
import os
import re
from pathlib import Path

import pytest
import yaml

from catalogue.flags.drift import DriftCell
from catalogue.flags.validate import Finding
from catalogue.models.launch import split_command
from catalogue.models.loading import load_catalogue
from catalogue.models.topology import launch_argv
from catalogue.site.model_page import render_model
from catalogue.site.pages import SharedPages, build_pages, render_recipe
from catalogue.site.templating import fmt_num
from catalogue.site.view import Validation
from tests.conftest import SEED_RECIPES

GOLDEN = Path(__file__).parent / "golden"
SEEDS = SEED_RECIPES
"""The golden pages show the seed recipes alone."""
FIXED = Validation(
    "0.32.0",
    dt.date(2026, 11, 22),
    "test snapshot",
    [
        Finding(
            "info",
            Path("recipes/gptoss-120b/recipe.yaml"),
            "mxfp4-layers",
            "not in vLLM 0.32.0; provided by vllm-node-mxfp4",
            "vLLM 0.32.0",
        ),
    ],
    [DriftCell("0.31.0", False, ("--x-<b> renamed to --y",)), DriftCell("0.32.0", True), DriftCell("0.33.0", True)],
)


@pytest.mark.parametrize(
    "page",
    [
        "recipes/gptoss-120b.md",
        "compare/openai-gpt-oss-120b--dgx-spark.md",
        "index.md",
        "models/openai-gpt-oss-120b.md",
    ],
)
def test_golden_pages(entries, page):
    seeds = [e for i, e in entries.items() if i in SEEDS]  # the golden index: the seven seeds only
    pages = build_pages(seeds, {"gptoss-120b": FIXED})
    golden = GOLDEN / page.replace("/", "__")
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(pages[page].markdown())
    assert pages[page].markdown() == golden.read_text(), (
        f"rerun with UPDATE_GOLDEN=1 if the change is intended: {golden}"
    )


def test_golden_capacity_page(capacity_entry):
    """A recipe page with a closed-loop sweep, planned rates, probes and a capacity (the fixture's computed run)."""
    page = build_pages([capacity_entry])["examples/capacity-fixture.md"]
    golden = GOLDEN / "examples__capacity-fixture.md"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(page.markdown())
    assert page.markdown() == golden.read_text(), f"rerun with UPDATE_GOLDEN=1 if the change is intended: {golden}"


def test_recipe_page_shows_every_seed_figure(entries):
    page = render_recipe(entries["gptoss-120b"], FIXED).markdown()
    for figure in [
        "60.4",
        "80.3",
        "107.2",
        "118.7",
        "141.9",
        "160.5",
        "181.2",
        "202",
        "229.2",
        "271",
        "285.8",
        "1,024",
        "5,115",
        "7,034",
    ]:
        assert f"<td>{figure}</td>" in page
    for delta in ["+46.4 %", "+53.9 %", "+73.6 %", "+10.1 %"]:
        assert delta in page
    assert "verified 2026-05-06" in page and "flags validated against vLLM 0.32.0 on 2026-11-22" in page
    assert "107.1 tok/s" in page and "<strong>56 %</strong>" in page


def test_drift_row_names_each_release_and_why_one_refuses(entries):
    page = render_recipe(entries["gptoss-120b"], FIXED).markdown()
    row = re.search(r'<p class="rc-drift">(.*?)</p>', page).group(1)
    assert [html.unescape(t) for t in re.findall(r">(vLLM [^<]*)<", row)] == [
        "vLLM 0.31 ✗ (--x-<b> renamed to --y)",
        "vLLM 0.32 ✓",
        "vLLM 0.33 ✓",
    ]
    assert "<b>" not in row
    index = build_pages(list(entries.values()), {"gptoss-120b": FIXED})["index.md"].markdown()
    assert 'data-vllm="0.32 0.33"' in index and '<option value="0.33">vLLM 0.33</option>' in index


def launch_section_blocks(page: str) -> list[str]:
    section = page.split('id="launch-command"', 1)[1].split('id="reproduce"', 1)[0]
    return [html.unescape(b) for b in re.findall(r"<pre><code>(.*?)</code></pre>", section, re.DOTALL)]


def test_launch_block_parses_back_to_the_recipe(entries):
    solo = [e for e in entries.values() if e.recipe.topology.kind == "solo"]
    assert len(solo) >= 3
    for entry in solo:
        blocks = launch_section_blocks(render_recipe(entry).markdown())
        assert len(blocks) == 1 and split_command(blocks[0]) == launch_argv(entry.recipe, entry.platform)


def test_cluster_page_shows_one_command_per_node(entries):
    entry = entries["gptoss-120b-topology-cluster-tp2"]
    blocks = [split_command(b) for b in launch_section_blocks(render_recipe(entry).markdown())]
    assert len(blocks) == 2
    for rank, argv in enumerate(blocks):
        assert argv[:2] == ["docker", "run"] and argv[argv.index("--node-rank") + 1] == str(rank)
        assert argv[argv.index("--nnodes") + 1] == "2" and argv[argv.index("--master-addr") + 1] == "<head-ip>"
        assert ("--headless" in argv) == (rank == 1)
        assert argv[argv.index("--tensor-parallel-size") + 1] == "2"


def test_replica_page_shows_servers_router_config_and_router(entries):
    entry = entries["gptoss-120b-topology-2x-shuffle"]
    blocks = launch_section_blocks(render_recipe(entry).markdown())
    assert len(blocks) == 4  # two replicas, the config, the router
    config = yaml.safe_load(blocks[2])
    assert config["router_settings"]["routing_strategy"] == "simple-shuffle"
    assert [m["litellm_params"]["api_base"] for m in config["model_list"]] == [
        "http://<replica-1-ip>:8000/v1",
        "http://<replica-2-ip>:8000/v1",
    ]
    assert split_command(blocks[3])[:3] == ["litellm", "--config", "litellm.yaml"]


def test_hostile_strings_are_escaped(recipe_copy):
    root, folder = recipe_copy()
    text = (folder / "recipe.yaml").read_text()
    text = text.replace(
        "title: openai/gpt-oss-120b on ASUS GX10 / DGX Spark (concurrency-first)",
        'title: "<script>alert(1)</script> & <b>x</b>"',
    )
    text = text.replace('    - "Interactive use', '    - "<img src=x onerror=alert(2)> `<code>` Interactive use', 1)
    (folder / "recipe.yaml").write_text(text)
    markdown = build_pages(load_catalogue([root]))["recipes/gptoss-120b.md"].markdown()
    _, front, page = markdown.split("---\n", 2)
    assert 'title: "<script>alert(1)</script> & <b>x</b>"' in front  # data: escaped where HTML is written
    assert "<script>" not in page and "<img" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;x&lt;/b&gt;" in page
    assert "<code>&lt;code&gt;</code>" in page


def test_number_format():
    assert [fmt_num(v) for v in (None, 5115, 60.4, 1024.0, 33.73, 107.0588)] == [
        "—",
        "5,115",
        "60.4",
        "1,024",
        "33.73",
        "107.1",
    ]


def test_comparison_page_compares_only_like_with_like(entries):
    page = build_pages(list(entries.values()))["compare/openai-gpt-oss-120b--dgx-spark.md"].body
    compared, apart = page.split('<h2 id="not-compared">')
    assert compared.count('<h2 id="workload-') == 1 and "llama-benchy 0.3.5" in compared.split("</h2>")[0]
    heads = re.findall(r"<th>([a-z0-9-]+)<br><small>(\d) nodes?</small></th>", compared)
    assert sorted(set(heads)) == [
        ("topology-2x-least-busy", "2"),
        ("topology-2x-shuffle", "2"),
        ("topology-cluster-tp2", "2"),
        ("topology-solo", "1"),
    ]
    for recipe_id, reason in [
        ("gptoss-120b", "does not say how it measured"),
        ("gptoss-120b-community-131k", "does not say how it measured"),
        ("gptoss-120b-ngc-2509", "names the tool (gpt_oss_benchmark.py) but not the prompts"),
    ]:
        item = next(line for line in apart.splitlines() if f'recipes/{recipe_id}/"' in line)
        assert reason in item
        assert f"recipes/{recipe_id}/" not in compared


def _table_rows(page: str, anchor: str) -> dict[int, str]:
    section = page.split(f'<h3 id="{anchor}">')[1].split("<h3")[0]
    return {int(m.group(1)): m.group(0) for m in re.finditer(r"<tr><td>(\d+)</td>.*?</tr>", section)}


def test_throughput_winner_is_decided_per_node(entries):
    page = build_pages(list(entries.values()))["compare/openai-gpt-oss-120b--dgx-spark.md"].body
    generation = _table_rows(page, "workload-1-generation_tps")
    # c64: shuffle's 567.9 tok/s on two nodes is 283.9 per node, below solo's 315.2 on one
    assert "567.9<br><small>283.9 / node</small>" in generation[64]
    assert generation[64].endswith("<td>topology-solo (+11 %)</td></tr>")
    # c1: the two-node cluster's 69 tok/s is 34.5 per node
    assert "69<br><small>34.5 / node</small>" in generation[1] and generation[1].endswith(
        "<td>topology-solo (+67 %)</td></tr>"
    )


def test_latency_winner_only_among_the_same_node_count(entries):
    page = build_pages(list(entries.values()))["compare/openai-gpt-oss-120b--dgx-spark.md"].body
    ttft = _table_rows(page, "workload-1-ttft_mean_ms")
    assert ttft[1].endswith("<td>2 nodes: topology-cluster-tp2 (-31 %)</td></tr>")  # 251 vs least-busy's 364 ms
    assert ttft[64].endswith("<td>2 nodes: topology-2x-shuffle (-33 %)</td></tr>")  # 4,940 vs 7,360 ms
    assert "1 node:" not in "".join(ttft.values())  # solo has no other one-node set-up to beat


def test_published_comparison_says_when_workloads_differ(entries):
    page = render_recipe(entries["gptoss-120b"], FIXED).markdown()
    section = page.split('id="comparisons"')[1].split("<h2")[0]
    arena = [line for line in section.splitlines() if "Spark Arena" in line]
    assert len(arena) == 2 and all(
        "not like for like" in line and "prompt 2,048 / output 128 tokens" in line for line in arena
    )
    assert "same workload" not in section


def test_a_comparison_of_many_recipes_drops_none(tmp_path, repo):
    import shutil

    from catalogue.site.compare_page import render_compare

    for i in range(8):
        shutil.copytree(repo / "recipes" / "gptoss-120b-topology-solo", tmp_path / f"variant-{i}")
    members = load_catalogue([tmp_path])
    page = render_compare("openai/gpt-oss-120b", "dgx-spark", members).body
    charts = page.split('class="rc-chart"')[1:]
    assert len(charts) >= 4
    for chart in charts:
        assert chart.count('<button type="button" class="rc-key"') == 8
        assert chart.count('class="rc-pts rc-s0 rc-d0"') == 1 and chart.count('class="rc-pts rc-s0 rc-d1"') == 1


def _with_partial_run(folder: Path) -> dict:
    """A newer copy of the bench-serve run that stopped after c=1, with a figure no complete run has."""
    newest = sorted((folder / "runs").glob("*.json"))[-1]
    data = json.loads(newest.read_text())
    # One hour after the newest import, whatever today's date is (the imports are stamped with the clock).
    later = dt.datetime.strptime(newest.stem, "%Y%m%dT%H%M%SZ") + dt.timedelta(hours=1)
    data["recorded_at"] = later.strftime("%Y-%m-%dT%H:%M:%SZ")
    data["provenance"]["source_date"] = later.strftime("%Y-%m-%d")
    data["levels"] = data["levels"][:1]
    data["levels"][0]["generation_tps"] = 987.6
    data["complete"], data["incomplete_reason"] = False, "the server died at c=2"
    (folder / "runs" / f"{later:%Y%m%dT%H%M%SZ}.json").write_text(json.dumps(data))
    return data


def _sections(page: str) -> list[str]:
    perf = page.split('<h2 id="performance">')[1].split("<h2")[0]
    return perf.split('<h3 id="workload-')[1:]


def test_every_workload_has_its_own_table_newest_first(tmp_path):
    from catalogue.models.loading import load_entry
    from catalogue.site import view
    from catalogue.site.index_page import index_rows
    from tests.workload_support import import_three_workloads

    _, folder = import_three_workloads(tmp_path)
    entry = load_entry(folder)
    sections = _sections(render_recipe(entry).markdown())
    titles = [s.split("</h3>")[0] for s in sections]
    assert len(titles) == 3
    assert "Workload: vllm bench serve · random · prompt 64 / output 16 tokens" in titles[0]
    assert "Workload: llama-benchy 0.4.0 · llama-benchy&#39;s generated prompts · prompt 128 / output 128" in titles[1]
    assert "Workload: llama-benchy 0.4.0 · llama-benchy&#39;s generated prompts · prompt 64 / output 128" in titles[2]
    for section, figures in zip(sections, [("808.9", "170.5"), ("2,503.3", "117.5"), ("1,668.9", "117.5")]):
        assert '<table class="rc-perf">' in section and "rc-chart" in section
        assert all(f"<td>{f} <small>" in section or f"<td>{f}</td>" in section for f in figures), figures
    # the headline workload comes first when named
    pp64 = view.workloads(entry)[2].key
    assert view.workloads(entry, pp64)[0].key == pp64
    row = index_rows([entry])[0]
    assert row["workload"].startswith("vllm bench serve · random") and row["partial"] is None
    assert row["single"] == entry.runs[-1].level(1).generation_tps


def test_a_partial_run_never_hides_a_complete_one(tmp_path):
    from catalogue.models.loading import load_entry
    from catalogue.site.compare import Member
    from catalogue.site.index_page import index_rows
    from tests.workload_support import import_three_workloads

    _, folder = import_three_workloads(tmp_path)
    _with_partial_run(folder)
    entry = load_entry(folder)
    assert not entry.latest.complete  # the newest run stopped part-way
    page = render_recipe(entry).markdown()
    first = _sections(page)[0]
    assert "987.6" not in first and "170.5" in first and "partial run" not in first
    history = page.split('id="run-history"')[1]
    partial_row = next(r for r in history.split("<tr") if "987.6" in r)
    assert "partial run: the server died at c=2" in partial_row
    row = index_rows([entry])[0]
    assert row["single"] != 987.6 and row["partial"] is None
    assert Member(entry, "x", 1).run.complete


def test_a_lone_partial_run_is_shown_and_marked(tmp_path):
    from catalogue.models.loading import load_entry
    from catalogue.site.index_page import index_rows
    from tests.workload_support import import_three_workloads

    _, folder = import_three_workloads(tmp_path)
    data = _with_partial_run(folder)
    data["workload"]["input_len"] = 32  # a workload of its own: no complete run of it exists
    stamp = data["recorded_at"].replace("-", "").replace(":", "")
    (folder / "runs" / f"{stamp}.json").write_text(json.dumps(data))
    entry = load_entry(folder)
    first = _sections(render_recipe(entry).markdown())[0]
    assert "prompt 32 / output 16" in first.split("</h3>")[0]
    assert "partial run: the server died at c=2" in first and "987.6" in first
    row = index_rows([entry])[0]
    assert row["partial"] == "partial run: the server died at c=2"
    index = build_pages([entry])["index.md"].markdown()
    assert 'class="rc-partial"' in index and "partial run: the server died at c=2" in index


def test_history_says_which_workload_and_its_best_figure(tmp_path):
    from catalogue.models.loading import load_entry
    from catalogue.site.history import history_rows
    from catalogue.site.run_charts import history_charts
    from tests.workload_support import import_three_workloads

    _, folder = import_three_workloads(tmp_path)
    _with_partial_run(folder)
    pp64 = sorted((folder / "runs").glob("*.json"))[0]
    older = json.loads(pp64.read_text())
    older["recorded_at"], older["label"] = "2026-11-01T00:00:00Z", "an older pp64 run"
    older["provenance"]["source_date"] = "2026-11-01"  # an import's source is never dated after its recording
    (folder / "runs" / "20261101T000000Z.json").write_text(json.dumps(older))
    entry = load_entry(folder)
    rows = history_rows(entry)
    assert [r.workload.split(" ·")[0] for r in rows] == ["vllm bench serve"] * 2 + ["llama-benchy 0.4.0"] * 3
    assert [r.metric.name for r in rows] == ["generation_tps"] * 5
    assert rows[0].partial and not rows[0].shown and rows[1].shown
    (chart,) = history_charts(entry)  # only pp64 has two runs with a sweep; the partial run has one level
    title = html.unescape(re.search(r'class="rc-chart-title">([^<]*)<', chart).group(1))
    assert "prompt 64 / output 128 tokens" in title and chart.count('<button type="button" class="rc-key"') == 2
    page = render_recipe(entry).markdown().split('id="run-history"')[1]
    assert "prompt 128 / output 128 tokens" in page and "prompt 64 / output 128 tokens" in page


def test_index_filters_and_sorts_by_what_a_reader_chooses(entries):
    from catalogue.site.index_page import SORTS, index_rows
    from catalogue.site.view import model_family

    assert [model_family(m) for m in ("openai/gpt-oss-120b", "Qwen/Qwen3-30B-A3B", "meta-llama/Llama-3.3-70B")] == [
        "gpt-oss",
        "Qwen3",
        "Llama-3.3",
    ]
    seeds = [e for i, e in entries.items() if i in SEEDS]
    rows = {r["title"]: r for r in index_rows(seeds)}
    cluster = rows[entries["gptoss-120b-topology-cluster-tp2"].recipe.title]
    assert cluster["nodes"] == 2 and cluster["per_node"] == round(cluster["best"] / 2, 1)
    index = build_pages(seeds)["index.md"].markdown()
    header = index.split("<thead>")[1].split("</thead>")[0]
    for th in re.findall(r"<th[^>]*>.*?</th>", header):
        assert "title=" in th, th  # every column says what it measures
    for key, _ in SORTS:
        assert f'data-key="{key}"' in header
    assert 'data-filter="family"' in index and 'data-filter="nodes"' in index and 'data-filter="memory"' in index


def test_the_recipe_names_its_headline_workload(tmp_path):
    from catalogue.models.loading import load_entry
    from catalogue.site import view
    from tests.workload_support import import_three_workloads

    _, folder = import_three_workloads(tmp_path)
    entry = load_entry(folder)
    pp64 = view.workloads(entry)[2]
    named = entry.recipe.model_copy(update={"headline_workload": pp64.workload})
    chosen = type(entry)(entry.id, entry.folder, named, entry.runs, entry.platform)
    assert view.workloads(chosen)[0].key == pp64.key and view.headline_run(chosen) is pp64.run
    assert "prompt 64 / output 128 tokens" in _sections(render_recipe(chosen).markdown())[0].split("</h3>")[0]


def test_index_quotes_capacity_with_its_objective(capacity_entry, entries):
    import dataclasses

    from catalogue.site.index_page import index_rows

    (row,) = index_rows([capacity_entry])
    assert (row["capacity"], row["capacity_text"], row["capacity_slo"]) == (
        2.875,
        "2.875",
        "p95 TTFT ≤ 1 s and p95 TPOT ≤ 50 ms",
    )
    assert row["capacity_workload"] is None  # the figures and the capacity come from the same run
    published = dataclasses.replace(capacity_entry, recipe=capacity_entry.recipe.model_copy(update={"publish": True}))
    index = build_pages([published, entries["gptoss-120b"]])["index.md"].markdown()
    header = index.split("<thead>")[1].split("</thead>")[0]
    assert (
        '<th scope="col" data-sort="num" data-key="capacity"><abbr title="Requests per second the recipe served'
        in header
    )
    cells = re.findall(
        r'<td data-label="Capacity \(req/s\)" data-value="([^"]*)"(?: class="rc-empty")?>(.*?)</td>', index
    )
    assert sorted((v, " ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split())) for v, c in cells) == [
        ("", "—"),
        ("2.875", "2.875 p95 TTFT ≤ 1 s, TPOT ≤ 50 ms"),
    ]
    assert 'title="within p95 TTFT ≤ 1 s and p95 TPOT ≤ 50 ms"' in html.unescape(index)
    unpinned = dataclasses.replace(
        published,
        runs=[
            published.runs[0].model_copy(
                update={"capacity": published.runs[0].capacity.model_copy(update={"converged": False})}
            )
        ],
    )
    assert index_rows([unpinned])[0]["capacity_text"] == "≥ 2.875"


def test_a_shared_page_is_made_again_only_when_a_member_entry_or_its_links_change(entries):
    """SharedPages (a serve process's model and comparison pages): the page made last time is handed back while it
    is made from the very same entry objects and other arguments; a new entry object or other links make it anew."""
    members = [entries["gptoss-120b"], entries["qwen35-35b-a3b-bf16"]]
    made = []

    def make():
        made.append(1)
        return render_model("openai/gpt-oss-120b", members, [])

    shared = SharedPages()
    page = shared.job("models/x.md", members, [], make)()
    shared.remember({"models/x.md": page})
    assert shared.job("models/x.md", list(members), [], make)() is page and len(made) == 1
    shared.remember({"models/x.md": page})
    changed = [members[0], dataclasses.replace(members[1])]  # the same values, another object: a re-read file
    assert shared.job("models/x.md", changed, [], make) is make
    assert shared.job("models/x.md", members, [("dgx-spark", "compare/x.md")], make) is make
    assert shared.job("models/y.md", members, [], make) is make
