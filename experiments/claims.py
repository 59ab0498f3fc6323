"""Paper claims checked by machine (``docs/claims.md``).

An experiment file may list what its paper claims about the figure or table as checks over
the result store::

    claims:
      - id: cumulative_beats_flowgraph
        text: "θ-CumulativeHistogram has a lower L1 error than Flowgraph"
        source: "Sec 4.3, Fig. 3"
        kind: compare                    # compare | trend | best | value | table
        metric: l1
        series: "θ-Cumulative"
        than: Flowgraph
        where: {epsilon: ">= 0.5"}
        tolerance: 0.05

:func:`parse_claims` validates such a list before anything runs (it needs no results) and
returns normalised dicts; :func:`evaluate_claims` checks them against a tidy frame of ok
results and returns, per claim, a verdict (``held`` / ``not held`` / ``not evaluated``), a
one-line summary with the numbers, and the numbers of every group.

Decisions beyond ``docs/claims.md`` (all small):

- A ``where`` (or ``at``) condition on a parameter ignores the rows of mechanisms that do not
  take the parameter (NaN), as a figure draws such a mechanism as a reference line across
  the x axis; a condition in a *selector* is strict (NaN never matches).
- The default ``per`` is ``dataset`` plus every parameter that varies *within* a compared
  series and that every compared series has: a parameter only some series take (Truncation's
  ``theta``, Mondrian's lack of ``epsilon``) is not a group column, so a series that varies
  in it is ambiguous and the claim says so (fix it in the selector, use ``best_over``, or
  name it in ``per``). A series that lacks a column of an explicit ``per`` altogether is
  compared in every group (a reference line).
- A selector may say ``worst_over: p``, the dual of ``best_over``: it keeps, per group, the
  value of ``p`` with the worst mean. Comparing ``{label: X, worst_over: p}`` with
  ``{label: X, best_over: p}`` within a tolerance states that ``p`` hardly matters
  ("the three strategies produce similar results", day2016 Fig. 7).
- ``best_over: label`` (or ``worst_over: label``) with a list of labels keeps, per group,
  the best (worst) of those series: ``{label: [T, pi_theta], best_over: label}`` is "the
  better of T and pi_theta" (day2016 Table 2: "Truncation and our pi_theta have the lowest
  L1 error").
- A group that lacks one of the compared series (or a finite value) is skipped and counted
  in ``n_skipped``; the verdict counts the other groups.
- ``table`` claims may restrict the table to some ``metric`` rows and filter with
  ``where``; ``better: lower`` makes a table check one-sided (``ours <= paper *
  (1 + tolerance)``, e.g. running times); without a ``tolerance`` they take the table
  plot's ``tolerance`` if it has one.
- A ``value`` or ``table`` check against a published 0 holds only when ours is 0 too.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from privpub.errors import ConfigError, PrivpubError
from privpub.results import VERDICTS

__all__ = [
    "KINDS",
    "VERDICTS",
    "parse_claims",
    "evaluate_claims",
    "referenced_labels",
    "referenced_columns",
    "selector_name",
    "noise_free_frame",
]

KINDS = ("compare", "trend", "best", "value", "bound", "table")
STATS = ("mean", "median", "std", "min", "max")

_COMMON = {
    "id",
    "text",
    "source",
    "kind",
    "where",
    "per",
    "tolerance",
    "holds_in",
    "stat",
    "deviation",
    "paper_reading",
}
_FIELDS = {
    "compare": {"metric", "series", "than", "better", "factor"},
    "trend": {"metric", "series", "along", "direction"},
    "best": {"metric", "among", "expect", "series", "better"},
    "value": {"metric", "series", "at", "paper"},
    "bound": {"metric", "series", "at_most", "at_least"},
    "table": {"plot", "metric", "better"},
}
_REQUIRED = {
    "compare": ("metric", "series", "than"),
    "trend": ("metric", "series", "along", "direction"),
    "best": ("metric", "among", "expect"),
    "value": ("metric", "series", "paper"),
    "bound": ("metric", "series"),
    "table": ("plot",),
}
_OVER = ("best_over", "worst_over")
_SELECTOR_SPECIAL = ("label", "mechanism", *_OVER)
_COMPARISON = re.compile(r"^\s*(>=|<=|!=|==|>|<)\s*(.+?)\s*$")
_ID = re.compile(r"^[A-Za-z0-9_.\-]+$")
_GREEK = {"epsilon": "ε", "theta": "θ", "delta": "δ"}


class _NotEvaluated(Exception):
    """A claim that the results cannot decide; the message is the reason."""


# --------------------------------------------------------------------------- parsing


def _fail(where: str, cid, message: str):
    name = f"claim {cid!r}" if cid is not None else "claims"
    raise ConfigError(f"experiment {where}: {name}: {message}")


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _parse_condition(value, fail):
    """A where/selector value: a scalar, a list of scalars or a comparison string."""
    if isinstance(value, (list, tuple)):
        if not value:
            fail("an empty list matches nothing")
        for v in value:
            if isinstance(v, (list, tuple, dict)) or v is None:
                fail(f"a list of values must hold scalars, got {v!r}")
        return list(value)
    if isinstance(value, dict) or value is None:
        fail(f"a condition must be a value, a list or a comparison like '>= 0.5', got {value!r}")
    if isinstance(value, str):
        m = _COMPARISON.match(value)
        if m:
            op, operand = m.groups()
            try:
                float(operand)
            except ValueError:
                if op not in ("==", "!="):
                    fail(f"comparison {value!r} needs a number after {op!r}")
    return value


def _parse_filter(raw, what: str, fail) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        fail(f"{what} must be a mapping of column to value, got {raw!r}")
    out = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not key:
            fail(f"{what} keys must be column names, got {key!r}")
        if key in _OVER:
            fail(f"{key} belongs in a series selector, not in {what}")
        out[key] = _parse_condition(value, lambda m, k=key: fail(f"{what} {k}: {m}"))
    return out


def _parse_selector(raw, what: str, fail) -> dict:
    """A series: a label string or a mapping that narrows it."""
    if isinstance(raw, str):
        if not raw.strip():
            fail(f"{what} is an empty label")
        return {"label": raw}
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return {"label": str(raw)}
    if not isinstance(raw, Mapping) or not raw:
        fail(f"{what} must be a label or a mapping like {{label: RPS, depth: 50}}, got {raw!r}")
    out = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not key:
            fail(f"{what} keys must be column names, got {key!r}")
        if key in _OVER:
            if not isinstance(value, str) or not value:
                fail(f"{what} {key} must name one parameter, got {value!r}")
            out[key] = value
        elif key in ("label", "mechanism") and not isinstance(value, (str, list)):
            out[key] = str(value)
        else:
            out[key] = _parse_condition(value, lambda m, k=key: fail(f"{what} {k}: {m}"))
    if not set(out) - set(_OVER):
        fail(f"{what} needs a label, a mechanism or a column besides {'/'.join(_OVER)}")
    if all(k in out for k in _OVER):
        fail(f"{what} takes best_over or worst_over, not both")
    return out


def _number(raw, name: str, fail, *, low=None, low_open=False, high=None):
    if not _is_number(raw) or not math.isfinite(float(raw)):
        fail(f"{name} must be a number, got {raw!r}")
    value = float(raw)
    if low is not None and (value < low or (low_open and value == low)):
        fail(f"{name} must be {'>' if low_open else '>='} {low}, got {raw!r}")
    if high is not None and value > high:
        fail(f"{name} must be <= {high}, got {raw!r}")
    return value


def _parse_one(raw, where: str, index: int, plots) -> dict:
    cid = raw.get("id") if isinstance(raw, Mapping) else None
    if not isinstance(raw, Mapping):
        _fail(where, None, f"entry {index + 1} must be a mapping, got {raw!r}")
    if not isinstance(cid, str) or not _ID.match(cid):
        _fail(
            where,
            cid if isinstance(cid, str) else None,
            f"entry {index + 1} needs an 'id' of letters, digits, '_', '-' or '.', got {cid!r}",
        )

    def fail(message):
        _fail(where, cid, message)

    kind = raw.get("kind")
    if kind not in KINDS:
        fail(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    allowed = _COMMON | _FIELDS[kind]
    unknown = sorted(set(raw) - allowed)
    if unknown:
        fail(f"unknown key(s) {unknown} for kind {kind}; allowed: {', '.join(sorted(allowed))}")
    for key in _REQUIRED[kind]:
        if raw.get(key) is None:
            fail(f"kind {kind} needs {key!r}")
    for key in ("text", "source"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            fail(f"needs {key!r}: the paper's words and where it says them")
    deviation = raw.get("deviation")
    if deviation is not None:
        if not isinstance(deviation, str) or not deviation.strip():
            fail(f"deviation must be one line of text, got {deviation!r}")
        deviation = deviation.strip()
        if "\n" in deviation:
            fail("deviation must be one line")
    reading = raw.get("paper_reading")
    if reading is not None:
        has_series = kind in ("compare", "trend", "value", "bound") or (
            kind == "best" and raw.get("series") is not None
        )
        if not has_series:
            fail(
                "paper_reading names the series that replaces the claim's series: kinds "
                "compare, trend, value, bound, or best with a series"
            )
        if not isinstance(reading, str) or not reading.strip():
            fail(f"paper_reading must be a series label, got {reading!r}")
        reading = reading.strip()

    claim = {
        "id": cid,
        "text": " ".join(raw["text"].split()),
        "source": raw["source"].strip(),
        "kind": kind,
        "metric": None,
        "where": _parse_filter(raw.get("where"), "where", fail),
        "per": None,
        "tolerance": 0.0,
        "holds_in": "all",
        "stat": "mean",
        "deviation": deviation,
        "paper_reading": reading,
        "better": None,
    }
    if raw.get("tolerance") is not None:
        claim["tolerance"] = _number(raw["tolerance"], "tolerance", fail, low=0)
    claim["tolerance_given"] = raw.get("tolerance") is not None
    holds_in = raw.get("holds_in", "all")
    if holds_in != "all":
        holds_in = _number(
            holds_in, "holds_in ('all' or a fraction)", fail, low=0, low_open=True, high=1
        )
    claim["holds_in"] = holds_in
    stat = raw.get("stat", "mean")
    if stat not in STATS:
        fail(f"stat must be one of {', '.join(STATS)}, got {stat!r}")
    claim["stat"] = stat
    per = raw.get("per")
    if per is not None:
        per = [per] if isinstance(per, str) else per
        if not isinstance(per, list) or not all(isinstance(c, str) and c for c in per):
            fail(f"per must be a column name or a list of them, got {raw.get('per')!r}")
        if len(set(per)) != len(per):
            fail(f"per names a column twice: {per}")
        claim["per"] = list(per)
    better = raw.get("better")
    if better is not None and better not in ("lower", "higher"):
        fail(f"better must be 'lower' or 'higher', got {better!r}")
    claim["better"] = better

    metric = raw.get("metric")
    if kind == "table":
        if metric is not None:
            metric = [metric] if isinstance(metric, str) else metric
            if (
                not isinstance(metric, list)
                or not metric
                or not all(isinstance(m, str) and m for m in metric)
            ):
                fail(f"metric must be a metric name or a list of them, got {raw['metric']!r}")
    elif not isinstance(metric, str) or not metric:
        fail(f"metric must be a metric name, got {metric!r}")
    for name in [metric] if isinstance(metric, str) else metric or []:
        if not name.startswith("info/"):
            from privpub.registry import get_metric

            try:
                get_metric(name)
            except PrivpubError as exc:
                fail(str(exc).splitlines()[0])
    claim["metric"] = metric

    selectors = []
    if kind in ("compare", "trend", "value", "bound") or (
        kind == "best" and raw.get("series") is not None
    ):
        claim["series"] = _parse_selector(raw["series"], "series", fail)
        selectors.append(claim["series"])
    if kind == "compare":
        than = raw["than"]
        than = than if isinstance(than, list) else [than]
        if not than:
            fail("than needs at least one series")
        claim["than"] = [_parse_selector(t, "than", fail) for t in than]
        selectors += claim["than"]
        claim["factor"] = _number(raw.get("factor", 1), "factor", fail, low=0, low_open=True)
    elif kind == "trend":
        along, direction = raw["along"], raw["direction"]
        if not isinstance(along, str) or not along:
            fail(f"along must name a parameter, got {along!r}")
        if direction not in ("decreasing", "increasing"):
            fail(f"direction must be 'decreasing' or 'increasing', got {direction!r}")
        claim["along"], claim["direction"] = along, direction
    elif kind == "best":
        among, expect = raw["among"], raw["expect"]
        if isinstance(among, str):
            if not among:
                fail("among must name a parameter or list series")
            if isinstance(expect, (list, dict)):
                fail(f"with among: {among}, expect must be one value of it, got {expect!r}")
            claim["among"], claim["expect"] = among, expect
        elif isinstance(among, list):
            if raw.get("series") is not None:
                fail("series is only for best among a parameter; list the series in among")
            if len(among) < 2:
                fail("among needs at least two series")
            claim["among"] = [_parse_selector(s, "among", fail) for s in among]
            claim["expect"] = _parse_selector(expect, "expect", fail)
            selectors += [*claim["among"], claim["expect"]]
        else:
            fail(f"among must name a parameter or list series, got {among!r}")
    elif kind == "value":
        claim["at"] = _parse_filter(raw.get("at"), "at", fail)
        claim["paper"] = _number(raw["paper"], "paper", fail)
    elif kind == "bound":
        if raw.get("at_most") is None and raw.get("at_least") is None:
            fail("a bound needs at_most, at_least or both")
        for side in ("at_most", "at_least"):
            claim[side] = None if raw.get(side) is None else _number(raw[side], side, fail)
    elif kind == "table":
        plot = raw["plot"]
        if not isinstance(plot, str) or not plot:
            fail(f"plot must name a table plot, got {plot!r}")
        claim["plot"] = plot
        if plots is not None:
            tables = {
                p.get("name"): p
                for p in plots
                if isinstance(p, Mapping) and p.get("kind") == "table"
            }
            if plot not in tables:
                fail(f"no table plot named {plot!r}; table plots: {sorted(map(str, tables))}")
            if not tables[plot].get("paper"):
                fail(f"table plot {plot!r} has no 'paper:' numbers to check")

    # parameters that a group is not split by
    reserved = set()
    if kind == "trend":
        reserved.add(claim["along"])
    if kind == "best" and isinstance(claim["among"], str):
        reserved.add(claim["among"])
    overs = set().union(*(_overs(s) for s in selectors))
    if claim["per"] is not None:
        clash = sorted(set(claim["per"]) & (reserved | overs))
        if clash:
            fail(f"per must not name {clash}: the claim runs along / chooses among it")
    info = isinstance(metric, str) and metric.startswith("info/")
    if info and better is None and (kind in ("compare", "best") or overs):
        fail(f"{metric} is not a registered metric: say better: lower or better: higher")
    return claim


def parse_claims(raw, *, where: str, plots=None) -> list[dict]:
    """Validate an experiment's ``claims:`` list (``docs/claims.md``) and normalise it.

    Parameters
    ----------
    raw : list of mappings or None
        The YAML ``claims:`` block (None or empty: no claims).
    where : str
        The experiment's name, for messages.
    plots : list of dict, optional
        The experiment's plots: when given, a ``table`` claim's plot must be one of its
        ``table`` plots with ``paper:`` numbers.

    Returns
    -------
    list of dict
        One normalised claim per entry: selectors as mappings (``"RPS"`` becomes
        ``{"label": "RPS"}``), ``than`` a list, defaults filled in (``tolerance`` 0,
        ``holds_in`` ``"all"``, ``stat`` ``"mean"``, ``factor`` 1).

    Raises
    ------
    ConfigError
        One line naming the experiment and the claim: unknown kind or key, missing field,
        bad condition, unknown metric, an ``info/`` metric without ``better``, duplicate id.
    """
    if raw is None:
        return []
    if not isinstance(raw, list):
        _fail(where, None, f"'claims' must be a list, got {type(raw).__name__}")
    claims, seen = [], set()
    for i, entry in enumerate(raw):
        claim = _parse_one(entry, where, i, plots)
        if claim["id"] in seen:
            _fail(where, claim["id"], "duplicate id (ids must be unique within the experiment)")
        seen.add(claim["id"])
        claims.append(claim)
    return claims


def _overs(selector: dict | None) -> set[str]:
    """The parameters a selector keeps the best (or worst) value of."""
    return {selector[k] for k in _OVER if selector and k in selector}


def _selectors(claim: dict) -> list[dict]:
    out = []
    if isinstance(claim.get("series"), dict):
        out.append(claim["series"])
    out += claim.get("than") or []
    if isinstance(claim.get("among"), list):
        out += claim["among"]
    if isinstance(claim.get("expect"), dict):
        out.append(claim["expect"])
    return out


def referenced_labels(claims: list[dict]) -> set[str]:
    """Every series label the (parsed) claims name, for checking them against the
    experiment's mechanism labels."""
    labels = set()
    for claim in claims:
        for sel in _selectors(claim):
            value = sel.get("label")
            labels.update(value if isinstance(value, list) else [value] if value else [])
        if claim.get("paper_reading"):
            labels.add(claim["paper_reading"])
        value = claim["where"].get("label")
        if isinstance(value, list):
            labels.update(value)
        elif isinstance(value, str) and not _COMPARISON.match(value):
            labels.add(value)
    return {str(v) for v in labels}


