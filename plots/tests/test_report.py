"""write_report and markdown_table."""

import pandas as pd
import pytest

from plots.lines import plot_lines, summary_table
from plots.report import markdown_table, write_report
from privpub.errors import PrivpubError


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


def test_report_lists_experiments_figures_notes_and_summaries(tmp_path):
    plot_lines(frame(), x="epsilon", metric="l1", out_stem=tmp_path / "day2016_fig3" / "l1")
    plot_lines(frame(), x="epsilon", metric="l1", out_stem=tmp_path / "day2016_fig3" / "ks")
    (tmp_path / "day2016_fig3" / "notes.md").write_text("Differs: 5 reps instead of 30.\n")
    (tmp_path / "qardaji2012 fig1").mkdir()
    (tmp_path / "qardaji2012 fig1" / "summary.md").write_text(
        markdown_table(summary_table(frame(), x="epsilon", metric="l1"))
    )
    (tmp_path / ".hydra").mkdir()

    report = write_report(tmp_path)
    assert report == tmp_path / "report.md"
    text = report.read_text()
    assert "## day2016_fig3" in text and "## qardaji2012 fig1" in text
    assert ".hydra" not in text
    assert "![ks](day2016_fig3/ks.png)" in text
    assert "![l1](day2016_fig3/l1.png)" in text
    assert "[l1.pdf](day2016_fig3/l1.pdf)" in text
    assert text.index("ks.png") < text.index("l1.png")
    assert "Differs: 5 reps instead of 30." in text
    assert "| dataset | series | 1 | 2 |" in text
    assert "| d1 | s | 0.4 | 0.2 |" in text
    # each figure link resolves relative to the report
    for line in text.splitlines():
        if line.startswith("![") and "%20" not in line:
            assert (tmp_path / line.split("](")[1].rstrip(")")).exists()
    # the experiment without figures says so
    section = text.split("## qardaji2012 fig1")[1]
    assert "_No figures._" in section


def test_report_per_scale_subdirectories(tmp_path):
    # the runner's layout: results/<experiment>/<scale>/{*.png, summary.md, notes.md, store/}
    exp = tmp_path / "epasto2022_fig3c"
    for scale in ("smoke", "paper"):
        plot_lines(frame(), x="epsilon", metric="l1", out_stem=exp / scale / "jaccard_vs_epsilon")
        (exp / scale / "summary.md").write_text(f"summary of {scale}\n")
        (exp / scale / "store").mkdir()
        (exp / scale / "store" / "part-0.parquet").write_bytes(b"")
    (exp / "smoke" / "notes.md").write_text("smoke uses a 64-node SBM\n")
    text = write_report(tmp_path).read_text()
    section = text.split("## epasto2022_fig3c")[1]
    assert section.index("### paper") < section.index("### smoke")
    paper, smoke = section.split("### smoke")
    assert "![jaccard_vs_epsilon](epasto2022_fig3c/paper/jaccard_vs_epsilon.png)" in paper
    assert "summary of paper" in paper and "smoke uses" not in paper
    assert "![jaccard_vs_epsilon](epasto2022_fig3c/smoke/jaccard_vs_epsilon.png)" in smoke
    assert "#### Notes" in smoke and "smoke uses a 64-node SBM" in smoke
    assert "store" not in section


def test_report_quotes_paths_with_spaces(tmp_path):
    plot_lines(frame(), x="epsilon", metric="l1", out_stem=tmp_path / "my exp" / "fig a")
    text = write_report(tmp_path).read_text()
    assert "![fig a](my%20exp/fig%20a.png)" in text


def test_report_empty_and_missing(tmp_path):
    assert "_No experiment directories found._" in write_report(tmp_path).read_text()
    with pytest.raises(PrivpubError, match="does not exist"):
        write_report(tmp_path / "nope")


def test_markdown_table_escapes_pipes():
    md = markdown_table(pd.DataFrame({"a": ["x|y"], "b": [1]}), index=False)
    assert md.splitlines() == ["| a | b |", "|---|---|", "| x\\|y | 1 |"]
