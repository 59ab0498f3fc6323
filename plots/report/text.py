"""The texts both views of the report share: numbers and verdicts read from the files, values,
claim details and run lines printed, markdown cells and tables, links and anchors, and notes
adapted to the report's headings and links.

Part of :mod:`privpub.plots.report`; what the report shows and why: docs/design.md ("Report").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from privpub.results import SCALES, VERDICTS

__all__ = [
    "SMOKE_SCALE",
    "SMOKE_WARNING",
    "ABSOLUTE_LINK",
    "natural",
    "number",
    "verdict",
    "verdict_counts",
    "count_text",
    "fmt",
    "group_text",
    "of_groups",
    "tol_text",
    "claim_notes",
    "meta_line",
    "scale_label",
    "link",
    "anchor",
    "gh_anchor",
    "md_cell",
    "markdown_table",
    "adapt_markdown",
]

#: The smallest scale (toy data): its runs are marked and never give deviation rows.
SMOKE_SCALE = SCALES[0]
#: What a reader is told about every smoke-scale run.
SMOKE_WARNING = "toy data, not for conclusions"

_FENCE = re.compile(r"^\s*(```|~~~)")
_MD_LINK = re.compile(r"(!?\[[^\]\n]*\]\()([^)\s]+)")
#: A link target that is not relative to the file it is in (a URL, an anchor, an absolute path).
ABSOLUTE_LINK = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|#|/)")


def natural(text: str) -> list:
    """Sort key: ``fig10`` after ``fig9``."""
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", text)]


def number(text) -> float | None:
    """A finite number printed as ``text`` (``1,234``, ``2.5x``), else None."""
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


def verdict(claim: dict) -> str:
    """The claim's verdict, one of :data:`privpub.results.VERDICTS` (else ``not evaluated``)."""
    raw = str(claim.get("verdict") or "").strip().lower().replace("_", " ").replace("-", " ")
    return raw if raw in VERDICTS else "not evaluated"


def verdict_counts(claims: list[dict] | None) -> Counter:
    """The claims' verdicts counted."""
    return Counter(verdict(c) for c in claims or [])


def count_text(claims: list[dict] | None, problems: list[str]) -> str:
    """A run's claim verdicts in words (``3 held · 1 not held · 0 not evaluated``)."""
    if claims is None:
        return (
            "claims.json unreadable"
            if any(p.startswith("claims.json") for p in problems)
            else "no claims"
        )
    if not claims:
        return "no claims"
    counts = verdict_counts(claims)
    return " · ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS)


def fmt(value) -> str:
    """A value of a JSON file as printed (4 significant digits, ``–`` for none)."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)
        return f"{value:.4g}" if isinstance(value, float) else str(value)
    return str(value)


def group_text(group) -> str:
    """A claim's group (``dataset=dblp, epsilon=1``)."""
    if isinstance(group, dict):
        return ", ".join(f"{k}={fmt(v)}" for k, v in group.items()) or "(all)"
    return fmt(group)


def of_groups(claim: dict) -> str:
    """``n_held of n_groups``."""
    return f"{fmt(claim.get('n_held'))} of {fmt(claim.get('n_groups'))}"


def tol_text(value) -> str:
    """A tolerance as a percentage; empty for none or 0."""
    tol = number(value)
    return f"{tol * 100:g} %" if tol else ""  # 0: strict, the default: not worth a mention


def claim_notes(claim: dict) -> list[str]:
    """What a claim's summary does not say: its groups, tolerance and where it holds."""
    notes = []
    if claim.get("n_groups") and of_groups(claim) not in str(claim.get("summary") or ""):
        notes.append(of_groups(claim) + " groups")
    if tol_text(claim.get("tolerance")):
        notes.append(f"tolerance {tol_text(claim.get('tolerance'))}")
    if claim.get("holds_in") not in (None, "all"):
        notes.append(f"holds in {fmt(claim['holds_in'])}")
    return notes


def meta_line(meta: dict) -> str:
    """One line from a run's ``meta.json``: its trials, privacy, date, time and overrides."""
    m = meta
    parts = []
    if m.get("trials") is not None:
        cells, reps = fmt(m.get("cells")), fmt(m.get("repetitions"))
        t = f"{cells} cells × {reps} reps = {fmt(m['trials'])} trials"
        done = [f"{fmt(m[k])} {k}" for k in ("ok", "skipped", "failed") if m.get(k) is not None]
        parts.append(t + (": " + ", ".join(done) if done else ""))
    if m.get("privacy"):
        parts.append(f"privacy: {m['privacy']}")
    if m.get("drawn_at"):
        parts.append(f"drawn {str(m['drawn_at']).replace('T', ' ')}")
    seconds = m.get("seconds")
    if isinstance(seconds, dict) and seconds.get("total") is not None:
        per = seconds.get("per_trial")
        parts.append(f"{fmt(seconds['total'])} s" + (f" ({fmt(per)} s/trial)" if per else ""))
    if m.get("overrides"):
        ov = m["overrides"]
        parts.append("overrides: " + (", ".join(map(str, ov)) if isinstance(ov, list) else str(ov)))
    return " · ".join(parts)


def scale_label(scale: str) -> str:
    """A run's scale as shown (``no scale`` for files directly in the experiment directory)."""
    return scale or "no scale"


def link(path: Path, base: Path) -> str:
    """A relative, URL-quoted link from ``base`` to ``path`` (safe for spaces)."""
    return quote(path.relative_to(base).as_posix())


def anchor(*parts: str) -> str:
    """An HTML id from ``parts``."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(p for p in parts if p)).strip("-") or "x"


def gh_anchor(heading: str) -> str:
    """The anchor GitHub (and most renderers) derive from a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def md_cell(text) -> str:
    """``text`` as one cell of a markdown table row."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: pd.DataFrame, *, index: bool = True) -> str:
    """Render a DataFrame (e.g. :func:`privpub.plots.lines.summary_table`) as a GitHub markdown
    table.

    Index levels become the leading columns when ``index`` is True.
    """
    if index:
        frame = frame.reset_index()
    header = [md_cell(c) for c in frame.columns]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * len(header)) + "|",
    ]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(md_cell(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def _outside_fences(text: str, fix) -> str:
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            out.append(line)
        else:
            out.append(line if fenced else fix(line))
    return "\n".join(out)


def adapt_markdown(text: str, *, demote: int, prefix: str) -> str:
    """Shift headings by ``demote`` levels and make relative links relative to the report
    (``prefix``: the file's directory, relative to the report); fenced code is kept as is."""

    def fix(line: str) -> str:
        m = re.match(r"^(#{1,6})(\s)", line)
        if m and demote:
            line = "#" * min(6, len(m.group(1)) + demote) + line[len(m.group(1)) :]
        if prefix:
            line = _MD_LINK.sub(
                lambda k: (
                    k.group(1)
                    + (k.group(2) if ABSOLUTE_LINK.match(k.group(2)) else f"{prefix}/{k.group(2)}")
                ),
                line,
            )
        return line

    return _outside_fences(text.strip("\n"), fix)