def referenced_columns(claims: list[dict]) -> set[str]:
    """Every result column or parameter the (parsed) claims filter, group or run by."""
    cols = set()
    for claim in claims:
        cols |= set(claim["where"]) | set(claim.get("at") or {}) | set(claim["per"] or [])
        if claim["kind"] == "trend":
            cols.add(claim["along"])
        if claim["kind"] == "best" and isinstance(claim["among"], str):
            cols.add(claim["among"])
        for sel in _selectors(claim):
            cols |= {k for k in sel if k not in _OVER} | _overs(sel)
    return cols


# --------------------------------------------------------------------------- filtering


def _match_one(column: pd.Series, wanted) -> np.ndarray:
    """Rows equal to ``wanted`` (numbers as numbers, else text) or satisfying a comparison."""
    if isinstance(wanted, str):
        m = _COMPARISON.match(wanted)
        if m:
            op, operand = m.groups()
            try:
                number = float(operand)
            except ValueError:
                text = column.astype(str).to_numpy()
                return text == operand if op == "==" else text != operand
            values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
            close = np.isclose(values, number, rtol=1e-12, atol=0.0)
            with np.errstate(invalid="ignore"):
                result = {
                    ">=": (values > number) | close,
                    "<=": (values < number) | close,
                    ">": (values > number) & ~close,
                    "<": (values < number) & ~close,
                    "==": close,
                    "!=": ~close & ~np.isnan(values),
                }[op]
            return result
    if isinstance(wanted, bool):
        wanted = float(wanted)
    try:
        number = float(wanted)
    except (TypeError, ValueError):
        return (column.astype(str) == str(wanted)).to_numpy()
    numeric = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    if np.isnan(numeric).all() and column.notna().any():  # a text column: compare as text
        return (column.astype(str) == str(wanted)).to_numpy()
    return np.isclose(numeric, number, rtol=1e-12, atol=0.0)


