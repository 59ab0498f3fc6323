"""The results report: every experiment's figures, paper claims, tables and notes on one page.

:func:`write_report` reads what the runner and the plots wrote under ``results/`` and writes
``results/report.md`` and the self-contained ``results/report.html``, without reading the
result store or recomputing anything. The layout it reads, how table cells are flagged and
why the report looks as it does: docs/design.md ("Report").

Modules: :mod:`~privpub.plots.report.results_tree` reads the results tree (:func:`collect`),
:mod:`~privpub.plots.report.deviation_rows` picks each paper's deviation rows,
:mod:`~privpub.plots.report.privacy` the claimed and audited privacy,
:mod:`~privpub.plots.report.markdown` and :mod:`~privpub.plots.report.html` render the two views
(``report.css`` and ``report.js`` are inlined into the page), :mod:`~privpub.plots.report.text`
holds
the texts both share and :mod:`~privpub.plots.report.write` writes the files. (No module is named
after a function it holds, so ``privpub.plots.report.collect`` is the function.)
"""

from .deviation_rows import Deviation, deviation_cells, deviations
from .html import render_html
from .markdown import render_markdown
from .results_tree import DEFAULT_TOLERANCE, Experiment, PaperTable, Run, collect, experiment_dirs
from .text import markdown_table
from .write import write_report

__all__ = [
    "write_report",
    "markdown_table",
    "experiment_dirs",
    "collect",
    "render_markdown",
    "render_html",
    "Run",
    "Experiment",
    "Deviation",
    "deviations",
    "deviation_cells",
    "PaperTable",
    "DEFAULT_TOLERANCE",
]
