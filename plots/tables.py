"""Tables of results beside the numbers a paper published (day2016 Tables 1-3, ...).

A table plot in an experiment's ``plots`` list reads::

    - kind: table
      name: table2
      rows: [dataset, metric]                   # result columns naming a table row
      columns: {theta: [16, 64, 128], label: [T, FG, ER, pi_theta]}   # ordered product
      metrics: [l1_counts, diag/edge_fraction]  # the metric rows used (default: all)
      value: value                              # or "seconds" (Table 3: running time)
      where: {epsilon: 1}                       # optional parameter filter
      digits: 4
      paper:                                    # the published numbers, row key by row key,
        facebook:                               # one list aligned with the column product
          l1_counts: [3828, 5112, 5122, 3228, 1923, ...]

Every cell is the mean (or median) over repetitions of what *we* computed; the paper's
number, when given, is printed beside it (``ours`` / ``paper`` sub-columns, and
``paper/ours`` with ``ratio: true``). With a ``tolerance`` an ``ours/paper`` sub-column is
added, flagged ``✗`` beyond it (``1.32 ✗`` at tolerance 0.1). The published numbers are
reference data copied from the paper, never results: they are printed and compared, never
plotted as ours. :func:`table_cells` gives the same numbers unformatted (the ``table``
claims of :mod:`privpub.experiments.claims` check them).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from privpub.errors import ConfigError
from privpub.results import condition_mask, select_rows

__all__ = [
    "paper_table",
    "table_cells",
    "ours_over_paper",
    "beyond_tolerance",
    "agrees_at_precision",
    "row_precision",
]


#: Columns that identify a cell when a frame has no ``cell`` column.
_CELL_COLUMNS = ("dataset", "dataset_options", "mechanism", "label", "params")


def _fmt(value: float, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if abs(value) >= 10**digits:  # large numbers in full: 1,049,866 rather than 1.05e+06
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def _paper_row(paper: dict | None, key: tuple):
    node = paper
    for part in key:
        if not isinstance(node, dict):
            return None
        node = node.get(part, node.get(str(part)))
    return node if isinstance(node, (list, tuple)) else None


def _paper_value(paper: dict | None, key: tuple, position: int):
    row = _paper_row(paper, key)
    return row[position] if row is not None and position < len(row) else None


def _decimals(value) -> int:
    """Decimals a number was printed with (``0.03`` -> 2, ``3828`` -> 0)."""
    text = repr(float(value)) if not isinstance(value, int) else str(value)
    if "e" in text or "." not in text:
        return 0
    digits = text.split(".")[1].rstrip("0")
    return len(digits)


def row_precision(paper: dict | None, key: tuple) -> int:
    """The decimals the paper prints in one row: the most any of its numbers has (YAML
    drops trailing zeros: the row's ``0.30`` reads as 0.3, its ``0.03`` tells the row's 2)."""
    row = _paper_row(paper, key) or []
    return max((_decimals(v) for v in row if isinstance(v, (int, float))), default=0)


def agrees_at_precision(ours: float, paper: float, decimals: int) -> bool:
    """Our number, rounded as the paper prints the row, equals the paper's: a printed 0.03
    agrees with our 0.026."""
    return abs(round(float(ours), decimals) - float(paper)) <= 0.5 * 10.0**-decimals * 1e-6


def table_cells(
    frame: pd.DataFrame,
    *,
    rows,
    columns: dict,
    metrics=None,
    value: str = "value",
    where: dict | None = None,
    paper: dict | None = None,
    stat: str = "mean",
    average_over=(),
) -> list[dict]:
    """The numbers of a table plot, one dict per (row key, column combination).

    Parameters are those of :func:`paper_table`. Each dict holds ``row`` (row column ->
    value), ``column`` (column -> value), ``name`` (the column combination as text),
    ``position`` (its index in the column product), ``ours`` (the mean or median over
    repetitions, NaN when nothing was computed) and ``paper`` (the published number or
    None). Rows come in the paper's order first, then any others sorted. Used by
    :func:`paper_table` and by the ``table`` claims of :mod:`privpub.experiments.claims`.
    """
    if stat not in ("mean", "median"):
        raise ConfigError(f"table plot: stat must be 'mean' or 'median', got {stat!r}")
    rows = [rows] if isinstance(rows, str) else list(rows)
    if not isinstance(columns, dict) or not columns:
        raise ConfigError("a table plot needs 'columns': {result column: [values, ...]}")
    missing = [c for c in [*rows, *columns, value] if c not in frame.columns]
    if missing:
        raise ConfigError(f"table plot: results have no column(s) {missing}")
    sub = frame[frame["metric"] != "release"]
    if metrics is not None:
        sub = sub[sub["metric"].isin(list(metrics))]
    sub = select_rows(sub, where, empty="keep")
    rows += [c for c in _varied_rows(sub, rows, columns) if c not in set(average_over or ())]
    combos = list(itertools.product(*columns.values()))
    cells = []
    for key in _row_keys(sub, rows, paper):
        mask = np.ones(len(sub), dtype=bool)
        for col, part in zip(rows, key, strict=True):
            mask &= (sub[col].astype(object) == part).to_numpy()
        block = sub[mask]
        for i, combo in enumerate(combos):
            values = _cell_values(block, dict(zip(columns, combo, strict=True)), value)
            published = _paper_value(paper, key, i)
            cells.append(
                {
                    "row": dict(zip(rows, key, strict=True)),
                    "column": dict(zip(columns, combo, strict=True)),
                    "name": " ".join(str(c) for c in combo),
                    "position": i,
                    "ours": float(values.agg(stat)) if len(values) else math.nan,
                    "paper": None if published is None else float(published),
                    "decimals": row_precision(paper, key),
                }
            )
    return cells


def _varied_rows(sub: pd.DataFrame, rows: list[str], columns: dict) -> list[str]:
    """What varies within one cell of the table (:func:`privpub.plots.series.varied_columns`), as
    extra row columns: a cell never averages over a parameter the user varied."""
    from privpub.plots.series import varied_columns

    shown = np.ones(len(sub), dtype=bool)  # the rows some cell of the table averages
    for col, options in columns.items():
        in_column = np.zeros(len(sub), dtype=bool)
        for option in options:
            in_column |= condition_mask(sub, col, option, empty="drop")
        shown &= in_column
    varied = varied_columns(sub[shown], [*rows, *columns])
    hidden = [name for name in varied if name not in sub.columns]
    if hidden:
        raise ConfigError(f"table plot: the results vary in {', '.join(hidden)} within one "
                          "cell of the table; add it to the table's rows or columns")
    return varied


def _row_keys(sub: pd.DataFrame, rows: list[str], paper: dict | None) -> list[tuple]:
    """The table's row keys (the values of the ``rows`` columns): the paper's order first,
    then any others sorted."""
    keys = list(dict.fromkeys(map(tuple, sub[rows].astype(object).to_numpy().tolist())))

    def paper_order(key):
        node, rank = paper or {}, []
        for part in key:
            names = list(node) if isinstance(node, dict) else []
            rank.append(names.index(part) if part in names else len(names))
            node = node.get(part, {}) if isinstance(node, dict) else {}
        return (rank, [str(p) for p in key])

    return sorted(keys, key=paper_order)


def _cell_values(block: pd.DataFrame, wanted: dict, value: str) -> pd.Series:
    """The numbers of one cell: the ``value`` of the rows whose columns have the ``wanted``
    values (a trial's ``seconds`` once per trial, not once per metric row)."""
    cmask = np.ones(len(block), dtype=bool)
    for col, option in wanted.items():
        cmask &= condition_mask(block, col, option, empty="drop")
    picked = block[cmask]
    if value != "value":  # trial columns (seconds, peak_mb) repeat on each metric row
        ident = (
            ["cell"]
            if "cell" in picked.columns
            else [c for c in _CELL_COLUMNS if c in picked.columns]
        )
        picked = picked.drop_duplicates([*ident, "rep"])
    return pd.to_numeric(picked[value], errors="coerce").dropna()


def ours_over_paper(ours: float, paper: float) -> float:
    """``ours / paper``; 1 when both are 0, infinite when only the paper's is 0."""
    if paper == 0:
        return 1.0 if ours == 0 else math.inf
    return ours / paper


def beyond_tolerance(ratio: float, tolerance: float) -> bool:
    """True when ``abs(ratio - 1) > tolerance`` (with a little slack for float rounding)."""
    return not abs(ratio - 1.0) <= tolerance + 1e-12


def paper_table(
    frame: pd.DataFrame,
    *,
    rows,
    columns: dict,
    metrics=None,
    value: str = "value",
    where: dict | None = None,
    paper: dict | None = None,
    digits: int = 4,
    ratio: bool = False,
    stat: str = "mean",
    tolerance: float | None = None,
    better: str | None = None,
    average_over=(),
) -> pd.DataFrame:
    """Our means per (row, column) beside the paper's numbers, as a frame of strings.

    Parameters
    ----------
    frame : DataFrame
        Tidy ok rows of a result store (see :mod:`privpub.experiments.store`).
    rows : list of str
        Result columns whose values name a row (e.g. ``["dataset"]``).
    columns : dict of str to list
        Result column -> the values shown, in order; the table's columns are their product.
    metrics : list of str, optional
        Metric rows used (default: all but stored releases).
    value : str, default "value"
        The result column averaged over repetitions (``"seconds"`` for running times).
    where : dict, optional
        Parameter filter, e.g. ``{"epsilon": 1}``.
    paper : dict, optional
        Published numbers, nested by the row key's parts, each a list aligned with the
        column product (``null`` where the paper has none).
    digits : int, default 4
        Significant digits.
    ratio : bool, default False
        Add ``paper/ours`` sub-columns (running times: how many times faster we are).
    stat : {"mean", "median"}, default "mean"
        How repetitions are summarised (``median`` for running times: robust to the first
        call of a worker, which may include numba's compilation).
    tolerance : float, optional
        With published numbers, add ``ours/paper`` sub-columns (two decimals), flagged
        ``✗`` when ``abs(ours/paper - 1) > tolerance`` (e.g. ``1.32 ✗`` at tolerance 0.1)
        unless ours, rounded as the paper prints that row, equals the paper's number
        (:func:`agrees_at_precision`); empty where either number is missing. Absent
        (None): no such column.
    average_over : list of str, optional
        Parameters a cell may average over on purpose, as the paper's table does (farias2021
        Table 2: "mean accuracy over ... k in {1, 2, 3}"); anything else the rows of a cell
        differ in becomes a row column (:func:`_varied_rows`).
    better : {"lower", "higher"}, optional
        One-sided flags, as the table claim that checks the table (running times, bounds):
        with ``"lower"`` only ``ours/paper > 1 + tolerance`` is flagged, with ``"higher"``
        only ``ours/paper < 1 - tolerance``.

    Returns
    -------
    DataFrame
        One row per row key (paper order first, then any others sorted), flattened column
        names ``"<column values> ours"`` / ``"... paper"`` / ``"... paper/ours"`` /
        ``"... ours/paper"``.
    """
    from privpub.plots.series import shown_name

    _check_flags(tolerance, better)
    cells = table_cells(
        frame,
        rows=rows,
        columns=columns,
        metrics=metrics,
        value=value,
        where=where,
        paper=paper,
        stat=stat,
        average_over=average_over,
    )
    table: list[dict] = []
    lines: dict[tuple, dict] = {}
    for cell in cells:
        key = tuple(cell["row"].values())
        if key not in lines:  # the base seed of a sweep over seeds is headed "seed"
            lines[key] = {shown_name(k): v for k, v in cell["row"].items()}
            table.append(lines[key])
        line, name = lines[key], cell["name"]
        ours, published = cell["ours"], cell["paper"]
        line[f"{name} ours"] = _fmt(ours, digits)
        if paper is not None:
            line[f"{name} paper"] = "" if published is None else _fmt(published, digits)
        if ratio and published is not None and ours > 0:
            line[f"{name} paper/ours"] = f"{published / ours:,.0f}x"
        if tolerance is not None and paper is not None:
            line[f"{name} ours/paper"] = _flagged_ratio(cell, float(tolerance), better)
    return pd.DataFrame(table)


def _check_flags(tolerance, better):
    """A table plot's ``tolerance`` (a number >= 0 or None) and ``better`` (None, lower or
    higher)."""
    if tolerance is not None and (
        not isinstance(tolerance, (int, float)) or isinstance(tolerance, bool) or tolerance < 0
    ):
        raise ConfigError(f"table plot: tolerance must be a number >= 0, got {tolerance!r}")
    if better not in (None, "lower", "higher"):
        raise ConfigError(f"table plot: better must be lower or higher, got {better!r}")


def _flagged_ratio(cell: dict, tolerance: float, better: str | None) -> str:
    """A cell's ``ours/paper`` (two decimals), flagged ``✗`` beyond ``tolerance`` on the
    worse side unless equal at the paper's printed precision; empty without both numbers."""
    ours, published = cell["ours"], cell["paper"]
    if published is None or math.isnan(ours):
        return ""
    r = ours_over_paper(ours, published)
    text = "∞" if math.isinf(r) else f"{r:.2f}"
    close = agrees_at_precision(ours, published, cell["decimals"])
    worse = {"lower": r > 1, "higher": r < 1}.get(better, True)
    if worse and beyond_tolerance(r, tolerance) and not close:
        text += " ✗"
    return text