def _match(frame: pd.DataFrame, key: str, wanted) -> np.ndarray:
    """``frame``'s rows whose ``key`` matches ``wanted``; ``dataset`` matches the dataset's
    name or its display label. A key that is no column is a reason not to evaluate."""
    options = wanted if isinstance(wanted, list) else [wanted]
    columns = [key]
    if key == "dataset" and "dataset_label" in frame.columns:
        columns.append("dataset_label")
    columns = [c for c in columns if c in frame.columns]
    if not columns:
        raise _NotEvaluated(f"the results have no column {key!r}")
    mask = np.zeros(len(frame), dtype=bool)
    for col in columns:
        for option in options:
            mask |= _match_one(frame[col], option)
    return mask


def _apply_where(frame: pd.DataFrame, where: dict, params: set[str]) -> pd.DataFrame:
    """Filter by ``where``; rows lacking a parameter (NaN) pass a condition on it."""
    for key, wanted in where.items():
        mask = _match(frame, key, wanted)
        if key in params and key in frame.columns:
            mask |= frame[key].isna().to_numpy()
        frame = frame[mask]
    return frame


# --------------------------------------------------------------------------- numbers


def _plain(value):
    """A JSON-friendly scalar: Python numbers, integral floats as ints, NaN/inf as None."""
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _num(value) -> str:
    """A number in three significant digits (large numbers in full)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    value = float(value)
    if math.isinf(value):
        return "∞"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _ratio_text(ratio: float) -> str:
    """A ratio in three significant digits, or four decimals when it is within 1% of 1."""
    if isinstance(ratio, float) and math.isfinite(ratio) and 0 < abs(ratio - 1) < 0.01:
        return f"{ratio:.4f}"
    return _num(ratio)


def _key_value(value):
    """Hashable canonical form of a group column value (NaN -> None)."""
    if value is None:
        return None
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        value = float(value)
        return None if math.isnan(value) else value
    return str(value)


def _sort_key(value):
    """Numbers before text, numbers by value."""
    if isinstance(value, float):
        return (0, value, "")
    return (1, 0.0, "" if value is None else str(value))


def _group_order(key: tuple) -> list:
    return [_sort_key(v) for v in key]


def _display(column: str) -> str:
    return "dataset" if column == "dataset_label" else column


def _group_text(group: dict) -> str:
    parts = []
    for col, value in group.items():
        if col == "dataset":
            parts.append(str(value))
        else:
            parts.append(f"{_GREEK.get(col, col)}={_num(value) if _is_number(value) else value}")
    return " ".join(parts) or "all results"


def selector_name(selector: dict, chosen=None) -> str:
    """A series as text: ``RPS (depth=50)``, ``Truncation (best theta)``; with the value
    its best_over / worst_over chose in a group: ``Truncation (best theta=16)``."""
    head = selector.get("label") or selector.get("mechanism") or ""
    if isinstance(head, list):
        head = "/".join(map(str, head))
    rest = [f"{k}={v}" for k, v in selector.items() if k not in _SELECTOR_SPECIAL]
    if selector.get("label") and selector.get("mechanism"):
        rest.insert(0, f"mechanism={selector['mechanism']}")
    for k in _OVER:
        if k in selector:
            value = "" if chosen is None else f"={_plain(chosen)}"
            rest.append(f"{k.split('_')[0]} {selector[k]}{value}")
    if not head:
        return ", ".join(rest)
    return f"{head} ({', '.join(rest)})" if rest else str(head)


def _ratio(ours: float, other: float) -> float:
    if other == 0:
        return 1.0 if ours == 0 else math.inf
    return ours / other


# --------------------------------------------------------------------------- cells and groups


def _param_names(frame: pd.DataFrame) -> list[str]:
    names: set[str] = set()
    if "params" in frame.columns:
        for text in pd.unique(frame["params"].astype(str)):
            try:
                names |= set(json.loads(text))
            except (TypeError, ValueError):
                continue
    return sorted(n for n in names if n in frame.columns)


def _cells(rows: pd.DataFrame, stat: str) -> pd.DataFrame:
    """One row per cell (dataset, options, mechanism, label, parameters): its statistic over
    the repetitions (finite values only) as ``_value``, and the cell's columns."""
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


