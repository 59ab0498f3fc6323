"""Writing the report: :func:`write_report` renders ``report.md`` and ``report.html`` from the
results tree and replaces the files atomically.

Part of :mod:`privpub.plots.report`; what the report shows and why: docs/design.md ("Report").
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from privpub.errors import PrivpubError

from .html import render_html
from .markdown import render_markdown
from .results_tree import collect

__all__ = ["REPORT_NAME", "HTML_NAME", "write_report"]

REPORT_NAME = "report.md"
HTML_NAME = "report.html"


def _write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename: concurrent multirun jobs never see half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_report(results_dir: Path, *, title: str = "privpub results", html: bool = True) -> Path:
    """Write ``results_dir/report.md`` and (by default) ``results_dir/report.html``.

    Reads every experiment directory under ``results_dir`` (see :func:`collect`; the layout:
    docs/design.md, "Report"): per experiment and scale its ``meta.json``, figures, ``claims.json``,
    paper tables (``<table>.csv``), ``notes.md``, ``summary.md`` and variants. Nothing is
    read from the result store and nothing is recomputed; a missing or malformed file is
    reported in the report, never raised.

    Parameters
    ----------
    results_dir : pathlib.Path
        The results directory (e.g. ``results/``).
    title : str
        First heading of the report.
    html : bool, default True
        Also write the self-contained ``report.html``.

    Returns
    -------
    pathlib.Path
        The path of ``report.md`` (``report.html`` is written beside it).

    Raises
    ------
    PrivpubError
        If ``results_dir`` is not an existing directory.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise PrivpubError(f"results directory {str(results_dir)!r} does not exist")
    experiments = collect(results_dir)
    report = results_dir / REPORT_NAME
    _write_atomic(report, render_markdown(experiments, results_dir, title=title))
    if html:
        _write_atomic(results_dir / HTML_NAME, render_html(experiments, results_dir, title=title))
    return report
