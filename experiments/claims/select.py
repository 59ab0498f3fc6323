"""Which rows a claim speaks of: its ``where``, its series selectors (``best_over``,
``worst_over``), the cells they select and the groups they are compared in (``per``). Rows
are selected by :func:`privpub.results.select_rows`, the selector of the figures too
(``docs/claims.md``, "Selectors" and "Groups")."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd

from privpub.errors import PrivpubError
from privpub.experiments.claims.numbers import (
    display,
    group_order,
    group_text,
    key_value,
    plain,
    sort_key,
)
from privpub.experiments.claims.schema import OVER, SELECTOR_SPECIAL
from privpub.results import condition_mask, select_rows

__all__ = [
    "ANY",
    "NotEvaluated",
    "Series",
    "claim_subject",
    "align",
    "cells_of",
    "param_names",
    "per_columns",
    "picked_name",
    "rows_for",
    "select_series",
    "selector_name",
    "shown",
    "table_of",
    "where_rows",
]


class NotEvaluated(Exception):
    """A claim that the results cannot decide; the message is the reason."""


#: A wildcard group value: the series does not take that parameter.
ANY = ("*any*",)


def _match(frame: pd.DataFrame, key: str, wanted) -> np.ndarray:
    """``frame``'s rows whose ``key`` matches ``wanted`` (a selector: empty never matches);
    a key that is no column is a reason not to evaluate."""
    try:
        return condition_mask(frame, key, wanted, empty="drop")
    except PrivpubError as exc:
        raise NotEvaluated(str(exc).splitlines()[0]) from None


def where_rows(frame: pd.DataFrame, where: dict) -> pd.DataFrame:
    """The rows that pass a claim's ``where`` (or ``at``): a row without the parameter
    (empty) passes a condition on it, as a figure draws it as a reference line."""
    try:
        return select_rows(frame, where, empty="keep")
    except PrivpubError as exc:
        raise NotEvaluated(str(exc).splitlines()[0]) from None


def _where_text(where: dict) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in where.items()) + "}"


def rows_for(frame, claim) -> pd.DataFrame:
    """The rows of the claim's metric that pass its ``where`` and ``at``, with the value to
    summarise as ``_v``."""
    rows = frame
    metric = claim.get("metric")
    if isinstance(metric, str):
        rows = rows[rows["metric"].astype(str) == metric]
        if rows.empty:
            present = sorted(map(str, pd.unique(frame["metric"])))
            raise NotEvaluated(f"no results for metric {metric!r} (metrics present: {present})")
    where = {**claim["where"], **(claim.get("at") or {})}
    rows = where_rows(rows, where)
    if rows.empty:
        raise NotEvaluated(f"no results match where {_where_text(where)}")
    return rows.assign(_v=rows["value"])


def param_names(frame: pd.DataFrame) -> list[str]:
    """The parameters of the results (the keys of their ``params``) that are columns."""
    names: set[str] = set()
    if "params" in frame.columns:
        for text in pd.unique(frame["params"].astype(str)):
            try:
                names |= set(json.loads(text))
            except (TypeError, ValueError):
                continue
    return sorted(n for n in names if n in frame.columns)


def cells_of(rows: pd.DataFrame, stat: str) -> pd.DataFrame:
    """One row per cell (dataset, options, mechanism, label, parameters): its statistic over
    the repetitions (finite values only) as ``_value``, the standard error of a mean as
    ``_se``, the count as ``_n``, and the cell's columns."""
    ident = [
        c
        for c in ("dataset", "dataset_options", "mechanism", "label", "params")
        if c in rows.columns
    ]
    values = pd.to_numeric(rows["_v"], errors="coerce").astype(float)
    rows = rows.assign(_v=values.where(np.isfinite(values)))
    if not ident:
        rows = rows.assign(_all="")
        ident = ["_all"]
    keys = rows[ident].astype(str)
    grouped = rows.groupby([keys[c] for c in ident], sort=False, dropna=False)
    first = grouped.head(1).copy()
    values = grouped["_v"].agg(stat)
    first["_value"] = values.to_numpy()
    # the standard error of a mean (NaN for other statistics or a single repetition)
    spread = grouped["_v"].agg(["std", "count"])
    first["_se"] = (spread["std"] / np.sqrt(spread["count"])).to_numpy() if stat == "mean" \
        else np.nan
    first["_n"] = spread["count"].to_numpy()
    return first[first["_value"].notna()].reset_index(drop=True)