def _within_noise(ours_cell, other_cell, higher: bool, factor: float, tol: float):
    """Whether a missed comparison is within two standard errors of holding.

    The check ``factor * ours <= (1 + tol) * other`` (lower is better; mirrored when higher
    is better) misses by ``d > 0``; the miss is *within noise* when ``d`` is at most twice the
    standard error of the difference of the two means, ``sqrt(a^2 se_ours^2 + b^2
    se_other^2)``. None when a standard error is unknown (one repetition, stat not mean)."""
    se_o, se_x = ours_cell.get("_se"), other_cell.get("_se")
    if se_o is None or se_x is None or not (np.isfinite(se_o) and np.isfinite(se_x)):
        return None
    ours, other = float(ours_cell["_value"]), float(other_cell["_value"])
    if higher:
        miss, a, b = factor * other - (1 + tol) * ours, 1 + tol, factor
    else:
        miss, a, b = factor * ours - (1 + tol) * other, factor, 1 + tol
    return bool(miss <= 2 * math.sqrt((a * se_o) ** 2 + (b * se_x) ** 2))


def _best_over(cells: pd.DataFrame, over: str, higher: bool) -> pd.DataFrame:
    """Per (dataset, label, other parameters), the cell whose ``over`` value is best."""
    if over not in cells.columns:
        raise _NotEvaluated(f"best_over / worst_over names {over!r}, which no result has")

    def rest(text):
        try:
            return json.dumps(
                {k: v for k, v in json.loads(text).items() if k != over}, sort_keys=True
            )
        except (TypeError, ValueError):
            return str(text)

    if "params" not in cells.columns:
        raise _NotEvaluated("best_over / worst_over need the results' params column")
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


class _Series:
    """A selected series: its cells (one number each) after best_over. ``pick`` ("max" or
    "min") keeps the best of several cells in a group (``best_over: label``)."""

    def __init__(self, name: str, cells: pd.DataFrame, pick: str | None = None):
        self.name = name
        self.cells = cells
        self.pick = pick


def _select(frame, selector, *, stat, higher, params) -> _Series:
    name = selector_name(selector)
    rows = frame
    for key, wanted in selector.items():
        if key in _OVER:
            continue
        narrowed = rows[_match(rows, key, wanted)]
        if narrowed.empty:
            values = sorted(pd.unique(rows[key].dropna()), key=lambda v: _sort_key(_key_value(v)))
            present = [str(_plain(v)) for v in values]
            shown = present[:12] + (["..."] if len(present) > 12 else [])
            where = "" if rows is frame else " among its rows"
            raise _NotEvaluated(
                f"no results for series {name!r}: no {key} matches {wanted!r}{where} "
                f"(present: {', '.join(shown) or 'none'})"
            )
        rows = narrowed
    cells = _cells(rows, stat)
    if cells.empty:
        raise _NotEvaluated(f"series {name!r} has no finite values")
    pick = None
    for key in _OVER:
        if key in selector:
            if higher is None:
                raise _NotEvaluated(f"{key} needs to know which values are better")
            keep_high = higher != (key == "worst_over")
            if selector[key] in ("label", "mechanism"):  # the best of several series
                pick = "max" if keep_high else "min"
            else:
                cells = _best_over(cells, selector[key], keep_high)
    series = _Series(name, cells, pick)
    series.selector = selector
    return series


def _picked_name(s: _Series, cell) -> str:
    """A series' name; with ``best_over: label``, the label it picked in this group."""
    if s.pick:
        return str(cell.get("label"))
    over = next((s.selector[k] for k in _OVER if k in getattr(s, "selector", {})), None)
    if over is not None and over in cell:
        return selector_name(s.selector, chosen=cell[over])
    return s.name


def _default_per(series: list[_Series], params: list[str], exclude: set[str]) -> list[str]:
    per = ["dataset_label" if "dataset_label" in series[0].cells.columns else "dataset"]
    for p in params:
        if p in exclude:
            continue
        if not all(p in s.cells.columns and s.cells[p].notna().any() for s in series):
            continue
        if any(s.cells[p].map(_key_value).nunique(dropna=False) > 1 for s in series):
            per.append(p)
    return per


def _resolve_per(claim, series, params, exclude, frame) -> list[str]:
    if claim["per"] is None:
        return _default_per(series, params, exclude)
    per = []
    for col in claim["per"]:
        col = "dataset_label" if col == "dataset" and "dataset_label" in frame.columns else col
        if col not in frame.columns:
            raise _NotEvaluated(f"per names {col!r}, which no result has")
        per.append(col)
    return per


