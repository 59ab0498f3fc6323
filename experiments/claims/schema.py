"""The ``claims:`` list of an experiment, validated and normalised before anything runs:
one validator per claim kind (``docs/claims.md``)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from privpub.errors import ConfigError, PrivpubError
from privpub.experiments.claims.numbers import is_number
from privpub.results import check_condition, comparison, is_mechanism_row

__all__ = [
    "KINDS",
    "NO_SINGLE_BEST",
    "STATS",
    "OVER",
    "SELECTOR_SPECIAL",
    "parse_claims",
    "overs",
    "selectors",
    "referenced_labels",
    "referenced_columns",
]

#: ``expect`` of a times_best claim that no one series is the most often best everywhere.
NO_SINGLE_BEST = "no single series"

KINDS = ("compare", "trend", "best", "value", "bound", "table", "times_best")
STATS = ("mean", "median", "std", "min", "max")

#: Selector keys that keep, per group, the best or the worst value of a parameter.
OVER = ("best_over", "worst_over")
#: Selector keys that are not result columns.
SELECTOR_SPECIAL = ("label", "mechanism", *OVER)

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
    "times_best": {"metric", "among", "expect"},
}
_REQUIRED = {
    "compare": ("metric", "series", "than"),
    "trend": ("metric", "series", "along", "direction"),
    "best": ("metric", "among", "expect"),
    "value": ("metric", "series", "paper"),
    "bound": ("metric", "series"),
    "table": ("plot",),
    "times_best": ("metric", "among", "expect"),
}
_ID = re.compile(r"^[A-Za-z0-9_.\-]+$")


def _fail(where: str, cid, message: str):
    name = f"claim {cid!r}" if cid is not None else "claims"
    raise ConfigError(f"experiment {where}: {name}: {message}")


def _parse_condition(value, fail):
    """A where/selector value: a scalar, a list of scalars or a comparison string."""
    try:
        return check_condition(value)
    except PrivpubError as exc:
        fail(str(exc))


def _parse_filter(raw, what: str, fail) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        fail(f"{what} must be a mapping of column to value, got {raw!r}")
    out = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not key:
            fail(f"{what} keys must be column names, got {key!r}")
        if key in OVER:
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
        if key in OVER:
            if not isinstance(value, str) or not value:
                fail(f"{what} {key} must name one parameter, got {value!r}")
            out[key] = value
        elif key in ("label", "mechanism") and not isinstance(value, (str, list)):
            out[key] = str(value)
        else:
            out[key] = _parse_condition(value, lambda m, k=key: fail(f"{what} {k}: {m}"))
    if not set(out) - set(OVER):
        fail(f"{what} needs a label, a mechanism or a column besides {'/'.join(OVER)}")
    if all(k in out for k in OVER):
        fail(f"{what} takes best_over or worst_over, not both")
    return out


def _number(raw, name: str, fail, *, low=None, low_open=False, high=None):
    if not is_number(raw) or not math.isfinite(float(raw)):
        fail(f"{name} must be a number, got {raw!r}")
    value = float(raw)
    if low is not None and (value < low or (low_open and value == low)):
        fail(f"{name} must be {'>' if low_open else '>='} {low}, got {raw!r}")
    if high is not None and value > high:
        fail(f"{name} must be <= {high}, got {raw!r}")
    return value


# --------------------------------------------------------------------------- common fields


def _claim_id(raw, where: str, index: int) -> str:
    """The entry's id, after checking that the entry is a mapping with a usable id."""
    cid = raw.get("id") if isinstance(raw, Mapping) else None
    if not isinstance(raw, Mapping):
        _fail(where, None, f"entry {index + 1} must be a mapping, got {raw!r}")
    if not isinstance(cid, str) or not _ID.match(cid):
        _fail(
            where,
            cid if isinstance(cid, str) else None,
            f"entry {index + 1} needs an 'id' of letters, digits, '_', '-' or '.', got {cid!r}",
        )
    return cid


