"""write_report (report.md + report.html), collect and markdown_table."""

import json
import re

import pandas as pd
import pytest

from privpub.errors import PrivpubError
from privpub.plots.lines import plot_lines, summary_table
from privpub.plots.report import collect, markdown_table, write_report


def frame():
    return pd.DataFrame(
        {
            "dataset": ["d1", "d1", "d2", "d2"],
            "series": "s",
            "epsilon": [1.0, 2.0, 1.0, 2.0],
            "metric": "l1",
            "value": [0.4, 0.2, 0.5, 0.3],
            "status": "ok",
        }
    )


CLAIMS = [
    {
        "id": "cumulative_beats_flowgraph",
        "text": "θ-CumulativeHistogram has a lower L1 error than Flowgraph",
        "source": "Sec 4.3, Fig. 3",
        "kind": "compare",
        "metric": "l1",
        "verdict": "held",
        "summary": "held in 8 of 8 groups; closest: facebook ε=0.1: 0.95 vs 1.02 (ratio 0.93)",
        "n_held": 8,
        "n_groups": 8,
        "tolerance": 0.05,
        "holds_in": "all",
        "deviation": None,
        "groups": [
            {
                "group": {"dataset": "facebook", "epsilon": 0.1},
                "ours": 0.95,
                "other": 1.02,
                "ratio": 0.93,
                "held": True,
            }
        ],
    },
    {
        "id": "rps_beats_hay_emd",
        "text": "RPS has a lower EMD than Hay et al.",
        "source": "Sec 5.2, Fig. 5",
        "kind": "compare",
        "metric": "emd",
        "verdict": "not held",
        "summary": "held in 1 of 4 groups; worst: dblp ε=1: 3.71 vs 2.05 (ratio 1.81)",
        "n_held": 1,
        "n_groups": 4,
        "tolerance": 0.0,
        "holds_in": "all",
        "deviation": "our Hay uses the exact degree bound",
        "groups": [
            {
                "group": {"dataset": "dblp", "epsilon": 1},
                "ours": 3.71,
                "other": 2.05,
                "ratio": 1.81,
                "held": False,
            }
        ],
    },
    {
        "id": "table2_values",
        "text": "Table 2's L1 errors",
        "source": "Table 2",
        "kind": "table",
        "plot": "table2",
        "verdict": "not evaluated",
        "summary": "no group has the numbers: the paper's datasets are absent",
        "n_held": 0,
        "n_groups": 0,
        "tolerance": 0.25,
    },
]


def write_run(run, *, scale="paper", claims=CLAIMS, figures=("l1_vs_epsilon",), meta=None):
    """One results/<experiment>/<scale>/ directory as the runner writes it."""
    run.mkdir(parents=True, exist_ok=True)
    for name in figures:
        plot_lines(frame(), x="epsilon", metric="l1", out_stem=run / name)
    base = {
        "experiment": run.parent.name,
        "paper": "day2016",
        "title": "Fig. 3: L1 vs epsilon",
        "scale": scale,
        "cells": 48,
        "repetitions": 30,
        "trials": 1440,
        "ok": 1430,
        "skipped": 10,
        "failed": 0,
        "privacy": "node-DP",
        "drawn_at": "2026-11-23T16:00:00",
        "variant": None,
        "overrides": [],
        "figures": list(figures),
        "tables": ["table2"],
        "seconds": {"total": 123.4, "per_trial": 0.08},
    }
    (run / "meta.json").write_text(json.dumps({**base, **(meta or {})}))
    if claims is not None:
        (run / "claims.json").write_text(json.dumps(claims))
    pd.DataFrame(
        {
            "dataset": ["facebook", "dblp"],
            "16 T ours": ["3,900", "100"],
            "16 T paper": ["3,828", "400"],
            "16 FG ours": ["0.5", "7"],
            "16 FG paper": ["0.5", ""],
        }
    ).to_csv(run / "table2.csv", index=False)
    (run / "table2.md").write_text("# t\n\n## Table 2: L1 at epsilon 1\n\n| a |\n|---|\n| 1 |\n")
    (run / "summary.md").write_text(
        f"# {run.parent.name} [{scale}]\n\nFig. 3\n\n"
        + markdown_table(summary_table(frame(), x="epsilon", metric="l1"))
    )
    (run / "notes.md").write_text(
        "## Differences\n\n- 5 reps instead of 30 <script>alert(1)</script>\n"
        "- see [the table](table2.md) and ![a figure](l1_vs_epsilon.png)\n"
        "- remote ![logo](https://example.org/logo.png)\n\n"
        "| dataset | nodes |\n|---|---|\n| facebook | 4039 |\n"
    )
    return run