def _table_of(s: _Series, per: list[str], extra: list[str] = ()) -> dict:
    """``{group key: cell row}`` over ``per`` (+ ``extra``); a per column the series lacks
    altogether is a wildcard (None at its position... marked by ``_ANY``)."""
    cols = [*per, *extra]
    out: dict[tuple, list] = {}
    for _, cell in s.cells.iterrows():
        key = tuple(
            _ANY
            if (c not in s.cells.columns or s.cells[c].isna().all()) and c in per
            else _key_value(cell.get(c))
            for c in cols
        )
        out.setdefault(key, []).append(cell)
    for key, found in out.items():
        if len(found) > 1 and s.pick:
            found.sort(key=lambda c: c["_value"], reverse=s.pick == "max")
            out[key] = found[:1]
        elif len(found) > 1:
            group = dict(zip(map(_display, cols), key, strict=True))
            varies = _differing(pd.DataFrame(found))
            raise _NotEvaluated(
                f"series {s.name!r} is not one cell in group {_group_text(_shown(group))}: "
                f"it varies in {', '.join(varies)} (fix it in the selector, add it to per, "
                f"or use best_over)"
            )
    return {k: v[0] for k, v in out.items()}


_ANY = ("*any*",)  # a wildcard group value: the series does not take that parameter


def _shown(group: dict) -> dict:
    return {k: _plain(v) for k, v in group.items() if v is not _ANY}


def _align(tables: list[dict], n_per: int):
    """Group keys over the first ``n_per`` positions: every concrete key any table has, with
    wildcards expanded to the values seen; returns ``(keys, lookup)``."""
    seen: list[set] = [set() for _ in range(n_per)]
    for table in tables:
        for key in table:
            for i in range(n_per):
                if key[i] is not _ANY:
                    seen[i].add(key[i])

    keys = set()
    for table in tables:
        for key in table:
            options = [
                sorted(seen[i], key=_sort_key) if key[i] is _ANY else [key[i]] for i in range(n_per)
            ]
            keys.update(itertools.product(*options))
    ordered = sorted(keys, key=_group_order)

    def lookup(table: dict, key: tuple, rest: tuple = ()):
        for cand, cell in table.items():
            head, tail = cand[:n_per], cand[n_per:]
            if tail == rest and all(c is _ANY or c == k for c, k in zip(head, key, strict=True)):
                return cell
        return None

    return ordered, lookup


# --------------------------------------------------------------------------- kinds


def _higher(claim: dict):
    """True / False from ``better`` or the metric's registration; None when unknown."""
    if claim.get("better"):
        return claim["better"] == "higher"
    metric = claim.get("metric")
    if not isinstance(metric, str) or metric.startswith("info/"):
        return None
    from privpub.registry import get_metric

    try:
        return bool(get_metric(metric).higher_is_better)
    except PrivpubError as exc:
        raise _NotEvaluated(str(exc).splitlines()[0]) from None


def _better_score(ours, other, higher, factor=1.0) -> float:
    """How far ``ours`` is from beating ``other`` (<= 1: it does; the worst group has the
    largest score)."""
    if higher:
        return _ratio(factor * other, ours) if ours >= 0 else math.inf
    return _ratio(factor * ours, other)


def _beats(ours, other, higher, factor, tol) -> bool:
    if higher:
        return ours * (1 + tol) >= factor * other - 1e-12 * abs(other)
    return factor * ours <= other * (1 + tol) + 1e-12 * abs(other)


def _rows_for(frame, claim, params) -> pd.DataFrame:
    rows = frame
    metric = claim.get("metric")
    if isinstance(metric, str):
        rows = rows[rows["metric"].astype(str) == metric]
        if rows.empty:
            present = sorted(map(str, pd.unique(frame["metric"])))
            raise _NotEvaluated(f"no results for metric {metric!r} (metrics present: {present})")
    where = {**claim["where"], **(claim.get("at") or {})}
    rows = _apply_where(rows, where, set(params))
    if rows.empty:
        raise _NotEvaluated(f"no results match where {_where_text(where)}")
    return rows.assign(_v=rows["value"])


def _where_text(where: dict) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in where.items()) + "}"


def _eval_compare(claim, frame, params):
    higher = _higher(claim)
    if higher is None:
        raise _NotEvaluated("cannot tell whether lower or higher is better: say better:")
    rows = _rows_for(frame, claim, params)
    sels = [claim["series"], *claim["than"]]
    series = [_select(rows, s, stat=claim["stat"], higher=higher, params=params) for s in sels]
    exclude = set().union(*(_overs(s) for s in sels))
    per = _resolve_per(claim, series, params, exclude, rows)
    tables = [_table_of(s, per) for s in series]
    keys, lookup = _align(tables, len(per))
    groups, skipped = [], []
    tol, factor = claim["tolerance"], claim["factor"]
    for key in keys:
        cells = [lookup(t, key) for t in tables]
        group = _shown(dict(zip(map(_display, per), key, strict=True)))
        if any(c is None for c in cells):
            missing = [s.name for s, c in zip(series, cells, strict=True) if c is None]
            skipped.append({"group": group, "missing": missing})
            continue
        ours = float(cells[0]["_value"])
        others = {
            _picked_name(s, c): float(c["_value"])
            for s, c in zip(series[1:], cells[1:], strict=True)
        }
        closest = max(others, key=lambda n: _better_score(ours, others[n], higher, factor))
        other = others[closest]
        held = all(_beats(ours, o, higher, factor, tol) for o in others.values())
        other_cell = next(c for s, c in zip(series[1:], cells[1:], strict=True)
                          if _picked_name(s, c) == closest)
        entry = {
            "group": group,
            "ours": ours,
            "other": other,
            "than": closest,
            "ratio": _ratio(ours, other),
            "held": held,
            "others": others,
            "_score": _better_score(ours, other, higher, factor),
        }
        if not held:
            entry["within_noise"] = _within_noise(cells[0], other_cell, higher, factor, tol)
        if _picked_name(series[0], cells[0]) != series[0].name:
            entry["series"] = _picked_name(series[0], cells[0])
        groups.append(entry)
    if factor != 1 or tol:
        need = (1 + tol) / factor if not higher else factor / (1 + tol)
        need = f"; needs ratio {'>=' if higher else '<='} {_num(need)}"
    else:
        need = ""

    def describe(g):
        head = f"{g['series']} " if "series" in g else ""
        return f"{head}{_num(g['ours'])} vs {g['than']} {_num(g['other'])}"

    describe.need = need
    return groups, skipped, describe


