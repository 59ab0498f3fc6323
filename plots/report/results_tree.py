"""Reading the results tree for the report: per experiment and scale, what the runner and
the plots wrote (``meta.json``, figures, ``claims.json``, paper tables, notes, summary,
variants), without reading the result store or recomputing anything.

Part of :mod:`privpub.plots.report`; the layout read, and how a table cell is flagged:
docs/design.md ("Report"). A missing or malformed file becomes a problem listed in the
report, never an exception.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from privpub.audit.stored import AUDIT_DIR
from privpub.papers import PAPERS
from privpub.results import OPT_IN_SCALES, SCALES

from .text import markdown_table, natural, number, verdict_counts

__all__ = [
    "REPORT_SCALES",
    "DEFAULT_TOLERANCE",
    "PaperTable",
    "Run",
    "Experiment",
    "experiment_dirs",
    "collect",
    "by_paper",
    "scales_of",
    "read_text",
    "read_claims",
    "counted_runs",
    "shown_variants",
]

#: Scales in report order (largest first); any other scale directory follows, sorted, then a
#: run without scale.
REPORT_SCALES = tuple(reversed(SCALES))
#: Relative tolerance for flagging a table cell when no ``table`` claim states one.
DEFAULT_TOLERANCE = 0.10

_SKIP_DIRS = {"store", "variants"}
_RUN_FILES = ("meta.json", "claims.json", "summary.md", "notes.md")


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
        return verdict_counts(self.claims)


@dataclass
class Experiment:
    """One ``results/<experiment>/`` directory: its runs in report order (see :func:`collect`)."""

    name: str
    path: Path
    runs: list[Run]
    paper: str | None = None
    title: str = ""


def experiment_dirs(results_dir: Path) -> list[Path]:
    """The experiment directories under ``results_dir``: its non-hidden subdirectories but
    the stored audits' (:data:`privpub.audit.stored.AUDIT_DIR`), sorted."""
    return sorted(
        p for p in Path(results_dir).iterdir()
        if p.is_dir() and not p.name.startswith((".", "_")) and p.name != AUDIT_DIR
    )




def _scale_rank(scale: str) -> tuple:
    if scale in REPORT_SCALES:
        return (0, REPORT_SCALES.index(scale), "")
    return (1, 0, scale) if scale else (2, 0, "")


def read_text(path: Path, problems: list[str], label: str) -> str | None:
    """The text of ``path``; None, with a problem noted under ``label``, if unreadable."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{label}: could not be read ({type(exc).__name__}: {exc})")
        return None


def _read_json(path: Path, problems: list[str], label: str):
    text = read_text(path, problems, label)
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
            key=lambda p: natural(p.name),
        )
        return
    for name in names:
        png = run.path / f"{name}.png"
        if png.is_file():
            run.figures.append(png)
        else:
            run.problems.append(f"figure {name!r} is listed in meta.json but {png.name} is missing")


def read_claims(directory: Path, problems: list[str]) -> list[dict] | None:
    """The claims of one figure directory's ``claims.json`` (None when there is none or it
    cannot be read, with a problem noted): the one reading of a run's verdicts, for the
    report and for the line a run ends with (:func:`privpub.experiments.cli.closing_line`)."""
    path = Path(directory) / "claims.json"
    if not path.is_file():
        return None
    data = _read_json(path, problems, "claims.json")
    if isinstance(data, dict) and isinstance(data.get("claims"), list):
        data = data["claims"]
    if data is None:
        return None
    if not isinstance(data, list):
        problems.append(f"claims.json: expected a list, got {type(data).__name__}; ignored")
        return None
    claims = [c for c in data if isinstance(c, dict)]
    if len(claims) < len(data):
        problems.append(f"claims.json: {len(data) - len(claims)} entry(ies) not objects; ignored")
    return claims


def _read_claims(run: Run) -> None:
    run.claims = read_claims(run.path, run.problems)


def shown_variants(run: Run) -> list[Run]:
    """The variants the report shows in full under ``run``: all of them when the run drew
    nothing itself (a sweep draws into a variant only), else none (they are linked)."""
    drew = run.claims is not None or bool(run.figures) or bool(run.tables)
    return [] if drew else list(run.variants)


def counted_runs(run: Run) -> list[Run]:
    """The directories whose verdicts the overview shows for ``run``, one line each, as the
    run that drew each printed them: the run's own (when it has claims, or nothing else
    has) and every variant's that has claims (a sweep draws into a variant only)."""
    variants = [v for v in run.variants if v.claims is not None]
    return ([run] if run.claims is not None or not variants else []) + variants


def _claim_tolerance(run: Run, name: str, n_tables: int) -> tuple[float | None, str]:
    """The tolerance of the ``table`` claim about table ``name`` and that claim's id.

    A claim names its table with ``plot`` (or ``table``); a claim naming none is taken to be
    about the run's only table. ``(None, "")`` when no claim says.
    """
    table_claims = [c for c in run.claims or [] if str(c.get("kind")) == "table"]
    named = [c for c in table_claims if name in (c.get("plot"), c.get("table"))]
    unnamed = [c for c in table_claims if not c.get("plot") and not c.get("table")]
    for claim in named or (unnamed if len(unnamed) == 1 and n_tables == 1 else []):
        tol = number(claim.get("tolerance"))
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
        text = read_text(md, run.problems, md.name) or ""
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
            table.markdown = read_text(md, [], md.name)
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
                ratio = _ratio_text(number(ours), number(paper))
                value = number(ratio) if ratio != "∞" else math.inf
                flagged = bool(ratio) and tol is not None and not abs(value - 1) <= tol + 1e-12
            cells.append((ours, paper, ratio, flagged))
        table.rows.append(([str(row[k]) for k in table.keys], cells))
    return table


def _read_tables(run: Run) -> None:
    names = _names(run, "tables")
    if names is None:
        names = sorted({p.stem for p in run.path.glob("*.csv")}, key=natural)
    for name in names:
        run.tables.append(_parse_table(run, name, len(names)))


def _read_run(path: Path, scale: str, *, variants: bool = True) -> Run:
    run = Run(path=path, scale=scale)
    try:
        if not any(p.is_file() for p in path.iterdir()):
            if not (variants and (path / "variants").is_dir()):  # variants: shown instead
                run.problems.append("empty")
        else:
            _read_meta(run)
        _read_figures(run)
        _read_claims(run)
        _read_tables(run)
        if (path / "summary.md").is_file():
            run.summary = path / "summary.md"
        if (path / "notes.md").is_file():
            run.notes = read_text(path / "notes.md", run.problems, "notes.md")
        vdir = path / "variants"
        if variants and vdir.is_dir():
            for sub in sorted(vdir.iterdir(), key=lambda p: natural(p.name)):
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
    """Read every experiment under ``results_dir`` (the layout: docs/design.md, "Report").

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
        return (rank, natural(e.name))

    return sorted(experiments, key=order)


def by_paper(experiments: list[Experiment]) -> list[tuple[str | None, list[Experiment]]]:
    """``experiments`` grouped by paper, in their order."""
    groups: dict[str | None, list[Experiment]] = {}
    for exp in experiments:
        groups.setdefault(exp.paper, []).append(exp)
    return list(groups.items())


def scales_of(experiments: list[Experiment]) -> list[str]:
    """The overview's scale columns: :data:`REPORT_SCALES` (an opt-in one only when a run
    has it), then any other scale found."""
    found = {r.scale for e in experiments for r in e.runs}
    always = set(REPORT_SCALES) - set(OPT_IN_SCALES)
    return sorted(found | always, key=_scale_rank)