def _has_series(raw, kind: str) -> bool:
    """Whether a claim of ``kind`` names a ``series``."""
    return kind in ("compare", "trend", "value", "bound") or (
        kind == "best" and raw.get("series") is not None
    )


def _check_keys(raw, fail) -> str:
    """The claim's kind, after checking its keys, required fields, text and source."""
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
    return kind


def _deviation(raw, fail) -> str | None:
    deviation = raw.get("deviation")
    if deviation is not None:
        if not isinstance(deviation, str) or not deviation.strip():
            fail(f"deviation must be one line of text, got {deviation!r}")
        deviation = deviation.strip()
        if "\n" in deviation:
            fail("deviation must be one line")
    return deviation


def _paper_reading(raw, kind: str, fail) -> str | None:
    reading = raw.get("paper_reading")
    if reading is not None:
        if not _has_series(raw, kind):
            fail(
                "paper_reading names the series that replaces the claim's series: kinds "
                "compare, trend, value, bound, or best with a series"
            )
        if not isinstance(reading, str) or not reading.strip():
            fail(f"paper_reading must be a series label, got {reading!r}")
        reading = reading.strip()
    return reading


def _options(raw, claim: dict, fail):
    """Fill in the options every kind takes: tolerance, holds_in, stat, per, better."""
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


def _metric(raw, kind: str, fail):
    """A metric name (a list of them for a table), each registered or an ``info/`` or
    ``diag/`` row."""
    metric = raw.get("metric")
    if kind == "times_best" and (not isinstance(metric, list) or len(metric) < 2):
        fail(f"times_best counts wins over a list of two or more metrics, got {metric!r}")
    if kind in ("table", "times_best"):
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
        if not is_mechanism_row(name):
            from privpub.registry import get_metric

            try:
                get_metric(name)
            except PrivpubError as exc:
                fail(str(exc).splitlines()[0])
    return metric


# --------------------------------------------------------------------------- kinds


def _parse_compare(raw, claim: dict, fail, plots) -> list[dict]:
    than = raw["than"]
    than = than if isinstance(than, list) else [than]
    if not than:
        fail("than needs at least one series")
    claim["than"] = [_parse_selector(t, "than", fail) for t in than]
    claim["factor"] = _number(raw.get("factor", 1), "factor", fail, low=0, low_open=True)
    return claim["than"]


def _parse_trend(raw, claim: dict, fail, plots) -> list[dict]:
    along, direction = raw["along"], raw["direction"]
    if not isinstance(along, str) or not along:
        fail(f"along must name a parameter, got {along!r}")
    if direction not in ("decreasing", "increasing"):
        fail(f"direction must be 'decreasing' or 'increasing', got {direction!r}")
    claim["along"], claim["direction"] = along, direction
    return []


def _parse_best(raw, claim: dict, fail, plots) -> list[dict]:
    among, expect = raw["among"], raw["expect"]
    if isinstance(among, str):
        if not among:
            fail("among must name a parameter or list series")
        if isinstance(expect, (list, dict)):
            fail(f"with among: {among}, expect must be one value of it, got {expect!r}")
        claim["among"], claim["expect"] = among, expect
        return []
    if not isinstance(among, list):
        fail(f"among must name a parameter or list series, got {among!r}")
    if raw.get("series") is not None:
        fail("series is only for best among a parameter; list the series in among")
    if len(among) < 2:
        fail("among needs at least two series")
    claim["among"] = [_parse_selector(s, "among", fail) for s in among]
    claim["expect"] = _parse_selector(expect, "expect", fail)
    return [*claim["among"], claim["expect"]]


def _parse_value(raw, claim: dict, fail, plots) -> list[dict]:
    claim["at"] = _parse_filter(raw.get("at"), "at", fail)
    claim["paper"] = _number(raw["paper"], "paper", fail)
    return []


def _parse_bound(raw, claim: dict, fail, plots) -> list[dict]:
    if raw.get("at_most") is None and raw.get("at_least") is None:
        fail("a bound needs at_most, at_least or both")
    for side in ("at_most", "at_least"):
        claim[side] = None if raw.get(side) is None else _number(raw[side], side, fail)
    return []