def _eval_trend(claim, frame, params):
    rows = _rows_for(frame, claim, params)
    along = claim["along"]
    if along not in rows.columns:
        raise _NotEvaluated(f"along names {along!r}, which no result has")
    higher = None
    if _overs(claim["series"]):
        higher = _higher(claim)
    s = _select(rows, claim["series"], stat=claim["stat"], higher=higher, params=params)
    exclude = {along} | (_overs(claim["series"]))
    per = _resolve_per(claim, [s], params, exclude, rows)
    table = _table_of(s, per, [along])
    by_group: dict[tuple, dict] = {}
    for key, cell in table.items():
        if key[-1] is None:
            continue
        by_group.setdefault(key[:-1], {})[key[-1]] = float(cell["_value"])
    decreasing = claim["direction"] == "decreasing"
    tol = claim["tolerance"]
    groups, skipped = [], []
    for gkey in sorted(by_group, key=_group_order):
        group = _shown(dict(zip(map(_display, per), gkey, strict=True)))
        points = by_group[gkey]
        xs = sorted(points, key=_sort_key)
        if len(xs) < 2:
            skipped.append({"group": group, "missing": [f"a second {along} value"]})
            continue
        worst, held = None, True
        for a, b in itertools.pairwise(xs):
            prev, nxt = points[a], points[b]
            slack = tol * abs(prev)
            ok = nxt <= prev + slack if decreasing else nxt >= prev - slack
            held &= ok
            score = _ratio(nxt, prev) if decreasing else _ratio(prev, nxt)
            if worst is None or score > worst[0]:
                worst = (score, a, b, prev, nxt)
        score, a, b, prev, nxt = worst
        groups.append(
            {
                "group": group,
                "ours": nxt,
                "other": prev,
                "ratio": _ratio(nxt, prev),
                "held": bool(held),
                "step": [_plain(a), _plain(b)],
                "values": {str(_plain(x)): points[x] for x in xs},
                "_score": score,
            }
        )
    sym = _GREEK.get(along, along)

    def describe(g):
        a, b = _num(g["step"][0]), _num(g["step"][1])
        return f"{sym} {a}→{b}: {_num(g['other'])} → {_num(g['ours'])}"

    return groups, skipped, describe


def _eval_best(claim, frame, params):
    higher = _higher(claim)
    if higher is None:
        raise _NotEvaluated("cannot tell whether lower or higher is better: say better:")
    rows = _rows_for(frame, claim, params)
    tol = claim["tolerance"]
    groups, skipped = [], []
    if isinstance(claim["among"], str):
        among = claim["among"]
        if among not in rows.columns:
            raise _NotEvaluated(f"among names {among!r}, which no result has")
        selector = claim.get("series")
        if selector is not None:
            s = _select(rows, selector, stat=claim["stat"], higher=higher, params=params)
        else:
            cells = _cells(rows, claim["stat"])
            if cells.empty:
                raise _NotEvaluated("no finite values")
            s = _Series("all results", cells)
        exclude = {among} | (_overs(selector))
        per = _resolve_per(claim, [s], params, exclude, rows)
        table = _table_of(s, per, [among])
        by_group: dict[tuple, dict] = {}
        for key, cell in table.items():
            if key[-1] is not None:
                by_group.setdefault(key[:-1], {})[key[-1]] = cell
        expect = _key_value(claim["expect"])
        expect_name = f"{among}={_plain(expect)}"
        candidates = [
            (gkey, {f"{among}={_plain(v)}": c for v, c in found.items()})
            for gkey, found in sorted(by_group.items(), key=lambda kv: _group_order(kv[0]))
        ]
    else:
        series = [
            _select(rows, sel, stat=claim["stat"], higher=higher, params=params)
            for sel in [claim["expect"], *claim["among"]]
        ]
        exclude = {p for sel in [claim["expect"], *claim["among"]] for p in _overs(sel)}
        per = _resolve_per(claim, series, params, exclude, rows)
        tables = [_table_of(s, per) for s in series]
        keys, lookup = _align(tables, len(per))
        candidates = []
        for key in keys:
            found = {}
            for s, t in zip(series, tables, strict=True):
                cell = lookup(t, key)
                if cell is not None:
                    found[s.name] = cell
            candidates.append((key, found))
        expect_name = series[0].name
    for gkey, found in candidates:
        vals = {n: float(c["_value"]) for n, c in found.items()}
        ours = vals.get(expect_name)
        group = _shown(dict(zip(map(_display, per), gkey, strict=True)))
        rivals = {n: v for n, v in vals.items() if n != expect_name}
        if ours is None or not rivals:
            skipped.append(
                {"group": group, "missing": [expect_name] if ours is None else ["a rival"]}
            )
            continue
        runner = (max if higher else min)(rivals, key=rivals.get)
        other = rivals[runner]
        best = expect_name if _beats(ours, other, higher, 1.0, 0.0) else runner
        held = _beats(ours, other, higher, 1.0, tol)
        entry = {
            "group": group,
            "ours": ours,
            "other": other,
            "best": best,
            "rival": runner,
            "ratio": _ratio(ours, other),
            "held": held,
            "values": vals,
            "_score": _better_score(ours, other, higher),
        }
        if not held:
            entry["within_noise"] = _within_noise(found[expect_name], found[runner], higher,
                                                  1.0, tol)
        groups.append(entry)
    return (
        groups,
        skipped,
        lambda g: f"{expect_name} {_num(g['ours'])} vs {g['rival']} {_num(g['other'])}",
    )


def _eval_value(claim, frame, params):
    rows = _rows_for(frame, claim, params)
    s = _select(rows, claim["series"], stat=claim["stat"], higher=None, params=params)
    per = _resolve_per(claim, [s], params, set(), rows)
    table = _table_of(s, per)
    paper, tol = claim["paper"], claim["tolerance"]
    groups = []
    for key, cell in sorted(table.items(), key=lambda kv: _group_order(kv[0])):
        ours = float(cell["_value"])
        r = _ratio(ours, paper)
        groups.append(
            {
                "group": _shown(dict(zip(map(_display, per), key, strict=True))),
                "ours": ours,
                "other": paper,
                "paper": paper,
                "ratio": r,
                "held": abs(r - 1) <= tol + 1e-12,
                "_score": abs(r - 1),
            }
        )
    return groups, [], lambda g: f"ours {_num(g['ours'])} vs paper {_num(g['paper'])}"


def _eval_bound(claim, frame, params):
    """The series' statistic (``stat``: mean by default, or std, min, max, median) stays
    within ``at_most`` / ``at_least`` in every group, up to ``tolerance`` (relative)."""
    rows = _rows_for(frame, claim, params)
    s = _select(rows, claim["series"], stat=claim["stat"], higher=None, params=params)
    per = _resolve_per(claim, [s], params, set(), rows)
    table = _table_of(s, per)
    most, least, tol = claim["at_most"], claim["at_least"], claim["tolerance"]
    groups = []
    for key, cell in sorted(table.items(), key=lambda kv: _group_order(kv[0])):
        ours = float(cell["_value"])
        high = most is None or ours <= most + tol * abs(most) + 1e-12
        low = least is None or ours >= least - tol * abs(least) - 1e-12
        bound = most if not high or least is None else least
        groups.append(
            {
                "group": _shown(dict(zip(map(_display, per), key, strict=True))),
                "ours": ours,
                "other": bound,
                "ratio": _ratio(ours, bound),
                "held": bool(high and low),
                "_score": max(
                    (ours - most) / (abs(most) or 1) if most is not None else -math.inf,
                    (least - ours) / (abs(least) or 1) if least is not None else -math.inf,
                ),
            }
        )
    limits = " and ".join(
        f"{sign} {_num(v)}" for sign, v in (("<=", most), (">=", least)) if v is not None
    )
    return groups, [], lambda g: f"{claim['stat']} {_num(g['ours'])} (bound {limits})"


