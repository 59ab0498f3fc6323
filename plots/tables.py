"""Tables of results beside the numbers a paper published (day2016 Tables 1-3, ...).

A table plot in an experiment's ``plots`` list reads::

    - kind: table
      name: table2
      rows: [dataset, metric]                   # result columns naming a table row
      columns: {theta: [16, 64, 128], label: [T, FG, ER, pi_theta]}   # ordered product
      metrics: [l1_counts, info/edge_fraction]  # the metric rows used (default: all)
      value: value                              # or "seconds" (Table 3: running time)
      where: {epsilon: 1}                       # optional parameter filter
      digits: 4
      paper:                                    # the published numbers, row key by row key,
        facebook:                               # one list aligned with the column product
          l1_counts: [3828, 5112, 5122, 3228, 1923, ...]

Every cell is the mean (or median) over repetitions of what *we* computed; the paper's
number, when given, is printed beside it (``ours`` / ``paper`` sub-columns, and
``paper/ours`` with ``ratio: true``). The published numbers are reference data copied from
the paper, never results: they are only printed, not compared or plotted as ours.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from plots.lines import _matches, filter_rows
from privpub.errors import ConfigError

__all__ = ["paper_table"]


def _fmt(value: float, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if abs(value) >= 10**digits:  # large numbers in full: 1,049,866 rather than 1.05e+06
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def _paper_value(paper: dict | None, key: tuple, position: int):
    node = paper
    for part in key:
        if not isinstance(node, dict):
            return None
        node = node.get(part, node.get(str(part)))
    if isinstance(node, (list, tuple)) and position < len(node):
        return node[position]
    return None


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
) -> pd.DataFrame:
    """Our means per (row, column) beside the paper's numbers, as a frame of strings.

    Parameters
    ----------
    frame : DataFrame
        Tidy ok rows of a result store (see :mod:`experiments.store`).
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

    Returns
    -------
    DataFrame
        One row per row key (paper order first, then any others sorted), flattened column
        names ``"<column values> ours"`` / ``"... paper"`` / ``"... paper/ours"``.
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
    sub = filter_rows(sub, where)
    combos = list(itertools.product(*columns.values()))
    keys = list(dict.fromkeys(map(tuple, sub[rows].astype(object).to_numpy().tolist())))

    def paper_order(key):
        node, rank = paper or {}, []
        for part in key:
            names = list(node) if isinstance(node, dict) else []
            rank.append(names.index(part) if part in names else len(names))
            node = node.get(part, {}) if isinstance(node, dict) else {}
        return (rank, [str(p) for p in key])

    keys.sort(key=paper_order)
    table = []
    for key in keys:
        mask = np.ones(len(sub), dtype=bool)
        for col, part in zip(rows, key, strict=True):
            mask &= (sub[col].astype(object) == part).to_numpy()
        block = sub[mask]
        line = dict(zip(rows, key, strict=True))
        for i, combo in enumerate(combos):
            cmask = np.ones(len(block), dtype=bool)
            for col, wanted in zip(columns, combo, strict=True):
                cmask &= _matches(block[col], wanted)
            picked = block[cmask]
            if value != "value":  # task columns (seconds, peak_mb) repeat on each metric row
                picked = picked.drop_duplicates(["cell", "rep"])
            values = pd.to_numeric(picked[value], errors="coerce").dropna()
            ours = float(values.agg(stat)) if len(values) else math.nan
            name = " ".join(str(c) for c in combo)
            line[f"{name} ours"] = _fmt(ours, digits)
            published = _paper_value(paper, key, i)
            if paper is not None:
                line[f"{name} paper"] = "" if published is None else _fmt(float(published), digits)
            if ratio and published is not None and ours > 0:
                line[f"{name} paper/ours"] = f"{float(published) / ours:,.0f}x"
        table.append(line)
    return pd.DataFrame(table)