def _best_over(cells: pd.DataFrame, over: str, higher: bool) -> pd.DataFrame:
    """Per (dataset, label, other parameters), the cell whose ``over`` value is best."""
    if over not in cells.columns:
        raise NotEvaluated(f"best_over / worst_over names {over!r}, which no result has")

    def rest(text):
        try:
            return json.dumps(
                {k: v for k, v in json.loads(text).items() if k != over}, sort_keys=True
            )
        except (TypeError, ValueError):
            return str(text)

    if "params" not in cells.columns:
        raise NotEvaluated("best_over / worst_over need the results' params column")
    keys = [c for c in ("dataset", "dataset_options", "mechanism", "label") if c in cells]
    rest_key = cells["params"].map(rest)
    for c in keys:
        rest_key = rest_key + "\x1f" + cells[c].astype(str)
    cells = cells.assign(_rest=rest_key)
    order = cells.sort_values("_value", ascending=not higher, kind="stable")
    return order.drop_duplicates("_rest").drop(columns="_rest")


def _differing(cells: pd.DataFrame) -> list[str]:
    """What distinguishes several cells: parameter names (or dataset, mechanism, label)."""
    out = []
    for col in ("dataset_label", "dataset_options", "mechanism", "label"):
        if col in cells.columns and cells[col].astype(str).nunique() > 1:
            out.append("dataset" if col.startswith("dataset") else col)
    params = [json.loads(p) if isinstance(p, str) else {} for p in cells.get("params", [])]
    keys = sorted({k for p in params for k in p})
    out += [k for k in keys if len({json.dumps(p.get(k), sort_keys=True) for p in params}) > 1]
    return list(dict.fromkeys(out)) or ["repetition rows"]


def selector_name(selector: dict, chosen=None) -> str:
    """A series as text: ``RPS (depth=50)``, ``Truncation (best theta)``; with the value
    its best_over / worst_over chose in a group: ``Truncation (best theta=16)``."""
    head = selector.get("label") or selector.get("mechanism") or ""
    if isinstance(head, list):
        head = "/".join(map(str, head))
    rest = [f"{k}={v}" for k, v in selector.items() if k not in SELECTOR_SPECIAL]
    if selector.get("label") and selector.get("mechanism"):
        rest.insert(0, f"mechanism={selector['mechanism']}")
    for k in OVER:
        if k in selector:
            value = "" if chosen is None else f"={plain(chosen)}"
            rest.append(f"{k.split('_')[0]} {selector[k]}{value}")
    if not head:
        return ", ".join(rest)
    return f"{head} ({', '.join(rest)})" if rest else str(head)


