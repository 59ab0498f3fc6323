"""A paper's plotted means, drawn beside ours (the ``published:`` key of a line plot).

``conf/published/<stem>.csv`` holds them: comment lines (``#``: where the numbers come
from), then a header ``dataset,metric,series,<x values>`` and one row per (dataset, metric,
series) with the paper's mean at each x value of the plot (e.g. epsilon). The file ships
with the package; a plot spec names it by its stem: ``published: pgb2024``.
"""

from __future__ import annotations

import functools

import pandas as pd

from privpub.errors import ConfigError

__all__ = ["published_means", "published_curves"]


@functools.cache
def published_means(stem: str) -> pd.DataFrame:
    """The long table (dataset, metric, series, x, value) of ``conf/published/<stem>.csv``."""
    from privpub.experiments.catalog import CONF_DIR

    path = CONF_DIR / "published" / f"{stem}.csv"
    if not path.is_file():
        known = sorted(p.stem for p in (CONF_DIR / "published").glob("*.csv"))
        raise ConfigError(f"published: no file {stem!r} under conf/published; known: {known}")
    wide = pd.read_csv(path, comment="#", dtype={"dataset": str, "metric": str, "series": str})
    keys = ["dataset", "metric", "series"]
    if list(wide.columns[:3]) != keys:
        raise ConfigError(f"{path.name}: the header must start with {','.join(keys)}")
    long = wide.melt(id_vars=keys, var_name="x", value_name="value")
    long["x"] = long["x"].astype(float)
    return long


def published_curves(stem: str, metric: str, panels: dict[str, str]) -> dict:
    """``{panel: {series: {x: value}}}`` of ``metric`` for the datasets in ``panels``
    (dataset name -> the panel it is drawn in)."""
    table = published_means(stem)
    rows = table[(table["metric"] == metric) & table["dataset"].isin(list(panels))]
    curves: dict = {}
    for rec in rows.dropna(subset=["value"]).itertuples(index=False):
        panel = curves.setdefault(panels[rec.dataset], {})
        panel.setdefault(rec.series, {})[rec.x] = float(rec.value)
    return curves
