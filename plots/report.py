"""The results report: one markdown page indexing every experiment's figures and notes.

``results/<experiment>/`` (or one subdirectory of it per scale, ``<experiment>/<scale>/``,
as the runner writes) holds what the runner and the plots wrote for one experiment: figures
(``*.png``, with a ``*.pdf`` twin), an optional ``summary.md`` (tables of means and
deviations, e.g. from :func:`plots.lines.summary_table`, rendered with :func:`markdown_table`
or ``to_string()``) and an optional ``notes.md`` (where and why the reproduction differs
from the paper). :func:`write_report` collects them into ``results/report.md`` without
reading or recomputing any result.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pandas as pd

from privpub.errors import PrivpubError

__all__ = ["write_report", "markdown_table", "experiment_dirs"]

REPORT_NAME = "report.md"


def experiment_dirs(results_dir: Path) -> list[Path]:
    """The experiment directories under ``results_dir``: its non-hidden subdirectories, sorted."""
    return sorted(
        p for p in Path(results_dir).iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
    )


def _link(path: Path, base: Path) -> str:
    """A relative, URL-quoted link from ``base`` to ``path`` (safe for spaces)."""
    return quote(path.relative_to(base).as_posix())


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8").rstrip() + "\n"


def _run_dirs(exp: Path) -> list[Path]:
    """Directories under ``exp`` (itself included) that hold a figure, summary or notes.

    The runner writes one such directory per scale (``<experiment>/<scale>/``); files placed
    directly in the experiment directory count too. Hidden directories are skipped.
    """
    found = set()
    for path in exp.rglob("*"):
        rel = path.relative_to(exp).parts
        if any(part.startswith(".") for part in rel):
            continue
        if path.is_file() and (path.suffix.lower() == ".png" or path.name in _TEXTS):
            found.add(path.parent)
    return sorted(found, key=lambda d: d.relative_to(exp).parts)


_TEXTS = ("summary.md", "notes.md")


def _section(run: Path, results_dir: Path, level: str) -> list[str]:
    out = []
    figures = sorted(p for p in run.iterdir() if p.is_file() and p.suffix.lower() == ".png")
    if figures:
        out += [f"{level} Figures", ""]
        for png in figures:
            out.append(f"![{png.stem}]({_link(png, results_dir)})")
            pdf = png.with_suffix(".pdf")
            if pdf.exists():
                out.append(f"[{pdf.name}]({_link(pdf, results_dir)})")
            out.append("")
    else:
        out += ["_No figures._", ""]
    for fname, heading in (("summary.md", "Summary"), ("notes.md", "Notes")):
        path = run / fname
        if path.is_file():
            out += [f"{level} {heading}", "", _read(path)]
    return out


def write_report(results_dir: Path, *, title: str = "privpub results") -> Path:
    """Write ``results_dir/report.md`` listing every experiment, its figures, summary and notes.

    For each experiment directory (see :func:`experiment_dirs`), in name order, and each
    directory inside it that holds figures or texts (the runner writes one per scale,
    ``<experiment>/<scale>/``; files directly in the experiment directory count too): every
    PNG embedded as a relative markdown image (with a link to its PDF twin when there is
    one), then ``summary.md`` and ``notes.md`` included verbatim when present. Nothing is
    read from the result store and nothing is recomputed.

    Parameters
    ----------
    results_dir : pathlib.Path
        The results directory (e.g. ``results/``).
    title : str
        First heading of the report.

    Returns
    -------
    pathlib.Path
        The path of the written report.

    Raises
    ------
    PrivpubError
        If ``results_dir`` is not an existing directory.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise PrivpubError(f"results directory {str(results_dir)!r} does not exist")
    experiments = experiment_dirs(results_dir)
    out = [f"# {title}", ""]
    if not experiments:
        out += ["_No experiment directories found._", ""]
    else:
        out += ["Experiments:", ""]
        out += [f"- {d.name}" for d in experiments]
        out.append("")
    for exp in experiments:
        out += [f"## {exp.name}", ""]
        runs = _run_dirs(exp)
        if not runs:
            out += ["_No figures._", ""]
        elif runs == [exp]:
            out += _section(exp, results_dir, "###")
        else:
            for run in runs:
                name = run.relative_to(exp).as_posix() if run != exp else "(top level)"
                out += [f"### {name}", ""]
                out += _section(run, results_dir, "####")
    report = results_dir / REPORT_NAME
    report.write_text("\n".join(out).rstrip() + "\n", encoding="utf-8")
    return report


def _escape(cell) -> str:
    return str(cell).replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: pd.DataFrame, *, index: bool = True) -> str:
    """Render a DataFrame (e.g. :func:`plots.lines.summary_table`) as a GitHub markdown table.

    Index levels become the leading columns when ``index`` is True.
    """
    if index:
        frame = frame.reset_index()
    header = [_escape(c) for c in frame.columns]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * len(header)) + "|",
    ]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_escape(c) for c in row) + " |")
    return "\n".join(lines) + "\n"