def claim_subject(claim: dict) -> str:
    """What one (parsed) claim tests, in words: the series it judges, what they are
    compared with, the metric and the rows it keeps. Several claims that quote one sentence
    of a paper differ here (``θ-Cumulative vs Flowgraph, Truncation (best theta) on l1``)."""
    kind = claim["kind"]
    series = selector_name(claim["series"]) if claim.get("series") else ""
    if kind == "compare":
        factor = claim.get("factor", 1)
        than = ", ".join(selector_name(t) for t in claim["than"])
        text = f"{series} vs {than}" + (f" (by a factor {plain(factor)})" if factor != 1 else "")
    elif kind == "trend":
        text = f"{series} {claim['direction']} along {claim['along']}"
    elif kind == "best" and isinstance(claim["among"], str):
        text = f"{series + ': ' if series else ''}best {claim['among']} = {plain(claim['expect'])}"
    elif kind == "best":
        among = ", ".join(selector_name(s) for s in claim["among"])
        text = f"{selector_name(claim['expect'])} best among {among}"
    elif kind == "value":
        text = f"{series} vs the paper's {plain(claim['paper'])}"
        if claim.get("at"):
            text += f" at {_filter_text(claim['at'])}"
    elif kind == "bound":
        sides = [f"{op} {plain(claim[k])}" for k, op in (("at_least", ">="), ("at_most", "<="))
                 if claim.get(k) is not None]
        text = f"{series} {' and '.join(sides)}"
    elif kind == "times_best":
        among = ", ".join(selector_name(s) for s in claim["among"])
        expect = claim["expect"]
        who = expect if isinstance(expect, str) else selector_name(expect)
        text = f"{who} most often best among {among}"
    else:  # table
        text = f"table {claim['plot']} vs the paper's numbers"
    metric = claim.get("metric")
    if kind == "times_best":
        text += f" over {len(metric)} metrics"
    elif metric:
        text += f" on {', '.join(metric) if isinstance(metric, list) else metric}"
    if claim.get("where"):
        text += f", where {_filter_text(claim['where'])}"
    if claim.get("per"):
        text += f", per {', '.join(claim['per'])}"
    return text


def _filter_text(conditions: dict) -> str:
    """``dataset=dblp, epsilon < 0.5`` from a where / at mapping."""
    parts = []
    for key, value in conditions.items():
        if isinstance(value, str) and value[:1] in "<>!=":
            parts.append(f"{key} {value}")  # a comparison: epsilon < 0.5
        elif isinstance(value, list):
            parts.append(f"{key}={'/'.join(str(plain(v)) for v in value)}")
        else:
            parts.append(f"{key}={plain(value)}")
    return ", ".join(parts)


class Series:
    """A selected series: its cells (one number each) after best_over. ``pick`` ("max" or
    "min") keeps the best of several cells in a group (``best_over: label``); ``selector``
    is the selector that chose it (None for all results)."""

    def __init__(self, name: str, cells: pd.DataFrame, pick: str | None = None,
                 selector: dict | None = None):
        self.name = name
        self.cells = cells
        self.pick = pick
        self.selector = selector


def _narrow(frame: pd.DataFrame, selector: dict, name: str) -> pd.DataFrame:
    """The rows of ``frame`` that every column condition of ``selector`` selects."""
    rows = frame
    for key, wanted in selector.items():
        if key in OVER:
            continue
        narrowed = rows[_match(rows, key, wanted)]
        if narrowed.empty:
            values = sorted(pd.unique(rows[key].dropna()), key=lambda v: sort_key(key_value(v)))
            present = [str(plain(v)) for v in values]
            shown_values = present[:12] + (["..."] if len(present) > 12 else [])
            where = "" if rows is frame else " among its rows"
            raise NotEvaluated(
                f"no results for series {name!r}: no {key} matches {wanted!r}{where} "
                f"(present: {', '.join(shown_values) or 'none'})"
            )
        rows = narrowed
    return rows


def select_series(frame, selector, *, stat, higher) -> Series:
    """The series ``selector`` names in ``frame``: its cells, after best_over / worst_over
    (``higher``: whether higher values are better; None when unknown)."""
    name = selector_name(selector)
    cells = cells_of(_narrow(frame, selector, name), stat)
    if cells.empty:
        raise NotEvaluated(f"series {name!r} has no finite values")
    pick = None
    for key in OVER:
        if key in selector:
            if higher is None:
                raise NotEvaluated(f"{key} needs to know which values are better")
            keep_high = higher != (key == "worst_over")
            if selector[key] in ("label", "mechanism"):  # the best of several series
                pick = "max" if keep_high else "min"
            else:
                cells = _best_over(cells, selector[key], keep_high)
    return Series(name, cells, pick, selector)