@pytest.fixture
def tree(tmp_path):
    """A results tree: day2016_fig3 at paper and smoke scale with a variant, qardaji2012_fig5
    (old layout, no meta.json), an experiment with malformed JSON files, and .hydra."""
    fig3 = tmp_path / "day2016_fig3"
    paper = write_run(fig3 / "paper")
    write_run(paper / "variants" / "dataset=karate", meta={"variant": "dataset=karate"})
    write_run(fig3 / "smoke", scale="smoke", claims=[dict(CLAIMS[0], verdict="not evaluated")])
    old = tmp_path / "qardaji2012_fig5" / "small"
    old.mkdir(parents=True)
    plot_lines(frame(), x="epsilon", metric="l1", out_stem=old / "emd_vs_epsilon")
    (old / "summary.md").write_text("# qardaji2012_fig5 [small]\n\nFig. 5: EMD\n\n## emd\n")
    bad = tmp_path / "epasto2022_fig3c" / "paper"
    bad.mkdir(parents=True)
    (bad / "meta.json").write_text('{"paper": "epasto2022", ')
    (bad / "claims.json").write_text("[1, 2")
    (tmp_path / ".hydra").mkdir()
    (tmp_path / "_tmp").mkdir()
    return tmp_path


def test_markdown_lists_every_claim_with_its_verdict_and_numbers(tree):
    report = write_report(tree)
    assert report == tree / "report.md"
    text = report.read_text()
    fig3 = text.split("### day2016_fig3 [paper]")[1].split("### day2016_fig3 [smoke]")[0]
    rows = {
        line.split("|")[1].strip(" `"): line for line in fig3.splitlines() if line.startswith("| `")
    }
    assert set(rows) == {"cumulative_beats_flowgraph", "rps_beats_hay_emd", "table2_values"}
    not_held = rows["rps_beats_hay_emd"]
    assert "not held" in not_held and "held in 1 of 4 groups" in not_held
    assert "dblp ε=1: 3.71 vs 2.05 (ratio 1.81)" in not_held
    assert "our Hay uses the exact degree bound" in not_held and "Sec 5.2, Fig. 5" in not_held
    assert "not held" not in rows["cumulative_beats_flowgraph"]
    assert "✅ held" in rows["cumulative_beats_flowgraph"]
    assert "not evaluated" in rows["table2_values"]


def test_markdown_overview_counts_and_order(tree):
    text = write_report(tree).read_text()
    overview = text.split("## Overview")[1].split("\n## ")[0]
    # papers in the fixed order: qardaji2012, epasto2022, day2016
    assert overview.index("### qardaji2012") < overview.index("### epasto2022")
    assert overview.index("### epasto2022") < overview.index("### day2016")
    row = next(line for line in overview.splitlines() if line.startswith("| [day2016_fig3]"))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert cells[1] == "Fig. 3: L1 vs epsilon" and cells[2] == "paper, smoke"
    # paper: its own verdicts, then its variant's, as the run that drew each printed them
    assert cells[3] == ("1 held · 1 not held · 1 not evaluated; "
                        "variant dataset=karate: 1 held · 1 not held · 1 not evaluated")
    assert cells[4] == "–"  # small: not run
    assert cells[5] == "0 held · 0 not held · 1 not evaluated"  # smoke
    old = next(line for line in overview.splitlines() if "qardaji2012_fig5" in line)
    assert "Fig. 5: EMD" in old and "no claims" in old  # title read from summary.md
    bad = next(line for line in overview.splitlines() if "epasto2022_fig3c" in line)
    assert "claims.json unreadable" in bad