def _eval_table(claim, frame, params, plots):
    from plots.tables import agrees_at_precision, beyond_tolerance, ours_over_paper, table_cells

    tables = {
        p.get("name"): p for p in plots or [] if isinstance(p, Mapping) and p.get("kind") == "table"
    }
    plot = tables.get(claim["plot"])
    if plot is None:
        raise _NotEvaluated(f"no table plot named {claim['plot']!r}")
    if not plot.get("paper"):
        raise _NotEvaluated(f"table plot {claim['plot']!r} has no published numbers")
    tol = claim["tolerance"]
    if not claim.get("tolerance_given") and plot.get("tolerance") is not None:
        tol = float(plot["tolerance"])
    claim["tolerance"] = tol
    rows = frame
    if claim["metric"]:
        rows = rows[rows["metric"].astype(str).isin(claim["metric"])]
    rows = _apply_where(rows, claim["where"], set(params))
    if rows.empty:
        raise _NotEvaluated("no results for the table's cells")
    try:
        cells = table_cells(
            rows,
            rows=plot.get("rows", ["dataset"]),
            columns=plot.get("columns") or {},
            metrics=plot.get("metrics", [plot["metric"]] if plot.get("metric") else None),
            value=plot.get("value", "value"),
            where=plot.get("where"),
            paper=plot.get("paper"),
            stat=str(plot.get("stat", "mean")),
        )
    except PrivpubError as exc:
        raise _NotEvaluated(str(exc).splitlines()[0]) from None
    labels = {}
    if "dataset_label" in frame.columns:
        pairs = frame[["dataset", "dataset_label"]].drop_duplicates()
        for name, grp in pairs.groupby("dataset"):
            if len(grp) == 1:
                labels[name] = grp["dataset_label"].iloc[0]
    if claim["metric"]:  # the claim checks only some metrics of the table
        wanted = set(claim["metric"])
        metric_of = [{**c["row"], **c["column"]}.get("metric") for c in cells]
        cells = [c for c, m in zip(cells, metric_of, strict=True) if m is None or m in wanted]
    if cells and all(c["paper"] is None for c in cells):
        computed = sorted({str(v) for c in cells for v in c["row"].values()})
        raise _NotEvaluated(
            f"the paper publishes no number for the rows computed ({', '.join(computed[:8])})"
        )
    one_sided = claim.get("better")
    groups, skipped = [], []
    for cell in cells:
        group = {**cell["row"], **cell["column"]}
        if "dataset" in group:
            group["dataset"] = labels.get(group["dataset"], group["dataset"])
        group = {k: _plain(v) for k, v in group.items()}
        ours, paper = cell["ours"], cell["paper"]
        if paper is None:
            continue
        if math.isnan(ours):
            skipped.append({"group": group, "missing": ["our number"]})
            continue
        r = ours_over_paper(ours, paper)
        if one_sided == "lower":
            held, score = r <= 1 + tol + 1e-12, r
        elif one_sided == "higher":
            held = ours * (1 + tol) >= paper - 1e-12 * abs(paper)
            score = _ratio(paper, ours)
        else:  # within the tolerance, or equal at the paper's printed precision
            close = agrees_at_precision(ours, paper, cell.get("decimals", 0))
            held, score = not beyond_tolerance(r, tol) or close, abs(r - 1)
        groups.append(
            {
                "group": group,
                "ours": ours,
                "other": paper,
                "paper": paper,
                "ratio": r,
                "held": bool(held),
                "_score": score,
            }
        )
    return groups, skipped, lambda g: f"ours {_num(g['ours'])} vs paper {_num(g['paper'])}"


# --------------------------------------------------------------------------- evaluation


def _result(
    claim: dict,
    verdict: str,
    summary: str,
    groups=(),
    n_held=0,
    reason=None,
    n_skipped=0,
    worst: int | None = None,
) -> dict:
    def clean(g):
        out = {}
        for k, v in g.items():
            if k.startswith("_"):
                continue
            if isinstance(v, dict) and k != "group":
                v = {str(a): _plain(b) for a, b in v.items()}
            out[k] = _plain(v) if not isinstance(v, (dict, list)) else v
        out["held"] = bool(g["held"])
        return out

    return {
        "id": claim["id"],
        "text": claim["text"],
        "source": claim["source"],
        "kind": claim["kind"],
        "metric": claim.get("metric"),
        "plot": claim.get("plot"),
        "verdict": verdict,
        "summary": summary,
        "n_held": int(n_held),
        "n_groups": len(groups),
        "n_skipped": int(n_skipped),
        "tolerance": _plain(claim["tolerance"]) if claim["tolerance"] else 0,
        "holds_in": claim["holds_in"],
        "deviation": claim.get("deviation"),
        "reason": reason,
        "groups": [clean(g) for g in groups],
        "worst": worst,  # index of the group the summary names (worst, or closest if held)
    }


def _evaluate_one(claim: dict, frame: pd.DataFrame, plots) -> dict:
    try:
        if frame is None or frame.empty:
            raise _NotEvaluated("no results")
        needed = [c for c in ("metric", "value") if c not in frame.columns]
        if needed:
            raise _NotEvaluated(f"the results have no column(s) {needed}")
        params = _param_names(frame)
        kind = claim["kind"]
        if kind == "table":
            groups, skipped, describe = _eval_table(claim, frame, params, plots)
        else:
            evaluate = {
                "compare": _eval_compare,
                "trend": _eval_trend,
                "best": _eval_best,
                "value": _eval_value,
                "bound": _eval_bound,
            }[kind]
            groups, skipped, describe = evaluate(claim, frame, params)
    except _NotEvaluated as exc:
        return _result(claim, "not evaluated", f"not evaluated: {exc}", reason=str(exc))
    except Exception as exc:  # noqa: BLE001 - a claim never stops the drawing
        first = str(exc).splitlines()[0] if str(exc) else ""
        reason = f"evaluation failed: {type(exc).__name__}: {first}"
        return _result(claim, "not evaluated", f"not evaluated: {reason}", reason=reason)
    if not groups:
        reason = "no group has all the numbers"
        if skipped:
            first = skipped[0]
            reason += (
                f" (e.g. {_group_text(first['group'])} lacks "
                f"{', '.join(map(str, first['missing']))})"
            )
        return _result(
            claim,
            "not evaluated",
            f"not evaluated: {reason}",
            reason=reason,
            n_skipped=len(skipped),
        )
    n_held = sum(bool(g["held"]) for g in groups)
    n = len(groups)
    need = n if claim["holds_in"] == "all" else claim["holds_in"] * n
    verdict = "held" if n_held >= need - 1e-9 else "not held"
    worst = max(groups, key=lambda g: (not g["held"], g["_score"]))
    label = "closest" if worst["held"] else "worst"
    ratio = worst.get("ratio")
    summary = (
        f"held in {n_held} of {n} groups"
        + ("" if claim["holds_in"] == "all" else f" (needs {claim['holds_in']:.0%})")
        + f"; {label}: {_group_text(worst['group'])}: {describe(worst)}"
        + (
            f" (ratio {_ratio_text(ratio)}{getattr(describe, 'need', '')})"
            if ratio is not None
            else ""
        )
    )
    noise = [g["within_noise"] for g in groups if g.get("within_noise") is not None]
    if noise:
        summary += (
            f"; {sum(noise)} of {n - n_held} missed group(s) within two standard errors"
        )
    if skipped:
        summary += f"; {len(skipped)} group(s) skipped for missing numbers"
    result = _result(
        claim, verdict, summary, groups, n_held, n_skipped=len(skipped),
        worst=next(i for i, g in enumerate(groups) if g is worst),
    )
    if noise:
        result["n_missed_within_noise"] = int(sum(noise))
    return result


