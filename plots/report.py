"""The results report: every experiment's figures, paper claims, tables and notes on one page.

:func:`write_report` reads what the runner and the plots wrote under ``results/`` and
writes two views of it, without reading the result store or recomputing anything:

- ``results/report.md``: an overview (per paper, per experiment: its title, the scales
  present and the claim verdicts per scale), then one section per experiment and scale;
- ``results/report.html``: the same as one self-contained page (figures embedded as
  base64 PNG data URIs, CSS and a few lines of JavaScript inline, no external request),
  for a reader who opens it in a browser to compare the whole reproduction with the papers.

The layout read (every file optional; a missing or malformed one is reported in the
report, never raised)::

    results/<experiment>/<scale>/           scale: paper | small | smoke (others sorted after)
        meta.json     {"experiment", "paper", "title", "scale", "cells", "repetitions",
                       "tasks", "ok", "skipped", "failed", "privacy", "drawn_at",
                       "variant", "overrides", "figures", "tables", "seconds": {...}}
        <figure>.png / .pdf                 one per name in meta["figures"] (else every *.png)
        <table>.csv / .md                   ours beside the paper (plots.tables.paper_table)
        summary.md    mean ± error tables, claims, skipped cells
        claims.json   claim verdicts (docs/claims.md, "Output")
        notes.md      where the reproduction differs from the paper and why
        variants/<slug>/                    one-off runs: listed and linked, not included

Files placed directly in ``results/<experiment>/`` (the layout before scales) are read as
one run without a scale. Hidden and underscore directories (``.hydra``) are skipped.

Table cells are shown as ``ours / paper = ratio`` (ratio = ours ÷ paper) and flagged when
``|ratio - 1|`` exceeds the tolerance of the experiment's ``table`` claim for that table
(:data:`DEFAULT_TOLERANCE` when no claim states one). Running-time tables (those with a
``paper/ours`` column: different machines) are not flagged unless a claim states a tolerance.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import re
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

import pandas as pd

from privpub.errors import PrivpubError
from privpub.papers import PAPERS, paper_citation
from privpub.results import SCALES, VERDICTS

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

REPORT_NAME = "report.md"
HTML_NAME = "report.html"

#: Scales in report order (largest first); any other scale directory follows, sorted, then a
#: run without scale.
REPORT_SCALES = tuple(reversed(SCALES))
#: Relative tolerance for flagging a table cell when no ``table`` claim states one.
DEFAULT_TOLERANCE = 0.10
SMOKE_WARNING = "toy data, not for conclusions"
#: Height (CSS px) at which the HTML page shows figures side by side; click one to enlarge it.
FIGURE_HEIGHT = 240

_SKIP_DIRS = {"store", "variants"}
_RUN_FILES = ("meta.json", "claims.json", "summary.md", "notes.md")


# --------------------------------------------------------------------------------------
# Reading the results tree
# --------------------------------------------------------------------------------------


@dataclass
class PaperTable:
    """One table of ours beside the paper's numbers, parsed from ``<name>.csv``.

    ``keys`` name the row columns; ``columns`` the column labels (one per published cell
    position); ``rows`` hold, per row, the key values and a list of
    ``(ours, paper, ours/paper, flagged)`` per column (numbers as printed: strings).
    ``markdown`` is the raw ``<name>.md`` when the CSV could not be parsed.
    """

    name: str
    title: str = ""
    keys: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[list[str], list[tuple[str, str, str, bool]]]] = field(default_factory=list)
    tolerance: float | None = None
    rule: str = ""  # when a cell is flagged, e.g. "beyond ±10 % (claim table2_values)"
    reason: str = ""  # why cells are not flagged, when rule is empty
    markdown: str | None = None
    csv: Path | None = None
    md: Path | None = None

    @property
    def n_flagged(self) -> int:
        return sum(cell[3] for _, cells in self.rows for cell in cells)

    @property
    def n_compared(self) -> int:
        return sum(bool(cell[2]) for _, cells in self.rows for cell in cells)


@dataclass
class Run:
    """What one ``<experiment>/<scale>/`` (or variant) directory holds."""

    path: Path
    scale: str  # "" for files directly in the experiment directory
    meta: dict = field(default_factory=dict)
    claims: list[dict] | None = None  # None: no claims.json (or unreadable)
    figures: list[Path] = field(default_factory=list)
    tables: list[PaperTable] = field(default_factory=list)
    summary: Path | None = None
    notes: str | None = None
    variants: list[Run] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def counts(self) -> Counter:
        """Claim verdicts counted (``held`` / ``not held`` / ``not evaluated``)."""
        return Counter(_verdict(c) for c in self.claims or [])


@dataclass
class Experiment:
    name: str
    path: Path
    runs: list[Run]
    paper: str | None = None
    title: str = ""


def experiment_dirs(results_dir: Path) -> list[Path]:
    """The experiment directories under ``results_dir``: its non-hidden subdirectories, sorted."""
    return sorted(
        p for p in Path(results_dir).iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
    )


def _natural(text: str) -> list:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", text)]


def _scale_rank(scale: str) -> tuple:
    if scale in REPORT_SCALES:
        return (0, REPORT_SCALES.index(scale), "")
    return (1, 0, scale) if scale else (2, 0, "")


def _read_text(path: Path, problems: list[str], label: str) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{label}: could not be read ({type(exc).__name__}: {exc})")
        return None


def _read_json(path: Path, problems: list[str], label: str):
    text = _read_text(path, problems, label)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(f"{label}: malformed JSON ({exc}); ignored")
        return None


def _is_run_dir(path: Path) -> bool:
    try:
        if any((path / f).is_file() for f in _RUN_FILES) or (path / "variants").is_dir():
            return True
        return any(p.suffix.lower() in (".png", ".csv") for p in path.iterdir() if p.is_file())
    except OSError:
        return False


def _read_meta(run: Run) -> None:
    path = run.path / "meta.json"
    if not path.is_file():
        run.problems.append("no meta.json (written by an older runner?): files listed as found")
        return
    meta = _read_json(path, run.problems, "meta.json")
    if meta is None:
        return
    if not isinstance(meta, dict):
        run.problems.append(f"meta.json: expected an object, got {type(meta).__name__}; ignored")
        return
    run.meta = meta


def _names(run: Run, key: str) -> list[str] | None:
    """``meta[key]`` as a list of plain file stems, or None when meta does not list them."""
    value = run.meta.get(key)
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        run.problems.append(f"meta.json: {key!r} is not a list; files listed as found")
        return None
    return [Path(str(v)).name for v in value]


def _read_figures(run: Run) -> None:
    names = _names(run, "figures")
    if names is None:
        run.figures = sorted(
            (p for p in run.path.iterdir() if p.is_file() and p.suffix.lower() == ".png"),
            key=lambda p: _natural(p.name),
        )
        return
    for name in names:
        png = run.path / f"{name}.png"
        if png.is_file():
            run.figures.append(png)
        else:
            run.problems.append(f"figure {name!r} is listed in meta.json but {png.name} is missing")


def _read_claims(run: Run) -> None:
    path = run.path / "claims.json"
    if not path.is_file():
        return
    data = _read_json(path, run.problems, "claims.json")
    if isinstance(data, dict) and isinstance(data.get("claims"), list):
        data = data["claims"]
    if data is None:
        return
    if not isinstance(data, list):
        run.problems.append(f"claims.json: expected a list, got {type(data).__name__}; ignored")
        return
    claims = [c for c in data if isinstance(c, dict)]
    if len(claims) < len(data):
        run.problems.append(
            f"claims.json: {len(data) - len(claims)} entry(ies) not objects; ignored"
        )
    run.claims = claims


def _verdict(claim: dict) -> str:
    raw = str(claim.get("verdict") or "").strip().lower().replace("_", " ").replace("-", " ")
    return raw if raw in VERDICTS else "not evaluated"


def _number(text) -> float | None:
    if text is None:
        return None
    cleaned = str(text).strip().replace(",", "").rstrip("x×").strip()
    if not cleaned:
        return None
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _claim_tolerance(run: Run, name: str, n_tables: int) -> tuple[float | None, str]:
    """The tolerance of the ``table`` claim about table ``name`` and that claim's id.

    A claim names its table with ``plot`` (or ``table``); a claim naming none is taken to be
    about the run's only table. ``(None, "")`` when no claim says.
    """
    table_claims = [c for c in run.claims or [] if str(c.get("kind")) == "table"]
    named = [c for c in table_claims if name in (c.get("plot"), c.get("table"))]
    unnamed = [c for c in table_claims if not c.get("plot") and not c.get("table")]
    for claim in named or (unnamed if len(unnamed) == 1 and n_tables == 1 else []):
        tol = _number(claim.get("tolerance"))
        if tol is not None:
            return tol, f"claim {claim.get('id', '?')}"
    return None, ""


def _ratio_text(ours: float | None, paper: float | None) -> str:
    """``ours / paper`` as the tables print it (1 when both are 0, ∞ when only the paper's is)."""
    if ours is None or paper is None:
        return ""
    if paper == 0:
        return "1" if ours == 0 else "∞"
    return f"{ours / paper:.3g}"


def _parse_table(run: Run, name: str, n_tables: int) -> PaperTable:
    table = PaperTable(name=name)
    csv, md = run.path / f"{name}.csv", run.path / f"{name}.md"
    table.csv = csv if csv.is_file() else None
    table.md = md if md.is_file() else None
    if table.md is not None:
        text = _read_text(md, run.problems, md.name) or ""
        headings = [ln.lstrip("#").strip() for ln in text.splitlines() if ln.startswith("## ")]
        table.title = headings[0] if headings else ""
    frame = None
    if table.csv is not None:
        try:
            frame = pd.read_csv(csv, dtype=str, keep_default_na=False)
        except Exception as exc:  # noqa: BLE001 - any parse failure is reported, not raised
            run.problems.append(f"{csv.name}: could not be parsed ({type(exc).__name__}: {exc})")
    elif table.md is None:
        run.problems.append(f"table {name!r} is listed in meta.json but {name}.csv is missing")
        return table
    ours_cols = [c for c in (frame.columns if frame is not None else []) if c.endswith(" ours")]
    if frame is None or not ours_cols:
        if table.md is not None:
            table.markdown = _read_text(md, [], md.name)
        elif frame is not None:
            table.markdown = markdown_table(frame, index=False)
        return table
    subs = ("paper", "paper/ours", "ours/paper")
    extra = {f"{c[:-5]} {suffix}" for c in ours_cols for suffix in subs}
    table.keys = [c for c in frame.columns if c not in ours_cols and c not in extra]
    table.columns = [c[:-5] for c in ours_cols]
    written = any(f"{c} ours/paper" in frame.columns for c in table.columns)
    timing = any(f"{c} paper/ours" in frame.columns for c in table.columns)
    tol, claim = _claim_tolerance(run, name, n_tables)
    if written:  # the table plot flagged its cells itself (its own tolerance): trust them
        table.rule = f"beyond the table plot's tolerance (✗ in {csv.name})"
    elif tol is not None:
        table.tolerance, table.rule = tol, f"beyond ±{tol * 100:g} % ({claim})"
    elif timing:
        table.rule, table.reason = "", "running times on different machines: not flagged"
    else:
        tol = table.tolerance = DEFAULT_TOLERANCE
        table.rule = f"beyond ±{tol * 100:g} % (default: no table claim states one)"
    for _, row in frame.iterrows():
        cells = []
        for col in table.columns:
            ours = str(row.get(f"{col} ours", ""))
            paper = str(row.get(f"{col} paper", "")) if f"{col} paper" in frame.columns else ""
            if written:
                mark = str(row.get(f"{col} ours/paper", ""))
                ratio, flagged = mark.replace("✗", "").strip(), "✗" in mark
            else:
                ratio = _ratio_text(_number(ours), _number(paper))
                value = _number(ratio) if ratio != "∞" else math.inf
                flagged = bool(ratio) and tol is not None and not abs(value - 1) <= tol + 1e-12
            cells.append((ours, paper, ratio, flagged))
        table.rows.append(([str(row[k]) for k in table.keys], cells))
    return table


def _read_tables(run: Run) -> None:
    names = _names(run, "tables")
    if names is None:
        names = sorted({p.stem for p in run.path.glob("*.csv")}, key=_natural)
    for name in names:
        run.tables.append(_parse_table(run, name, len(names)))


def _read_run(path: Path, scale: str, *, variants: bool = True) -> Run:
    run = Run(path=path, scale=scale)
    try:
        if not any(p.is_file() for p in path.iterdir()):
            only = variants and (path / "variants").is_dir()
            run.problems.append("nothing drawn here: only one-off variants" if only else "empty")
        else:
            _read_meta(run)
        _read_figures(run)
        _read_claims(run)
        _read_tables(run)
        if (path / "summary.md").is_file():
            run.summary = path / "summary.md"
        if (path / "notes.md").is_file():
            run.notes = _read_text(path / "notes.md", run.problems, "notes.md")
        vdir = path / "variants"
        if variants and vdir.is_dir():
            for sub in sorted(vdir.iterdir(), key=lambda p: _natural(p.name)):
                if sub.is_dir() and not sub.name.startswith((".", "_")):
                    run.variants.append(_read_run(sub, scale, variants=False))
    except OSError as exc:  # a directory changed under us (a run writing): report, go on
        run.problems.append(f"could not be read completely ({type(exc).__name__}: {exc})")
    return run


def _title_from_summary(path: Path | None) -> str:
    """The line after summary.md's first heading (the runner writes the spec's title there)."""
    if path is None:
        return ""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    for line in lines[1:6]:
        if line.startswith("#") or line.startswith("```") or line.startswith("|"):
            return ""
        if line.strip():
            return line.strip()
    return ""


def _paper_of(name: str, metas: list[dict]) -> str | None:
    for meta in metas:
        if meta.get("paper"):
            return str(meta["paper"])
    prefix = name.split("_")[0]
    return prefix if re.fullmatch(r"[a-z]+\d{4}", prefix) else None


def collect(results_dir: Path) -> list[Experiment]:
    """Read every experiment under ``results_dir`` (see the module docstring for the layout).

    Experiments come in report order: papers as in :data:`PAPERS`, then any other paper,
    then experiments without a paper; within a paper in natural name order. Runs of an
    experiment come paper, small, smoke, other scales, then files without a scale.
    """
    experiments = []
    for exp in experiment_dirs(results_dir):
        runs = []
        if _is_run_dir(exp):
            runs.append(_read_run(exp, ""))
        try:
            subdirs = sorted(p for p in exp.iterdir() if p.is_dir())
        except OSError:
            subdirs = []
        for sub in subdirs:
            if sub.name.startswith((".", "_")) or sub.name in _SKIP_DIRS:
                continue
            if _is_run_dir(sub):
                runs.append(_read_run(sub, sub.name))
        runs.sort(key=lambda r: _scale_rank(r.scale))
        metas = [r.meta for r in runs] + [v.meta for r in runs for v in r.variants]
        title = next((str(m["title"]) for m in metas if m.get("title")), "")
        if not title:
            title = next((t for t in (_title_from_summary(r.summary) for r in runs) if t), "")
        experiments.append(
            Experiment(
                name=exp.name, path=exp, runs=runs, paper=_paper_of(exp.name, metas), title=title
            )
        )

    def order(e: Experiment):
        if e.paper in PAPERS:
            rank = (0, list(PAPERS).index(e.paper), "")
        elif e.paper:
            rank = (1, 0, e.paper)
        else:
            rank = (2, 0, "")
        return (rank, _natural(e.name))

    return sorted(experiments, key=order)


def _by_paper(experiments: list[Experiment]) -> list[tuple[str | None, list[Experiment]]]:
    groups: dict[str | None, list[Experiment]] = {}
    for exp in experiments:
        groups.setdefault(exp.paper, []).append(exp)
    return list(groups.items())


def _scales(experiments: list[Experiment]) -> list[str]:
    found = {r.scale for e in experiments for r in e.runs}
    return sorted(found | set(REPORT_SCALES), key=_scale_rank)


# --------------------------------------------------------------------------------------
# Shared formatting
# --------------------------------------------------------------------------------------


def _link(path: Path, base: Path) -> str:
    """A relative, URL-quoted link from ``base`` to ``path`` (safe for spaces)."""
    return quote(path.relative_to(base).as_posix())


def _scale_label(scale: str) -> str:
    return scale or "no scale"


def _run_heading(exp: Experiment, run: Run) -> str:
    return f"{exp.name} [{run.scale}]" if run.scale else exp.name


def _anchor(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(p for p in parts if p)).strip("-") or "x"


def _gh_anchor(heading: str) -> str:
    """The anchor GitHub (and most renderers) derive from a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _fmt(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)
        return f"{value:.4g}" if isinstance(value, float) else str(value)
    return str(value)


def _group_text(group) -> str:
    if isinstance(group, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in group.items()) or "(all)"
    return _fmt(group)


def _of_groups(claim: dict) -> str:
    return f"{_fmt(claim.get('n_held'))} of {_fmt(claim.get('n_groups'))}"


def _tol_text(value) -> str:
    tol = _number(value)
    return f"{tol * 100:g} %" if tol else ""  # 0: strict, the default: not worth a mention


def _count_text(run: Run) -> str:
    if run.claims is None:
        return (
            "claims.json unreadable"
            if any(p.startswith("claims.json") for p in run.problems)
            else "no claims"
        )
    if not run.claims:
        return "no claims"
    counts = run.counts
    return " · ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS)


def _meta_line(run: Run) -> str:
    m = run.meta
    parts = []
    if m.get("tasks") is not None:
        cells, reps = _fmt(m.get("cells")), _fmt(m.get("repetitions"))
        t = f"{cells} cells × {reps} reps = {_fmt(m['tasks'])} tasks"
        done = [f"{_fmt(m[k])} {k}" for k in ("ok", "skipped", "failed") if m.get(k) is not None]
        parts.append(t + (": " + ", ".join(done) if done else ""))
    if m.get("privacy"):
        parts.append(f"privacy: {m['privacy']}")
    if m.get("drawn_at"):
        parts.append(f"drawn {str(m['drawn_at']).replace('T', ' ')}")
    seconds = m.get("seconds")
    if isinstance(seconds, dict) and seconds.get("total") is not None:
        per = seconds.get("per_task")
        parts.append(f"{_fmt(seconds['total'])} s" + (f" ({_fmt(per)} s/task)" if per else ""))
    if m.get("overrides"):
        ov = m["overrides"]
        parts.append("overrides: " + (", ".join(map(str, ov)) if isinstance(ov, list) else str(ov)))
    return " · ".join(parts)


_FENCE = re.compile(r"^\s*(```|~~~)")
_MD_LINK = re.compile(r"(!?\[[^\]\n]*\]\()([^)\s]+)")
_ABSOLUTE = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|#|/)")


def _outside_fences(text: str, fix) -> str:
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            out.append(line)
        else:
            out.append(line if fenced else fix(line))
    return "\n".join(out)


def _adapt_markdown(text: str, *, demote: int, prefix: str) -> str:
    """Shift headings by ``demote`` levels and make relative links relative to the report."""

    def fix(line: str) -> str:
        m = re.match(r"^(#{1,6})(\s)", line)
        if m and demote:
            line = "#" * min(6, len(m.group(1)) + demote) + line[len(m.group(1)) :]
        if prefix:
            line = _MD_LINK.sub(
                lambda k: (
                    k.group(1)
                    + (k.group(2) if _ABSOLUTE.match(k.group(2)) else f"{prefix}/{k.group(2)}")
                ),
                line,
            )
        return line

    return _outside_fences(text.strip("\n"), fix)


def _md_cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


# --------------------------------------------------------------------------------------
# Deviations: where a claim is not borne out, with the paper's reading and the noise-free limit
# --------------------------------------------------------------------------------------


@dataclass
class Deviation:
    """One row of a paper's "Deviations" section: a claim of ``run`` that is not held, or
    that states a known deviation (``deviation:``) or a paper-reading series."""

    experiment: Experiment
    run: Run
    claim: dict

    @property
    def focus(self) -> dict:
        focus = self.claim.get("focus")
        return focus if isinstance(focus, dict) else {}


def _is_deviation(claim: dict) -> bool:
    return (
        _verdict(claim) == "not held"
        or bool(claim.get("deviation"))
        or bool(claim.get("paper_reading"))
    )


def deviations(experiments: list[Experiment]) -> list[Deviation]:
    """Every deviation row of ``experiments``, from each experiment's most complete run
    (paper scale if drawn, else small, ...; never smoke: toy data), in report order."""
    out = []
    for exp in experiments:
        run = next((r for r in exp.runs if r.scale != "smoke" and r.claims), None)
        if run is None:
            continue
        out += [Deviation(exp, run, c) for c in run.claims if _is_deviation(c)]
    return out


def _pair_text(kind, d: dict | None, than=None) -> str:
    """A group's numbers as a claim of ``kind`` compares them."""
    if not d or d.get("ours") is None:
        return "–"
    ours, other = _fmt(d.get("ours")), _fmt(d.get("other"))
    if kind == "value" or kind == "table":
        return f"{ours} (paper {other})"
    if kind == "bound":
        return f"{ours} (bound {other})"
    if kind == "trend":
        return f"{other} → {ours}"
    rival = d.get("than") or than
    return f"{ours} vs {rival} {other}" if rival else f"{ours} vs {other}"


def _verdict_of(sub) -> str:
    return _verdict(sub) if isinstance(sub, dict) else "not evaluated"


def deviation_cells(dev: Deviation) -> dict:
    """The texts of one deviation row: ``claim``, ``ours``, ``reading``, ``noise_free``,
    ``verdict`` (ours, and the reading's and noise-free verdicts), ``cause``."""
    c, f = dev.claim, dev.focus
    kind = str(c.get("kind") or "")
    group = _group_text(f.get("group")) if f.get("group") else ""
    ours = _pair_text(kind, f)
    if group:
        ours += f" [{group}]"
    ours += f"; held in {_of_groups(c)}" if c.get("n_groups") else ""
    reading = c.get("paper_reading")
    if isinstance(reading, dict):
        head = str(reading.get("series") or "paper's reading")
        if f.get("paper_reading"):
            text = _pair_text(kind, f["paper_reading"], f.get("than"))
        else:
            text = str(reading.get("summary") or reading.get("reason") or "–")
        if reading.get("n_groups"):
            text += f"; held in {_of_groups(reading)}"
        reading_text = f"{head}: {text}"
    else:
        reading_text = "–"
    free = c.get("noise_free")
    if isinstance(free, dict):
        nf = f.get("noise_free")
        if nf:
            eps = (nf.get("group") or {}).get("epsilon")
            if eps is None and isinstance(free.get("epsilon"), list) and free["epsilon"]:
                eps = free["epsilon"][-1] if len(free["epsilon"]) == 1 else None
            text = _pair_text(kind, nf, f.get("than"))
            text += f" at ε={_fmt(eps)}" if eps is not None else ""
        elif _verdict_of(free) == "not evaluated":
            reason = str(free.get("reason") or "")
            text = "– (" + (reason[:70] + "…" if len(reason) > 70 else reason) + ")"
        else:
            text = str(free.get("summary") or "–")
        free_text = text
    else:
        free_text = "–"
    verdicts = [f"ours: {_verdict(c)}"]
    if isinstance(reading, dict):
        verdicts.append(f"reading: {_verdict_of(reading)}")
    if isinstance(free, dict):
        verdicts.append(f"noise-free: {_verdict_of(free)}")
    return {
        "claim": f"{c.get('id', '?')}: {c.get('text') or ''}",
        "where": f"{dev.experiment.name} [{_scale_label(dev.run.scale)}]",
        "ours": ours,
        "reading": reading_text,
        "noise_free": free_text,
        "verdict": "; ".join(verdicts),
        "cause": str(c.get("deviation") or _noise_cause(c)
                     or ("–" if _verdict(c) != "not held" else "no cause stated")),
    }


def _noise_cause(c: dict) -> str | None:
    """The computed noise test of a missed claim (experiments.claims._within_noise): how
    many missed groups are within two standard errors of holding."""
    k = c.get("n_missed_within_noise")
    missed = int(c.get("n_groups") or 0) - int(c.get("n_held") or 0)
    if k is None or missed <= 0:
        return None
    if k == missed:
        which = "the missed group is" if missed == 1 else f"all {missed} missed groups are"
        return f"noise (computed): {which} within two standard errors of holding"
    rest = missed - k
    return (f"computed: {k} of {missed} missed groups are within two standard errors of "
            f"holding; {rest} {'is' if rest == 1 else 'are'} beyond (a real difference)")


_DEV_INTRO = (
    "Each claim our reproduction does not bear out, or that states a known deviation: our "
    "number (the worst group), the paper's reading of the method in the same group (a "
    "non-private series where the paper's analysis does not hold: never a DP result), the "
    "noise-free limit (the same code with every noise primitive drawing zero, at the "
    "largest ε), the verdicts and the one-line cause; the evidence is in the experiment's "
    "notes."
)


# --------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------


def _md_overview(experiments: list[Experiment], scales: list[str]) -> list[str]:
    out = ["## Overview", ""]
    out += [
        "Claim verdicts per scale: held / not held / not evaluated (the paper's claims, "
        "checked on our results; see docs/claims.md). "
        f"Verdicts at smoke scale come from {SMOKE_WARNING}.",
        "",
    ]
    if not experiments:
        return out + ["_No experiment directories found._", ""]
    for paper, exps in _by_paper(experiments):
        name = f"{paper}: {paper_citation(paper)}" if paper in PAPERS else (
            paper or "other experiments")
        out += [f"### {name}", ""]
        head = ["experiment", "title", "scales"] + [f"claims at {_scale_label(s)}" for s in scales]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for exp in exps:
            by_scale = {r.scale: r for r in exp.runs}
            present = ", ".join(_scale_label(r.scale) for r in exp.runs) or "–"
            cells = [
                f"[{_md_cell(exp.name)}](#{_gh_anchor(exp.name)})",
                _md_cell(exp.title or "–"),
                present,
            ]
            for s in scales:
                run = by_scale.get(s)
                text = "–" if run is None else _count_text(run)
                if run is not None and _number(run.meta.get("failed")):
                    text += f" · **{_fmt(run.meta['failed'])} tasks failed**"
                cells.append(text)
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return out


_MD_VERDICT = {
    "held": "✅ held",
    "not held": "❌ **not held**",
    "not evaluated": "⚪ not evaluated",
}


def _md_deviations(experiments: list[Experiment]) -> list[str]:
    out = []
    rows = deviations(experiments)
    for paper, exps in _by_paper(experiments):
        mine = [d for d in rows if d.experiment in exps]
        if not mine:
            continue
        out += [f"## Deviations: {paper or 'other experiments'}", "", _DEV_INTRO, ""]
        head = ["claim", "experiment", "ours", "the paper's reading", "noise-free", "verdict",
                "cause"]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for d in mine:
            cells = deviation_cells(d)
            out.append("| " + " | ".join(_md_cell(cells[k]) for k in (
                "claim", "where", "ours", "reading", "noise_free", "verdict", "cause")) + " |")
        out.append("")
    return out


def _md_claims(run: Run) -> list[str]:
    if run.claims is None:
        return []
    out = ["#### Claims", ""]
    if not run.claims:
        return out + ["_claims.json lists no claim._", ""]
    if run.scale == "smoke":
        out += [f"_Smoke scale: {SMOKE_WARNING}._", ""]
    out += ["| claim | the paper says | verdict | numbers | deviation |", "|---|---|---|---|---|"]
    for c in run.claims:
        said = _md_cell(c.get("text") or "–")
        if c.get("source"):
            said += f" ({_md_cell(c['source'])})"
        numbers = _md_cell(c.get("summary") or "–")
        extra = []
        if c.get("n_groups") and _of_groups(c) not in str(c.get("summary") or ""):
            extra.append(_of_groups(c) + " groups")
        if _tol_text(c.get("tolerance")):
            extra.append(f"tolerance {_tol_text(c.get('tolerance'))}")
        if c.get("holds_in") not in (None, "all"):
            extra.append(f"holds in {_fmt(c['holds_in'])}")
        if extra:
            numbers += f" ({'; '.join(extra)})"
        out.append(
            f"| `{_md_cell(c.get('id', '?'))}` | {said} | {_MD_VERDICT[_verdict(c)]} | "
            f"{numbers} | {_md_cell(c.get('deviation') or '')} |"
        )
    return out + [""]


def _md_tables(run: Run, results_dir: Path) -> list[str]:
    if not run.tables:
        return []
    out = ["#### Tables", ""]
    for t in run.tables:
        links = [f"[{p.name}]({_link(p, results_dir)})" for p in (t.md, t.csv) if p is not None]
        out += [f"**{_md_cell(t.title or t.name)}** ({', '.join(links) or 'no file'})", ""]
        if t.markdown is not None:
            out += [_adapt_markdown(t.markdown, demote=3, prefix=""), ""]
            continue
        if not t.rows:
            continue
        if t.rule:
            out += [
                f"Cells: ours / paper = ours÷paper; ⚠ {t.rule}: "
                f"{t.n_flagged} of {t.n_compared} flagged.",
                "",
            ]
        else:
            out += [f"Cells: ours / paper = ours÷paper ({t.reason}).", ""]
        head = [*t.keys, *t.columns]
        out += ["| " + " | ".join(map(_md_cell, head)) + " |", "|" + "---|" * len(head)]
        for keys, cells in t.rows:
            shown = []
            for ours, paper, ratio, flagged in cells:
                text = ours or "–"
                if paper:
                    text += f" / {paper}"
                if ratio:
                    text += f" = {ratio}"
                shown.append(f"**{text}** ⚠" if flagged else text)
            out.append("| " + " | ".join(map(_md_cell, [*keys, *shown])) + " |")
        out.append("")
    return out


def _md_run(exp: Experiment, run: Run, results_dir: Path) -> list[str]:
    out = [f"### {_run_heading(exp, run)}", ""]
    if run.scale == "smoke":
        out += [f"> **Smoke scale: {SMOKE_WARNING}.**", ""]
    line = _meta_line(run)
    if line:
        out += [line, ""]
    for problem in run.problems:
        out.append(f"- ⚠ {problem}")
    if run.problems:
        out.append("")
    if run.figures:
        out += ["#### Figures", ""]
        for png in run.figures:
            out.append(f"![{png.stem}]({_link(png, results_dir)})")
            pdf = png.with_suffix(".pdf")
            if pdf.exists():
                out.append(f"[{pdf.name}]({_link(pdf, results_dir)})")
            out.append("")
    else:
        out += ["_No figures._", ""]
    out += _md_claims(run)
    out += _md_tables(run, results_dir)
    if run.notes:
        out += [
            "#### Notes",
            "",
            _adapt_markdown(run.notes, demote=4, prefix=_link(run.path, results_dir)),
            "",
        ]
    if run.summary is not None:
        out += [
            "Mean ± error tables and skipped cells: "
            f"[summary.md]({_link(run.summary, results_dir)})",
            "",
        ]
    if run.variants:
        out += ["#### Variants", ""]
        for v in run.variants:
            target = v.summary or (v.figures[0] if v.figures else v.path)
            counts = f" ({_count_text(v)})" if v.claims is not None else ""
            out.append(f"- [{_md_cell(v.path.name)}]({_link(target, results_dir)}){counts}")
        out.append("")
    return out


def render_markdown(
    experiments: list[Experiment], results_dir: Path, *, title: str = "privpub results"
) -> str:
    """The text of ``report.md`` for ``experiments`` (from :func:`collect`)."""
    out = [f"# {title}", ""]
    out += ["A self-contained page with every figure embedded: [report.html](report.html).", ""]
    out += _md_overview(experiments, _scales(experiments))
    out += _md_deviations(experiments)
    for exp in experiments:
        out += [f"## {exp.name}", ""]
        if exp.title:
            out += [_md_cell(exp.title), ""]
        if not exp.runs:
            out += ["_No figures._", ""]
        for run in exp.runs:
            out += _md_run(exp, run, results_dir)
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------

_e = html.escape

_CSS = """
:root{--held:#1a7f37;--held-bg:#dafbe1;--nh:#cf222e;--nh-bg:#ffebe9;--ne:#57606a;--ne-bg:#eaeef2;
--line:#d0d7de;--muted:#57606a;--bg:#f6f8fa;--card:#fff;--accent:#0969da}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;
color:#1f2328;background:var(--bg)}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
.layout{display:flex;align-items:flex-start}
nav#toc{position:sticky;top:0;height:100vh;overflow-y:auto;width:250px;flex:none;padding:16px 14px;
background:#fff;border-right:1px solid var(--line);font-size:13px}
nav#toc h2{font-size:14px;margin:0 0 8px}
nav#toc ul{list-style:none;margin:0;padding:0}
nav#toc li{margin:2px 0}
nav#toc .paper{margin-top:10px;font-weight:600;color:#1f2328}
nav#toc .exp{padding-left:8px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
nav#toc .scales{font-size:11px;color:var(--muted);padding-left:6px}
main{flex:1;min-width:0;padding:20px 28px 60px;max-width:1500px}
h1{margin:0 0 4px;font-size:26px}
h2{font-size:20px;margin:28px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:17px;margin:0 0 6px}
h4{font-size:15px;margin:0 0 8px}
h5{font-size:13px;margin:14px 0 6px;text-transform:uppercase;letter-spacing:.04em;
color:var(--muted)}
.lead{color:var(--muted);margin:0 0 14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 18px;
margin:0 0 18px;box-shadow:0 1px 2px rgba(0,0,0,.04)}
.card>.title{color:var(--muted);margin:0 0 10px}
.run{border-top:1px solid var(--line);padding-top:12px;margin-top:12px}
.run.smoke{background:repeating-linear-gradient(135deg,#fff,#fff 12px,#fffbe6 12px,#fffbe6 24px);
margin-left:-18px;margin-right:-18px;padding-left:18px;padding-right:18px}
.meta{color:var(--muted);font-size:12.5px;margin:0 0 8px}
.warn{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:6px 10px;margin:6px 0;
font-size:13px}
.problems{margin:6px 0;padding:6px 10px 6px 28px;background:#fff8c5;border:1px solid #d4a72c;
border-radius:6px;font-size:12.5px}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;
margin:1px 2px 1px 0;white-space:nowrap}
.b-held{color:var(--held);background:var(--held-bg)}
.b-nh{color:var(--nh);background:var(--nh-bg)}
.b-ne{color:var(--ne);background:var(--ne-bg)}
.b-none{color:var(--muted);font-weight:400;font-style:italic}
.b-fail{color:#fff;background:var(--nh)}
.b-toy{color:#7d4e00;background:#fff1c2;font-weight:500}
table{border-collapse:collapse;font-size:13px;margin:4px 0 10px}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--bg);font-weight:600}
.scroll{overflow-x:auto;max-width:100%}
table.overview{width:100%}
table.overview td.exp,table.overview td.sc{white-space:nowrap}
table.overview td.toy{opacity:.65}
table.overview tr.paper th{background:#eef1f4;font-size:13.5px;padding-top:8px}
table.claims{width:100%}
table.claims td.id{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;
white-space:nowrap}
table.claims td.num{font-size:12.5px}
table.claims tr.nh{background:#fff5f5}
table.deviations td{min-width:90px}
table.deviations td.reading{color:#6e40c9}
table.deviations span.id{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;
font-weight:600}
.dev-card{border-left:4px solid #d4a72c}
.src{color:var(--muted);font-size:12px}
.dev{color:#7d4e00;font-size:12.5px}
details{margin:4px 0}
details>summary{cursor:pointer;color:var(--accent);font-size:12.5px}
table.groups{font-size:12px}
table.groups td.bad{color:var(--nh);font-weight:600}
table.paper td{text-align:right;white-space:nowrap}
table.paper td.key{text-align:left}
table.paper .ours{font-weight:600}
table.paper .pp{color:var(--muted);font-size:11.5px}
table.paper .ratio{font-size:11.5px;color:var(--muted)}
table.paper td.flag{background:var(--nh-bg)}
table.paper td.flag .ratio{color:var(--nh);font-weight:700}
.figs{display:flex;flex-wrap:wrap;gap:12px;margin:4px 0 8px}
.figs figure{margin:0;flex:0 1 auto;max-width:100%;border:1px solid var(--line);border-radius:6px;
padding:6px;background:#fff}
.figs img{height:auto;max-width:100%;display:block;cursor:zoom-in}
.md img{max-width:100%;max-height:280px;cursor:zoom-in}
.md h1,.md h2,.md h3,.md h4,.md h5,.md h6{font-size:14px;margin:10px 0 4px;text-transform:none;
letter-spacing:0;color:#1f2328}
.figs figcaption{font-size:12px;color:var(--muted);margin-top:4px}
.md pre{background:var(--bg);padding:8px;border-radius:6px;overflow-x:auto;font-size:12px}
.md code{font-size:12px}
.md p{margin:6px 0}
.muted{color:var(--muted)}
#lightbox{position:fixed;inset:0;background:rgba(0,0,0,.82);display:flex;align-items:center;
justify-content:center;z-index:10;cursor:zoom-out}
#lightbox[hidden]{display:none}
#lightbox img{max-width:96vw;max-height:94vh;background:#fff}
@media (max-width:900px){nav#toc{display:none}main{padding:12px}}
@media print{nav#toc{display:none}.run.smoke{background:none}}
"""

_JS = """
(function(){var box=document.getElementById('lightbox'),big=box.querySelector('img');
document.addEventListener('click',function(e){var t=e.target;
if(t.matches&&t.matches('.figs img,.md img')){big.src=t.src;big.alt=t.alt;box.hidden=false;}
else if(t.closest&&t.closest('#lightbox')){box.hidden=true;big.src='';}});
document.addEventListener('keydown',function(e){if(e.key==='Escape'){box.hidden=true;big.src='';}});
})();
"""

_BADGE = {"held": "b-held", "not held": "b-nh", "not evaluated": "b-ne"}


def _badge(verdict: str, text: str | None = None) -> str:
    return f'<span class="badge {_BADGE[verdict]}">{_e(text or verdict)}</span>'


def _html_counts(run: Run) -> str:
    if run.claims is None:
        return f'<span class="badge b-none">{_e(_count_text(run))}</span>'
    counts = run.counts
    if not run.claims:
        return '<span class="badge b-none">no claims</span>'
    return "".join(_badge(v, f"{counts[v]} {v}") for v in VERDICTS if counts.get(v))


def _md_html(text: str) -> str:
    """Markdown → HTML with raw HTML escaped (``tables`` and ``fenced_code`` extensions)."""
    try:
        import markdown
    except ImportError:  # a dependency, but the report must not fail without it
        return f"<pre>{_e(text)}</pre>"
    md = markdown.Markdown(extensions=["tables", "fenced_code"], output_format="html")
    md.preprocessors.deregister("html_block")  # raw HTML blocks are text, escaped
    md.inlinePatterns.deregister("html")  # so is inline raw HTML
    return md.convert(text)


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return None


def _data_uri(path: Path) -> tuple[str, tuple[int, int] | None]:
    data = path.read_bytes()
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii"), _png_size(data)


_IMG = re.compile(r'<img alt="([^"]*)" src="([^"]*)"\s*/?>')


def _embed_md_images(fragment: str, results_dir: Path) -> str:
    """Embed relative PNG images of rendered notes; external images become plain links."""

    def repl(m: re.Match) -> str:
        alt, src = m.group(1), m.group(2)
        if src.startswith("data:"):
            return m.group(0)
        if _ABSOLUTE.match(src):
            return f'<a href="{src}">{alt or "image"} (external image, not loaded)</a>'
        path = results_dir / unquote(html.unescape(src))
        try:
            uri, _ = _data_uri(path) if path.suffix.lower() == ".png" else (None, None)
        except OSError:
            uri = None
        if uri is None:
            return f'<a href="{src}">{alt or src}</a>'
        return f'<img alt="{alt}" src="{uri}" style="max-width:100%">'

    return _IMG.sub(repl, fragment)


def _rendered(text: str, run: Run, results_dir: Path, demote: int) -> str:
    source = _adapt_markdown(text, demote=demote, prefix=_link(run.path, results_dir))
    return _embed_md_images(_md_html(source), results_dir)


def _html_overview(experiments: list[Experiment], scales: list[str]) -> list[str]:
    out = [
        '<section id="overview"><h2>Overview</h2>',
        '<p class="lead">The papers\' claims, checked on our results (docs/claims.md): '
        + _badge("held")
        + " "
        + _badge("not held")
        + " "
        + _badge("not evaluated")
        + f". Verdicts at smoke scale come from {_e(SMOKE_WARNING)}.</p>",
    ]
    if not experiments:
        out.append('<p class="muted">No experiment directories found.</p>')
        out.append("</section>")
        return out
    head = ["experiment", "title", "scales", *(f"claims at {_scale_label(s)}" for s in scales)]
    out.append(
        '<div class="scroll"><table class="overview"><thead><tr>'
        + "".join(f"<th>{_e(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
    )
    for paper, exps in _by_paper(experiments):
        name = _e(paper or "other experiments")
        desc = f' <span class="muted">{_e(paper_citation(paper))}</span>' if paper in PAPERS else ""
        out.append(f'<tr class="paper"><th colspan="{len(head)}">{name}{desc}</th></tr>')
        for exp in exps:
            by_scale = {r.scale: r for r in exp.runs}
            row = [
                f'<td class="exp"><a href="#{_anchor(exp.name)}">{_e(exp.name)}</a></td>',
                f"<td>{_e(exp.title or '–')}</td>",
                '<td class="sc">'
                + ", ".join(
                    f'<a href="#{_anchor(exp.name, r.scale)}">{_e(_scale_label(r.scale))}</a>'
                    for r in exp.runs
                )
                + "</td>",
            ]
            for s in scales:
                run = by_scale.get(s)
                if run is None:
                    row.append('<td class="muted">–</td>')
                    continue
                cell = _html_counts(run)
                if _number(run.meta.get("failed")):
                    cell += (
                        f'<span class="badge b-fail">{_e(_fmt(run.meta["failed"]))} failed</span>'
                    )
                toy = ' class="toy" title="smoke scale: toy data"' if s == "smoke" else ""
                row.append(f"<td{toy}>{cell}</td>")
            out.append("<tr>" + "".join(row) + "</tr>")
    out.append("</tbody></table></div>")
    out.append("</section>")
    return out


def _html_deviations(paper, exps: list[Experiment]) -> list[str]:
    rows = deviations(exps)
    if not rows:
        return []
    out = [
        f'<article class="card dev-card" id="{_anchor("deviations", paper or "other")}">'
        f"<h3>Deviations: {_e(paper or 'other experiments')}</h3>",
        f'<p class="lead">{_e(_DEV_INTRO)}</p>',
        '<div class="scroll"><table class="claims deviations"><thead><tr><th>claim</th>'
        "<th>ours</th><th>the paper's reading</th><th>noise-free</th><th>verdict</th>"
        "<th>cause</th></tr></thead><tbody>",
    ]
    for d in rows:
        cells = deviation_cells(d)
        verdict = _verdict(d.claim)
        badges = _badge(verdict, f"ours: {verdict}")
        for key, name in (("paper_reading", "reading"), ("noise_free", "noise-free")):
            sub = d.claim.get(key)
            if isinstance(sub, dict):
                badges += " " + _badge(_verdict_of(sub), f"{name}: {_verdict_of(sub)}")
        claim_id, _, text = cells["claim"].partition(": ")
        row_cls = ' class="nh"' if verdict == "not held" else ""
        out.append(
            f'<tr{row_cls}><td><span class="id">{_e(claim_id)}</span> {_e(text)}'
            f'<div class="src"><a href="#{_anchor(d.experiment.name, d.run.scale)}">'
            f"{_e(cells['where'])}</a></div></td>"
            f'<td class="num">{_e(cells["ours"])}</td>'
            f'<td class="num reading">{_e(cells["reading"])}</td>'
            f'<td class="num">{_e(cells["noise_free"])}</td>'
            f"<td>{badges}</td>"
            f'<td class="dev">{_e(cells["cause"])}</td></tr>'
        )
    out.append("</tbody></table></div></article>")
    return out


def _html_toc(experiments: list[Experiment]) -> list[str]:
    out = ['<nav id="toc"><h2>Contents</h2><ul><li><a href="#overview">Overview</a></li>']
    for paper, exps in _by_paper(experiments):
        out.append(
            f'<li class="paper"><a href="#{_anchor("paper", paper or "other")}">'
            f"{_e(paper or 'other')}</a></li>"
        )
        n_dev = len(deviations(exps))
        if n_dev:
            out.append(
                f'<li class="exp"><a href="#{_anchor("deviations", paper or "other")}">'
                f"Deviations</a> <span class=\"badge b-nh\">{n_dev}</span></li>"
            )
        for exp in exps:
            marks = ""
            nh = sum(r.counts.get("not held", 0) for r in exp.runs if r.scale != "smoke")
            if nh:
                marks = f' <span class="badge b-nh" title="claims not held">{nh}</span>'
            scales = " ".join(
                f'<a href="#{_anchor(exp.name, r.scale)}">{_e(_scale_label(r.scale))}</a>'
                for r in exp.runs
            )
            out.append(
                f'<li class="exp" title="{_e(exp.title)}"><a href="#{_anchor(exp.name)}">'
                f'{_e(exp.name)}</a>{marks}<span class="scales">{scales}</span></li>'
            )
    out.append("</ul></nav>")
    return out


def _html_figures(run: Run, results_dir: Path) -> list[str]:
    if not run.figures:
        return ['<p class="muted">No figures.</p>']
    out = ['<div class="figs">']
    for png in run.figures:
        try:
            uri, size = _data_uri(png)
        except OSError as exc:
            out.append(
                f'<p class="problems">{_e(png.name)}: could not be read ({_e(str(exc))})</p>'
            )
            continue
        dims = ""
        if size and size[1]:  # a row of figures FIGURE_HEIGHT px high; a wider one is scaled
            shown = round(FIGURE_HEIGHT * size[0] / size[1])
            dims = f' width="{size[0]}" height="{size[1]}" style="width:{shown}px"'

        pdf = png.with_suffix(".pdf")
        pdf_link = f' · <a href="{_link(pdf, results_dir)}">PDF</a>' if pdf.exists() else ""
        out.append(
            f'<figure><img alt="{_e(png.stem)}" '
            f'src="{uri}"{dims}><figcaption>{_e(png.stem)}{pdf_link}</figcaption></figure>'
        )
    out.append("</div>")
    return out


def _html_claims(run: Run) -> list[str]:
    if run.claims is None:
        return []
    out = ["<h5>Claims</h5>"]
    if not run.claims:
        return out + ['<p class="muted">claims.json lists no claim.</p>']
    out.append(
        '<div class="scroll"><table class="claims"><thead><tr><th>claim</th>'
        "<th>the paper says</th><th>verdict</th><th>numbers</th><th>deviation</th>"
        "</tr></thead><tbody>"
    )
    for c in run.claims:
        verdict = _verdict(c)
        raw = str(c.get("verdict") or "")
        label = (
            verdict
            if raw.strip().lower().replace("_", " ") == verdict or not raw
            else f"{verdict} ({raw})"
        )
        said = _e(str(c.get("text") or "–"))
        if c.get("source"):
            said += f'<div class="src">{_e(str(c["source"]))}</div>'
        numbers = _e(str(c.get("summary") or "–"))
        extra = []
        if c.get("n_groups") and _of_groups(c) not in str(c.get("summary") or ""):
            extra.append(_of_groups(c) + " groups")
        if _tol_text(c.get("tolerance")):
            extra.append(f"tolerance {_tol_text(c.get('tolerance'))}")
        if c.get("holds_in") not in (None, "all"):
            extra.append(f"holds in {_fmt(c['holds_in'])}")
        if c.get("kind"):
            extra.append(f"{c['kind']}" + (f" on {c['metric']}" if c.get("metric") else ""))
        if extra:
            numbers += f'<div class="src">{_e("; ".join(extra))}</div>'
        groups = c.get("groups")
        if isinstance(groups, list) and groups:
            rows = []
            for g in groups:
                if not isinstance(g, dict):
                    continue
                held = g.get("held")
                cls = ' class="bad"' if held is False else ""
                rows.append(
                    f"<tr><td>{_e(_group_text(g.get('group')))}</td>"
                    f"<td>{_e(_fmt(g.get('ours')))}</td><td>{_e(_fmt(g.get('other')))}</td>"
                    f"<td>{_e(_fmt(g.get('ratio')))}</td><td{cls}>{_e(_fmt(held))}</td></tr>"
                )
            failing = sum(1 for g in groups if isinstance(g, dict) and g.get("held") is False)
            numbers += (
                f"<details><summary>{len(rows)} group(s)"
                + (f", {failing} failing" if failing else "")
                + "</summary>"
                '<table class="groups"><tr><th>group</th><th>ours</th><th>other</th>'
                "<th>ratio</th><th>held</th></tr>" + "".join(rows) + "</table></details>"
            )
        row_cls = ' class="nh"' if verdict == "not held" else ""
        out.append(
            f'<tr{row_cls}><td class="id">{_e(str(c.get("id", "?")))}</td><td>{said}</td>'
            f'<td>{_badge(verdict, label)}</td><td class="num">{numbers}</td>'
            f'<td class="dev">{_e(str(c.get("deviation") or ""))}</td></tr>'
        )
    out.append("</tbody></table></div>")
    return out


def _html_tables(run: Run, results_dir: Path) -> list[str]:
    if not run.tables:
        return []
    out = ["<h5>Tables: ours beside the paper</h5>"]
    for t in run.tables:
        links = " · ".join(
            f'<a href="{_link(p, results_dir)}">{_e(p.name)}</a>'
            for p in (t.md, t.csv)
            if p is not None
        )
        out.append(f'<p><b>{_e(t.title or t.name)}</b> <span class="src">{links}</span></p>')
        if t.markdown is not None:
            out.append(f'<div class="md scroll">{_rendered(t.markdown, run, results_dir, 4)}</div>')
            continue
        if not t.rows:
            continue
        if t.rule:
            flag = (
                f'<span class="badge b-nh">{t.n_flagged} of {t.n_compared} cells flagged</span>'
                if t.n_flagged
                else f'<span class="badge b-held">none of {t.n_compared} cells flagged</span>'
            )
            out.append(
                f'<p class="src">Each cell: <b>ours</b>, the paper\'s number, ours÷paper; '
                f"red: {_e(t.rule)}. {flag}</p>"
            )
        else:
            out.append(
                f'<p class="src">Each cell: <b>ours</b>, the paper\'s number, ours÷paper '
                f"({_e(t.reason)}).</p>"
            )
        head = "".join(f"<th>{_e(k)}</th>" for k in t.keys) + "".join(
            f"<th>{_e(c)}</th>" for c in t.columns
        )
        rows = []
        for keys, cells in t.rows:
            tds = "".join(f'<td class="key">{_e(k)}</td>' for k in keys)
            for ours, paper, ratio, flagged in cells:
                inner = f'<div class="ours">{_e(ours or "–")}</div>'
                if paper:
                    inner += f'<div class="pp">paper {_e(paper)}</div>'
                if ratio:
                    inner += f'<div class="ratio">×{_e(ratio)}</div>'
                cls = ' class="flag"' if flagged else ""
                tds += f"<td{cls}>{inner}</td>"
            rows.append(f"<tr>{tds}</tr>")
        out.append(
            f'<div class="scroll"><table class="paper"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>"
        )
    return out


def _html_variants(run: Run, results_dir: Path) -> list[str]:
    if not run.variants:
        return []
    out = ["<h5>Variants (one-off runs, linked)</h5><ul>"]
    for v in run.variants:
        links = [
            f'<a href="{_link(p, results_dir)}">{_e(p.name)}</a>'
            for p in [*v.figures, *([v.summary] if v.summary else [])]
        ]
        counts = f" {_html_counts(v)}" if v.claims is not None else ""
        out.append(f"<li><b>{_e(v.path.name)}</b>{counts} {' · '.join(links) or '(no files)'}</li>")
    out.append("</ul>")
    return out


def _html_run(exp: Experiment, run: Run, results_dir: Path) -> list[str]:
    smoke = run.scale == "smoke"
    out = [
        f'<div class="run{" smoke" if smoke else ""}" id="{_anchor(exp.name, run.scale)}">',
        f"<h4>{_e(_scale_label(run.scale))} scale {_html_counts(run)}"
        + (f' <span class="badge b-toy">{_e(SMOKE_WARNING)}</span>' if smoke else "")
        + "</h4>",
    ]
    line = _meta_line(run)
    if line:
        out.append(f'<p class="meta">{_e(line)}</p>')
    if _number(run.meta.get("failed")):
        out.append(
            f'<p class="warn">{_e(_fmt(run.meta["failed"]))} task(s) failed: '
            "see summary.md and the run's log.</p>"
        )
    if run.problems:
        out.append(
            '<ul class="problems">' + "".join(f"<li>{_e(p)}</li>" for p in run.problems) + "</ul>"
        )
    out += _html_figures(run, results_dir)
    out += _html_claims(run)
    out += _html_tables(run, results_dir)
    if run.notes:
        out.append(
            f'<h5>Notes</h5><div class="md">{_rendered(run.notes, run, results_dir, 4)}</div>'
        )
    if run.summary is not None:
        text = _read_text(run.summary, [], "summary.md")
        if text:
            out.append(
                f"<details><summary>Summary: mean ± error tables, skipped cells "
                f'(summary.md)</summary><div class="md scroll">'
                f"{_rendered(text, run, results_dir, 4)}</div></details>"
            )
    out += _html_variants(run, results_dir)
    out.append("</div>")
    return out


def render_html(
    experiments: list[Experiment], results_dir: Path, *, title: str = "privpub results"
) -> str:
    """The text of ``report.html``: one self-contained page (no external resources)."""
    main = [
        f"<h1>{_e(title)}</h1>",
        '<p class="lead">Every experiment of the reproduction beside its paper: figures, '
        "the paper's claims checked on our numbers, our tables beside the published ones, "
        "and the notes on where we differ. Click a figure to enlarge it. "
        '<a href="report.md">report.md</a> has the same content as text.</p>',
    ]
    main += _html_overview(experiments, _scales(experiments))
    for paper, exps in _by_paper(experiments):
        heading = _e(paper or "Other experiments")
        if paper in PAPERS:
            heading += (f' <span class="muted" style="font-weight:400">'
                        f'{_e(paper_citation(paper))}</span>')
        main.append(f'<section id="{_anchor("paper", paper or "other")}"><h2>{heading}</h2>')
        main += _html_deviations(paper, exps)
        for exp in exps:
            main.append(f'<article class="card" id="{_anchor(exp.name)}"><h3>{_e(exp.name)}</h3>')
            if exp.title:
                main.append(f'<p class="title">{_e(exp.title)}</p>')
            if not exp.runs:
                main.append('<p class="muted">No figures.</p>')
            for run in exp.runs:
                main += _html_run(exp, run, results_dir)
            main.append("</article>")
        main.append("</section>")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        '<div class="layout">',
        *_html_toc(experiments),
        "<main>",
        *main,
        "</main></div>",
        '<div id="lightbox" hidden><img alt=""></div>',
        f"<script>{_JS}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


# --------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------


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

    Reads every experiment directory under ``results_dir`` (see :func:`collect` and the
    module docstring): per experiment and scale its ``meta.json``, figures, ``claims.json``,
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