def picked_name(s: Series, cell) -> str:
    """A series' name; with ``best_over: label``, the label it picked in this group."""
    if s.pick:
        return str(cell.get("label"))
    over = next((s.selector[k] for k in OVER if k in (s.selector or {})), None)
    if over is not None and over in cell:
        return selector_name(s.selector, chosen=cell[over])
    return s.name


def _default_per(series: list[Series], params: list[str], exclude: set[str]) -> list[str]:
    per = ["dataset_label" if "dataset_label" in series[0].cells.columns else "dataset"]
    for p in params:
        if p in exclude:
            continue
        if not all(p in s.cells.columns and s.cells[p].notna().any() for s in series):
            continue
        if any(s.cells[p].map(key_value).nunique(dropna=False) > 1 for s in series):
            per.append(p)
    return per


def per_columns(claim, series, params, exclude, frame) -> list[str]:
    """The columns a claim's groups are split by: its ``per`` (``dataset`` meaning the
    dataset label), or by default ``dataset`` plus every parameter but ``exclude`` that
    varies within a compared series and that every compared series has."""
    if claim["per"] is None:
        return _default_per(series, params, exclude)
    per = []
    for col in claim["per"]:
        col = "dataset_label" if col == "dataset" and "dataset_label" in frame.columns else col
        if col not in frame.columns:
            raise NotEvaluated(f"per names {col!r}, which no result has")
        per.append(col)
    return per


def shown(group: dict) -> dict:
    """A group as output: plain values, wildcards left out."""
    return {k: plain(v) for k, v in group.items() if v is not ANY}


def table_of(s: Series, per: list[str], extra: list[str] = ()) -> dict:
    """``{group key: cell row}`` over ``per`` (+ ``extra``); a per column the series lacks
    altogether is a wildcard (:data:`ANY` at its position)."""
    cols = [*per, *extra]
    out: dict[tuple, list] = {}
    for _, cell in s.cells.iterrows():
        key = tuple(
            ANY
            if (c not in s.cells.columns or s.cells[c].isna().all()) and c in per
            else key_value(cell.get(c))
            for c in cols
        )
        out.setdefault(key, []).append(cell)
    for key, found in out.items():
        if len(found) > 1 and s.pick:
            found.sort(key=lambda c: c["_value"], reverse=s.pick == "max")
            out[key] = found[:1]
        elif len(found) > 1:
            group = dict(zip(map(display, cols), key, strict=True))
            varies = _differing(pd.DataFrame(found))
            raise NotEvaluated(
                f"series {s.name!r} is not one cell in group {group_text(shown(group))}: "
                f"it varies in {', '.join(varies)} (fix it in the selector, add it to per, "
                f"or use best_over)"
            )
    return {k: v[0] for k, v in out.items()}


def align(tables: list[dict], n_per: int):
    """Group keys over the first ``n_per`` positions: every concrete key any table has, with
    wildcards expanded to the values seen; returns ``(keys, lookup)``."""
    seen: list[set] = [set() for _ in range(n_per)]
    for table in tables:
        for key in table:
            for i in range(n_per):
                if key[i] is not ANY:
                    seen[i].add(key[i])

    keys = set()
    for table in tables:
        for key in table:
            options = [
                sorted(seen[i], key=sort_key) if key[i] is ANY else [key[i]] for i in range(n_per)
            ]
            keys.update(itertools.product(*options))
    ordered = sorted(keys, key=group_order)

    def lookup(table: dict, key: tuple, rest: tuple = ()):
        for cand, cell in table.items():
            head, tail = cand[:n_per], cand[n_per:]
            if tail == rest and all(c is ANY or c == k for c, k in zip(head, key, strict=True)):
                return cell
        return None

    return ordered, lookup