def test_markdown_sections_figures_tables_notes_variants(tree):
    text = write_report(tree).read_text()
    assert ".hydra" not in text and "_tmp" not in text
    sections = text.split("\n### ")
    heads = [s.splitlines()[0] for s in sections[1:]]
    fig3 = [h for h in heads if h.startswith("day2016_fig3")]
    assert fig3 == ["day2016_fig3 [paper]", "day2016_fig3 [smoke]"]
    paper = text.split("### day2016_fig3 [paper]")[1].split("### day2016_fig3 [smoke]")[0]
    smoke = text.split("### day2016_fig3 [smoke]")[1]
    assert "![l1_vs_epsilon](day2016_fig3/paper/l1_vs_epsilon.png)" in paper
    assert "[l1_vs_epsilon.pdf](day2016_fig3/paper/l1_vs_epsilon.pdf)" in paper
    assert "1440 trials: 1430 ok, 10 skipped, 0 failed" in paper
    # the table: ours / paper = ratio, flagged beyond the table claim's 25 %
    assert "⚠ beyond ±25 % (claim table2_values): 1 of 3 flagged" in paper
    assert "| facebook | 3,900 / 3,828 = 1.02 | 0.5 / 0.5 = 1 |" in paper
    assert "| dblp | **100 / 400 = 0.25** ⚠ | 7 |" in paper
    # notes: headings demoted under the run, relative links rebased onto the report
    assert "###### Differences" in paper
    assert "[the table](day2016_fig3/paper/table2.md)" in paper
    assert "![logo](https://example.org/logo.png)" in paper  # md keeps it, html does not load it
    assert "[summary.md](day2016_fig3/paper/summary.md)" in paper
    assert "- [dataset=karate](day2016_fig3/paper/variants/dataset%3Dkarate/summary.md)" in paper
    assert "variants/dataset%3Dkarate/l1_vs_epsilon.png" not in text  # linked, not shown
    assert "toy data, not for conclusions" in smoke.split("####")[0]
    assert "toy data" not in paper


def test_missing_and_malformed_files_degrade_with_a_message(tree):
    text = write_report(tree).read_text()
    bad = text.split("### epasto2022_fig3c [paper]")[1].split("\n## ")[0]
    assert "meta.json: malformed JSON" in bad and "claims.json: malformed JSON" in bad
    assert "_No figures._" in bad
    old = text.split("### qardaji2012_fig5 [small]")[1].split("\n## ")[0]
    assert "no meta.json" in old and "![emd_vs_epsilon]" in old
    html = (tree / "report.html").read_text()
    assert "meta.json: malformed JSON" in html and "claims.json: malformed JSON" in html
    # a figure listed in meta.json but missing, a listed table without files, a wrong type
    run = tree / "day2016_fig3" / "paper"
    meta = json.loads((run / "meta.json").read_text())
    meta.update(figures=["l1_vs_epsilon", "gone"], tables=["table2", "nope"])
    (run / "meta.json").write_text(json.dumps(meta))
    (tree / "day2016_fig3" / "smoke" / "claims.json").write_text('{"id": 1}')
    text = write_report(tree).read_text()
    assert "figure 'gone' is listed in meta.json but gone.png is missing" in text
    assert "table 'nope' is listed in meta.json but nope.csv is missing" in text
    assert "claims.json: expected a list, got dict; ignored" in text