def _parse_table(raw, claim: dict, fail, plots) -> list[dict]:
    plot = raw["plot"]
    if not isinstance(plot, str) or not plot:
        fail(f"plot must name a table plot, got {plot!r}")
    claim["plot"] = plot
    if plots is not None:
        tables = {
            p.get("name"): p for p in plots if isinstance(p, Mapping) and p.get("kind") == "table"
        }
        if plot not in tables:
            fail(f"no table plot named {plot!r}; table plots: {sorted(map(str, tables))}")
        if not tables[plot].get("paper"):
            fail(f"table plot {plot!r} has no 'paper:' numbers to check")
    return []


def _parse_times_best(raw, claim: dict, fail, plots) -> list[dict]:
    among, expect = raw["among"], raw["expect"]
    if not isinstance(among, list) or len(among) < 2:
        fail(f"among must list two or more series, got {among!r}")
    claim["among"] = [_parse_selector(s, "among", fail) for s in among]
    if expect == NO_SINGLE_BEST:
        claim["expect"] = NO_SINGLE_BEST
        return claim["among"]
    claim["expect"] = _parse_selector(expect, "expect", fail)
    if claim["expect"] not in claim["among"]:
        fail(f"expect {expect!r} must be one of among, or {NO_SINGLE_BEST!r}")
    return claim["among"]


_KIND_PARSERS = {
    "compare": _parse_compare,
    "trend": _parse_trend,
    "best": _parse_best,
    "value": _parse_value,
    "bound": _parse_bound,
    "table": _parse_table,
    "times_best": _parse_times_best,
}


def _check_groups(claim: dict, chosen: list[dict], fail):
    """``per`` must not name what the claim runs along or chooses among; an ``info/`` or
    ``diag/`` metric must say which values are better where the claim compares."""
    kind = claim["kind"]
    reserved = set()  # parameters that a group is not split by
    if kind == "trend":
        reserved.add(claim["along"])
    if kind == "best" and isinstance(claim["among"], str):
        reserved.add(claim["among"])
    over = set().union(*(overs(s) for s in chosen))
    if claim["per"] is not None:
        clash = sorted(set(claim["per"]) & (reserved | over))
        if clash:
            fail(f"per must not name {clash}: the claim runs along / chooses among it")
    metric = claim["metric"]
    info = is_mechanism_row(metric)
    if info and claim["better"] is None and (kind in ("compare", "best") or over):
        fail(f"{metric} is not a registered metric: say better: lower or better: higher")


def _parse_one(raw, where: str, index: int, plots) -> dict:
    cid = _claim_id(raw, where, index)

    def fail(message):
        _fail(where, cid, message)

    kind = _check_keys(raw, fail)
    deviation = _deviation(raw, fail)
    reading = _paper_reading(raw, kind, fail)
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
    _options(raw, claim, fail)
    claim["metric"] = _metric(raw, kind, fail)
    chosen = []
    if _has_series(raw, kind):
        claim["series"] = _parse_selector(raw["series"], "series", fail)
        chosen.append(claim["series"])
    chosen += _KIND_PARSERS[kind](raw, claim, fail, plots)
    _check_groups(claim, chosen, fail)
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


# --------------------------------------------------------------------------- what claims name


def overs(selector: dict | None) -> set[str]:
    """The parameters a selector keeps the best (or worst) value of."""
    return {selector[k] for k in OVER if selector and k in selector}


def selectors(claim: dict) -> list[dict]:
    """Every series selector of a (parsed) claim."""
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
        for sel in selectors(claim):
            value = sel.get("label")
            labels.update(value if isinstance(value, list) else [value] if value else [])
        if claim.get("paper_reading"):
            labels.add(claim["paper_reading"])
        value = claim["where"].get("label")
        if isinstance(value, list):
            labels.update(value)
        elif isinstance(value, str) and not comparison(value):
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
        for sel in selectors(claim):
            cols |= {k for k in sel if k not in OVER} | overs(sel)
    return cols