_SUB_KEYS = ("verdict", "summary", "n_held", "n_groups", "n_skipped", "reason", "groups")


def _sub(result: dict, **extra) -> dict:
    """The parts of a claim's result kept for a variant evaluation (paper reading, noise-free)."""
    return {**extra, **{k: result.get(k) for k in _SUB_KEYS}}


def _with_reading(claim: dict) -> dict:
    """The claim with its ``series`` replaced by the ``paper_reading`` series (same other
    selector keys: ``{label: RPS, degree_bound: n_minus_1}`` becomes ``{label: <reading>,
    degree_bound: n_minus_1}``)."""
    out = dict(claim)
    series = {k: v for k, v in claim["series"].items() if k != "mechanism"}
    out["series"] = {**series, "label": claim["paper_reading"]}
    return out


def _series_keys(frame: pd.DataFrame) -> pd.Series:
    """One key per series: dataset, options, mechanism, label and every parameter but
    epsilon (a noise-free twin is its series' cell at the largest epsilon)."""

    def rest(text):
        try:
            return json.dumps(
                {k: v for k, v in json.loads(text).items() if k != "epsilon"}, sort_keys=True
            )
        except (TypeError, ValueError):
            return str(text)

    cols = [c for c in ("dataset", "dataset_options", "mechanism", "label") if c in frame]
    key = frame["params"].map(rest) if "params" in frame else pd.Series("", index=frame.index)
    for c in cols:
        key = key + "\x1f" + frame[c].astype(str)
    return key


def noise_free_frame(frame: pd.DataFrame, twins: pd.DataFrame) -> pd.DataFrame:
    """The results with every series that has noise-free twins replaced by its twins (the
    same code with every noise primitive drawing zero, at the series' largest epsilon);
    series without twins (non-private references, Mondrian) are kept as they are."""
    if twins is None or twins.empty or frame.empty:
        return frame.iloc[0:0]
    twins = twins[twins["metric"].isin(set(frame["metric"]))]
    if "status" in twins:
        twins = twins[twins["status"] == "ok"]
    if twins.empty:
        return frame.iloc[0:0]
    keys = set(_series_keys(twins))
    keep = ~_series_keys(frame).isin(keys).to_numpy()
    return pd.concat([frame[keep], twins[[c for c in frame.columns if c in twins.columns]]],
                     ignore_index=True)


def _matching(groups, wanted: dict | None, ignore=()):
    """The group of ``groups`` with the same values as ``wanted`` on every shared key
    except ``ignore``; None if none."""
    if not wanted:
        return None
    for g in groups or []:
        group = g.get("group") or {}
        if all(group.get(k) == v for k, v in wanted.items() if k not in ignore and k in group):
            return g
    return None


def _focus(result: dict) -> dict | None:
    """One group to show a deviation by: the claim's worst (or closest) group, with the
    paper reading's numbers in the same group and the noise-free numbers in the same group
    at the twins' epsilon."""
    groups = result.get("groups") or []
    if not groups:
        return None
    index = result.get("worst")
    worst = groups[index] if isinstance(index, int) and 0 <= index < len(groups) else groups[0]
    out = {k: worst.get(k) for k in ("group", "ours", "other", "ratio", "held", "than", "series")
           if worst.get(k) is not None}
    reading = result.get("paper_reading")
    if reading:
        g = _matching(reading.get("groups"), worst.get("group"))
        out["paper_reading"] = None if g is None else {
            k: g.get(k) for k in ("group", "ours", "other", "ratio", "held")}
    free = result.get("noise_free")
    if free:
        g = _matching(free.get("groups"), worst.get("group"), ignore=("epsilon",))
        out["noise_free"] = None if g is None else {
            k: g.get(k) for k in ("group", "ours", "other", "ratio", "held")}
    return out


def evaluate_claims(
    claims: list[dict], frame: pd.DataFrame, *, plots=None, twins: pd.DataFrame | None = None
) -> list[dict]:
    """Check parsed claims against tidy results; never raises on data problems.

    Parameters
    ----------
    claims : list of dict
        As returned by :func:`parse_claims`.
    frame : DataFrame
        The ok rows of the experiment (``metric != "release"``) with columns ``dataset``,
        ``dataset_options``, ``dataset_label``, ``mechanism``, ``label``, ``params``, one
        column per parameter, ``rep``, ``metric``, ``value`` (and ``seconds`` for tables of
        running times).
    plots : list of dict, optional
        The experiment's plots (``table`` claims read the named table plot).
    twins : DataFrame, optional
        The noise-free twin rows (``noise_free`` true, same columns): each claim is also
        evaluated with every series that has twins replaced by them (``noise_free``).

    Returns
    -------
    list of dict
        One JSON-serialisable dict per claim (``docs/claims.md``, "Output"): ``verdict``
        (``held`` / ``not held`` / ``not evaluated``), a one-line ``summary``, ``n_held``,
        ``n_groups``, ``n_skipped``, ``reason`` (why it was not evaluated, else None) and
        ``groups`` with each group's ``ours``, ``other``, ``ratio`` and ``held``. A claim
        with ``paper_reading`` gets ``paper_reading``: the same evaluation with that series
        in place of ``series`` (``series``, ``verdict``, ``summary``, ``groups``...); with
        ``twins``, every claim but a table gets ``noise_free`` (the evaluation on the
        noise-free frame, or None when no compared series has twins); ``focus``: the worst
        group with the reading's and the noise-free numbers in the same group.
    """
    out = []
    free = None
    if twins is not None and not twins.empty and frame is not None and not frame.empty:
        free = noise_free_frame(frame, twins)
    for claim in claims:
        result = _evaluate_one(dict(claim), frame, plots)
        reading = claim.get("paper_reading")
        result["paper_reading"] = (
            _sub(_evaluate_one(_with_reading(claim), frame, plots), series=reading)
            if reading
            else None
        )
        result["noise_free"] = None
        if free is not None and not free.empty and claim["kind"] != "table":
            sub = _evaluate_one(dict(claim), free, plots)
            twin_eps = sorted({_plain(e) for e in pd.to_numeric(
                twins.get("epsilon", pd.Series(dtype=float)), errors="coerce").dropna()})
            result["noise_free"] = _sub(sub, epsilon=twin_eps)
        result["focus"] = _focus(result)
        out.append(result)
    return out