def test_html_is_self_contained_and_shows_verdicts(tree):
    write_report(tree)
    page = (tree / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    # no external resources: no remote src/href for assets, no stylesheet or script files
    assert not re.search(r'src="(?:https?:)?//', page)
    assert not re.search(r"<link[^>]+href=", page)
    assert not re.search(r"<script[^>]+src=", page)
    assert "url(http" not in page and "@import" not in page
    # day2016_fig3's figure and its notes' image at paper and smoke, the old layout's figure
    assert page.count('src="data:image/png;base64,') == 5
    assert "external image, not loaded" in page
    assert "variants/dataset%3Dkarate/l1_vs_epsilon.png" in page  # variant: a link
    # markdown rendered, raw HTML escaped
    assert "<td>facebook</td>" in page and "<td>4039</td>" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)" in page
    # the not-held claim: a red badge, its numbers and its failing group
    row = page.split(">rps_beats_hay_emd</td>")[1].split('<td class="id">')[0]
    assert 'class="badge b-nh">not held<' in row
    assert "dblp ε=1: 3.71 vs 2.05 (ratio 1.81)" in row and "1 of 4 groups" in row
    assert "dataset=dblp, epsilon=1" in row and '<td class="bad">no</td>' in row
    held = page.split(">cumulative_beats_flowgraph</td>")[1].split('<td class="id">')[0]
    assert 'class="badge b-held">held<' in held and "b-nh" not in held
    # overview badges: counts per scale
    overview = page.split('id="overview"')[1].split("</section>")[0]
    fig3 = next(r for r in overview.split("<tr") if "day2016_fig3" in r)
    assert ">1 held<" in fig3 and ">1 not held<" in fig3 and fig3.count(">1 not evaluated<") == 3
    assert 'variant <a href="#day2016_fig3-paper">dataset=karate</a>:' in fig3
    # the paper table: the flagged cell is marked
    table = page.split('<table class="paper">')[1].split("</table>")[0]
    assert table.count('class="flag"') == 1
    flagged = table.split('class="flag"')[1].split("</td>")[0]
    assert ">100<" in flagged and "paper 400" in flagged and "×0.25" in flagged
    # a table of toc with every experiment and the smoke warning
    toc = page.split('<nav id="toc">')[1].split("</nav>")[0]
    for name in ("day2016_fig3", "qardaji2012_fig5", "epasto2022_fig3c"):
        assert f'href="#{name}"' in toc and f'id="{name}"' in page
    assert "toy data, not for conclusions" in page


def test_collect_reads_runs_in_scale_order(tree):
    exps = collect(tree)
    assert [e.name for e in exps] == ["qardaji2012_fig5", "epasto2022_fig3c", "day2016_fig3"]
    fig3 = exps[2]
    assert [r.scale for r in fig3.runs] == ["paper", "smoke"]
    assert fig3.runs[0].counts == {"held": 1, "not held": 1, "not evaluated": 1}
    assert [v.path.name for v in fig3.runs[0].variants] == ["dataset=karate"]
    assert fig3.paper == "day2016" and exps[0].paper == "qardaji2012"  # from the name


def test_old_flat_layout_and_paths_with_spaces(tmp_path):
    plot_lines(frame(), x="epsilon", metric="l1", out_stem=tmp_path / "my exp" / "fig a")
    (tmp_path / "my exp" / "notes.md").write_text("Differs: 5 reps instead of 30.\n")
    text = write_report(tmp_path).read_text()
    assert "![fig a](my%20exp/fig%20a.png)" in text
    assert "Differs: 5 reps instead of 30." in text
    assert "other experiments" in text  # no paper key in the name
    page = (tmp_path / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 1


def test_report_empty_and_missing(tmp_path):
    assert "_No experiment directories found._" in write_report(tmp_path).read_text()
    assert "No experiment directories found." in (tmp_path / "report.html").read_text()
    with pytest.raises(PrivpubError, match="does not exist"):
        write_report(tmp_path / "nope")


def test_markdown_table_escapes_pipes():
    md = markdown_table(pd.DataFrame({"a": ["x|y"], "b": [1]}), index=False)
    assert md.splitlines() == ["| a | b |", "|---|---|", "| x\\|y | 1 |"]


def test_tables_as_plots_tables_writes_them(tmp_path):
    """The CSVs of plots.tables.paper_table: flagged beyond the default tolerance; running-time
    tables (with paper/ours) are shown but not flagged."""
    from privpub.plots.tables import paper_table

    rows = pd.DataFrame(
        {
            "dataset": ["facebook"] * 4 + ["dblp"] * 4,
            "label": ["A", "A", "B", "B"] * 2,
            "cell": ["c1", "c1", "c2", "c2", "c3", "c3", "c4", "c4"],
            "rep": [0, 1] * 4,
            "metric": "l1",
            "value": [10.0, 10.0, 2.0, 2.0, 1000.0, 1000.0, 5.0, 5.0],
            "seconds": [0.5] * 8,
            "status": "ok",
        }
    )
    run = tmp_path / "day2016_table2" / "paper"
    run.mkdir(parents=True)
    columns = {"label": ["A", "B"]}
    paper = {"facebook": [10.5, 1.0], "dblp": [1000, None]}
    paper_table(rows, rows=["dataset"], columns=columns, paper=paper).to_csv(
        run / "table2.csv", index=False
    )
    times = paper_table(
        rows,
        rows=["dataset"],
        columns=columns,
        value="seconds",
        ratio=True,
        stat="median",
        paper={"facebook": [79.4, 75.0], "dblp": [100, 100]},
    )
    times.to_csv(run / "table3.csv", index=False)
    # a table plot with a tolerance flags its cells itself (an ours/paper column with ✗)
    flagged = paper_table(rows, rows=["dataset"], columns=columns, paper=paper, tolerance=0.5)
    flagged.to_csv(run / "table4.csv", index=False)
    text = write_report(tmp_path).read_text()
    assert "⚠ beyond ±10 % (default: no table claim states one): 1 of 3 flagged" in text
    assert "| facebook | 10 / 10.5 = 0.952 | **2 / 1 = 2** ⚠ |" in text
    assert "| dblp | 1000 / 1000 = 1 | 5 |" in text
    assert "(running times on different machines: not flagged)" in text
    assert "| facebook | 0.5 / 79.4 = 0.0063 | 0.5 / 75 = 0.00667 |" in text
    assert "⚠ beyond the table plot's tolerance (✗ in table4.csv): 1 of 3 flagged" in text
    assert "| facebook | 10 / 10.5 = 0.95 | **2 / 1 = 2.00** ⚠ |" in text
    page = (tmp_path / "report.html").read_text()
    assert page.count('class="flag"') == 2


def test_scale_with_only_variants(tmp_path):
    """A sweep draws into a variant only: the report shows that variant in full (its
    figures, claims and notes), not a bare link under "No figures"."""
    run = tmp_path / "day2016_fig3" / "smoke"
    write_run(run / "variants" / "mechanism=truncation", scale="smoke", claims=[])
    text = write_report(tmp_path).read_text()
    section = text.split("### day2016_fig3 [smoke]\n")[1]
    assert "no meta.json" not in section and "⚠" not in section.split("### ")[0]
    assert "Drawn into variants only (a sweep or a one-off run): mechanism=truncation." in section
    variant = text.split("### day2016_fig3 [smoke] variant mechanism=truncation")[1]
    assert "![l1_vs_epsilon](day2016_fig3/smoke/variants/mechanism%3Dtruncation/" in variant
    assert "_claims.json lists no claim._" in variant
    assert "| [day2016_fig3](#day2016_fig3) | Fig. 3: L1 vs epsilon | smoke |" in text
    page = (tmp_path / "report.html").read_text()
    assert page.count("data:image/png") == 2  # its figure and its notes' image
    assert 'id="day2016_fig3-smoke-mechanism-truncation"' in page
    assert "No figures." not in page


# --------------------------------------------------------------------------- deviations
DEVIATION = {
    "id": "rps_beats_hay_emd",
    "text": "RPS has a lower EMD than Hay et al.",
    "source": "Sec 5.2, Fig. 5",
    "kind": "compare",
    "metric": "emd_p2",
    "verdict": "not held",
    "summary": "held in 22 of 56 groups; worst: unc28 ε=10: 4,223 vs Hay et al. 72.6",
    "n_held": 22,
    "n_groups": 56,
    "deviation": "leaf-count noise exceeds the counts up to ε ≈ 10",
    "groups": [],
    "paper_reading": {"series": "RPS [paper's removal-only sensitivity, not DP]",
                      "verdict": "not held", "summary": "held in 53 of 56 groups",
                      "n_held": 53, "n_groups": 56, "groups": []},
    "noise_free": {"epsilon": [10], "verdict": "not held", "summary": "held in 0 of 8",
                   "n_held": 0, "n_groups": 8, "groups": []},
    "focus": {"group": {"dataset": "unc28", "degree_bound": "n_minus_1", "epsilon": 10},
              "ours": 4222.78, "other": 72.56, "ratio": 58.2, "held": False,
              "than": "Hay et al.",
              "paper_reading": {"group": {"dataset": "unc28", "epsilon": 10}, "ours": 20.29,
                                "other": 72.56, "ratio": 0.28, "held": True},
              "noise_free": {"group": {"dataset": "unc28", "degree_bound": "n_minus_1"},
                             "ours": 104.95, "other": 0, "ratio": None, "held": False}},
}


def deviation_tree(tmp_path):
    held = dict(CLAIMS[0])
    write_run(tmp_path / "qardaji2012_fig5" / "paper", claims=[DEVIATION, held],
              meta={"paper": "qardaji2012"})
    write_run(tmp_path / "qardaji2012_fig5" / "smoke", scale="smoke",
              claims=[dict(DEVIATION, id="smoke_only")], meta={"paper": "qardaji2012"})
    write_run(tmp_path / "day2016_fig3" / "small", scale="small", claims=[held])
    return tmp_path


def test_deviations_section_per_paper_with_every_column(tmp_path):
    root = deviation_tree(tmp_path)
    md = write_report(root).read_text()
    assert "## Deviations: qardaji2012" in md
    assert "## Deviations: day2016" not in md  # its only claim holds, states no deviation
    section = md.split("## Deviations: qardaji2012")[1].split("\n## ")[0]
    row = next(line for line in section.splitlines() if "rps_beats_hay_emd" in line)
    for text in ("4223 vs Hay et al. 72.56", "unc28", "22 of 56",
                 "RPS [paper's removal-only sensitivity, not DP]: 20.29 vs Hay et al. 72.56",
                 "53 of 56", "105 vs Hay et al. 0 at ε=10", "ours: not held",
                 "reading: not held", "noise-free: not held",
                 "leaf-count noise exceeds the counts"):
        assert text in row, text
    assert "smoke_only" not in md.split("## Deviations")[1].split("\n## qardaji2012_fig5")[0]
    assert "cumulative_beats_flowgraph" not in section  # held, no deviation: not a row


def test_deviations_in_html(tmp_path):
    root = deviation_tree(tmp_path)
    write_report(root)
    page = (root / "report.html").read_text()
    assert 'id="deviations-qardaji2012"' in page
    assert "Deviations: qardaji2012" in page
    start = page.index('id="deviations-qardaji2012"')
    block = page[start: page.index("</article>", start)]
    assert "rps_beats_hay_emd" in block and "not DP" in block
    assert "reading: not held" in block and "noise-free: not held" in block
    assert 'href="#deviations-qardaji2012"' in page  # linked from the contents


def test_deviation_cells_without_reading_or_twins():
    from privpub.plots.report import Deviation, Experiment, Run, deviation_cells

    claim = {"id": "c", "text": "t", "kind": "value", "verdict": "not held",
             "n_held": 0, "n_groups": 3, "deviation": None,
             "focus": {"group": {"dataset": "d"}, "ours": 7893.0, "other": 10, "held": False}}
    exp = Experiment("qardaji2012_fig5", path=None, runs=[])
    cells = deviation_cells(Deviation(exp, Run(path=None, scale="paper"), claim))
    assert cells["ours"].startswith("7893 (paper 10)")
    assert cells["reading"] == "–" and cells["noise_free"] == "–"
    assert cells["cause"] == "no cause stated"


def test_page_inlines_the_packaged_css_and_js(tree):
    from importlib.resources import files

    write_report(tree)
    page = (tree / "report.html").read_text(encoding="utf-8")
    for name, tag in (("report.css", "style"), ("report.js", "script")):
        text = files("privpub.plots.report").joinpath(name).read_text(encoding="utf-8")
        assert text.strip() and f"<{tag}>\n{text}</{tag}>" in page


def test_public_names_are_the_functions_not_modules():
    from privpub.plots import report

    for name in report.__all__:
        assert not isinstance(getattr(report, name), type(report)), name


def test_a_sweep_drawn_into_a_variant_is_counted_as_the_run_printed_it(tmp_path):
    """A multirun draws into a variant only; the overview said "no claims" while the run
    printed "4 held, 10 not held". Both read and count claims.json the same way."""
    from privpub.experiments.cli import closing_line

    variant = tmp_path / "day2016_fig3" / "smoke" / "variants" / "mechanism.epsilon=0.5,2"
    write_run(variant, scale="smoke")
    printed = closing_line([variant, variant], tmp_path)  # two seeds, one directory
    assert "privpub: claims: 1 held, 1 not held, 1 not evaluated;" in printed
    md = write_report(tmp_path).read_text()
    row = next(line for line in md.split("## Overview")[1].splitlines()
               if line.startswith("| [day2016_fig3]"))
    assert row.split("|")[-2].strip() == (
        "variant mechanism.epsilon=0.5,2: 1 held · 1 not held · 1 not evaluated")
    page = (tmp_path / "report.html").read_text()
    overview = page.split('id="overview"')[1].split("</section>")[0]
    assert "no claims" not in overview
    assert ">1 held<" in overview and ">1 not held<" in overview
    assert "mechanism.epsilon=0.5,2</a>:" in overview


def test_the_deviation_column_is_filled_or_absent(tmp_path):
    """report.html's deviation column was empty for the default job: it is shown only when a
    claim of the run has a cause (a stated deviation, the noise test, or none stated)."""
    held = [dict(CLAIMS[0])]
    write_run(tmp_path / "default" / "small", scale="small", claims=held)
    md = write_report(tmp_path).read_text()
    assert "| claim | the paper says | verdict | numbers |\n" in md
    page = (tmp_path / "report.html").read_text()
    assert "<th>deviation</th>" not in page and 'class="dev"' not in page
    missed = dict(CLAIMS[1], deviation=None)
    write_run(tmp_path / "default" / "small", scale="small", claims=[*held, missed])
    md = write_report(tmp_path).read_text()
    assert "| claim | the paper says | verdict | numbers | deviation |" in md
    assert "no cause stated" in md
    page = (tmp_path / "report.html").read_text()
    assert "<th>deviation</th>" in page and '<td class="dev">no cause stated</td>' in page


def test_claim_rows_say_which_series_each_verdict_is_about(tmp_path):
    """Rows that quote one sentence of a paper were told apart only by their verdicts: the
    about column shows each row's subject (claims.json ``subject``); claims.json written
    by older code has none, and the column is then absent."""
    text = "Our two proposed methods and the variant all perform better than Flowgraph"
    rows = [dict(CLAIMS[0], id=f"{s}_l1", text=text, subject=f"{s} vs Flowgraph on l1",
                 verdict=v) for s, v in (("θ-Cumulative", "held"), ("θ-Constrained", "not held"))]
    write_run(tmp_path / "default" / "small", scale="small", claims=rows)
    md = write_report(tmp_path).read_text()
    assert "| claim | the paper says | about | verdict | numbers |" in md
    assert "| θ-Constrained vs Flowgraph on l1 | ❌ **not held** |" in md
    page = (tmp_path / "report.html").read_text()
    assert "<th>about</th>" in page
    assert '<td class="about">θ-Cumulative vs Flowgraph on l1</td>' in page
    write_run(tmp_path / "default" / "small", scale="small", claims=[dict(CLAIMS[0])])
    assert "| claim | the paper says | verdict | numbers |" in write_report(tmp_path).read_text()
    assert "<th>about</th>" not in (tmp_path / "report.html").read_text()


def test_a_refuted_claim_is_said_above_the_figures(tmp_path):
    entry = {"series": "my_trunc_hist_bad", "mechanism": "my_trunc_hist_bad",
             "privacy": "node-DP", "epsilons": [1.0], "caveat": None, "verdict": "violated",
             "epsilon_lower_bound": 3.26, "mode": "quick", "witness_id": "6dded3c9bf74",
             "error": True}
    held = dict(entry, series="my_trunc_hist", verdict="holds", epsilon_lower_bound=0.75,
                error=False)
    write_run(tmp_path / "day2016_fig3" / "small", scale="small",
              meta={"series_privacy": [entry, held]})
    md = write_report(tmp_path).read_text()
    line = ("Privacy claim refuted by the stored audit: my_trunc_hist_bad (node-DP: ε ≥ 3.26 "
            "at ε = 1); marked [claim refuted by audit] in the figures.")
    assert f"> ⚠ {line}" in md and "my_trunc_hist (" not in md
    page = (tmp_path / "report.html").read_text()
    assert f'<p class="warn">{line}</p>' in page
