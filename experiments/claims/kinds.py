"""The six kinds of claim, each judged group by group: ``compare``, ``trend``, ``best``,
``value``, ``bound`` and ``table`` (``docs/claims.md``, "Kinds" and "Is a miss noise?").

Each evaluator returns ``(groups, skipped, describe)``: one dict per judged group (``group``,
``ours``, ``other``, ``ratio``, ``held``, ``_score``: the worst group has the largest), the
groups skipped for missing numbers, and a function writing a group's numbers as text."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import pandas as pd

from privpub.errors import PrivpubError
from privpub.experiments.claims.numbers import (
    GREEK,
    display,
    group_order,
    key_value,
    num,
    plain,
    ratio_of,
    sort_key,
)
from privpub.experiments.claims.schema import overs
from privpub.experiments.claims.select import (
    NotEvaluated,
    Series,
    align,
    cells_of,
    per_columns,
    picked_name,
    rows_for,
    select_series,
    selector_name,
    shown,
    table_of,
    where_rows,
)
from privpub.results import is_mechanism_row

__all__ = ["evaluate_kind"]


def _higher(claim: dict):
    """True / False from ``better`` or the metric's registration; None when unknown."""
    if claim.get("better"):
        return claim["better"] == "higher"
    metric = claim.get("metric")
    if not isinstance(metric, str) or is_mechanism_row(metric):
        return None
    from privpub.registry import get_metric

    try:
        return bool(get_metric(metric).higher_is_better)
    except PrivpubError as exc:
        raise NotEvaluated(str(exc).splitlines()[0]) from None


def _known_higher(claim: dict) -> bool:
    higher = _higher(claim)
    if higher is None:
        raise NotEvaluated("cannot tell whether lower or higher is better: say better:")
    return higher


def _better_score(ours, other, higher, factor=1.0) -> float:
    """How far ``ours`` is from beating ``other`` (<= 1: it does; the worst group has the
    largest score)."""
    if higher:
        return ratio_of(factor * other, ours) if ours >= 0 else math.inf
    return ratio_of(factor * ours, other)


def _beats(ours, other, higher, factor, tol) -> bool:
    if higher:
        return ours * (1 + tol) >= factor * other - 1e-12 * abs(other)
    return factor * ours <= other * (1 + tol) + 1e-12 * abs(other)


def _within_noise(ours_cell, other_cell, higher: bool, factor: float, tol: float):
    """Whether a missed comparison is within two standard errors of holding.

    The check ``factor * ours <= (1 + tol) * other`` (lower is better; mirrored when higher
    is better) misses by ``d > 0``; the miss is *within noise* when ``d`` is at most twice the
    standard error of the difference of the two means, ``sqrt(a^2 se_ours^2 + b^2
    se_other^2)``. None when a standard error is unknown (one repetition, stat not mean)."""
    se_o, se_x = ours_cell.get("_se"), other_cell.get("_se")
    if se_o is None or se_x is None or not (math.isfinite(se_o) and math.isfinite(se_x)):
        return None
    ours, other = float(ours_cell["_value"]), float(other_cell["_value"])
    if higher:
        miss, a, b = factor * other - (1 + tol) * ours, 1 + tol, factor
    else:
        miss, a, b = factor * ours - (1 + tol) * other, factor, 1 + tol
    return bool(miss <= 2 * math.sqrt((a * se_o) ** 2 + (b * se_x) ** 2))


def _group(per: list[str], key: tuple) -> dict:
    return shown(dict(zip(map(display, per), key, strict=True)))


# --------------------------------------------------------------------------- compare


def _compare_group(claim, series, cells, group, higher) -> dict:
    """One group of a compare claim whose every series has a cell."""
    tol, factor = claim["tolerance"], claim["factor"]
    ours = float(cells[0]["_value"])
    others = {
        picked_name(s, c): float(c["_value"]) for s, c in zip(series[1:], cells[1:], strict=True)
    }
    closest = max(others, key=lambda n: _better_score(ours, others[n], higher, factor))
    other = others[closest]
    held = all(_beats(ours, o, higher, factor, tol) for o in others.values())
    other_cell = next(c for s, c in zip(series[1:], cells[1:], strict=True)
                      if picked_name(s, c) == closest)
    entry = {
        "group": group,
        "ours": ours,
        "other": other,
        "than": closest,
        "ratio": ratio_of(ours, other),
        "held": held,
        "others": others,
        "_score": _better_score(ours, other, higher, factor),
    }
    if not held:
        entry["within_noise"] = _within_noise(cells[0], other_cell, higher, factor, tol)
    if picked_name(series[0], cells[0]) != series[0].name:
        entry["series"] = picked_name(series[0], cells[0])
    return entry


def _eval_compare(claim, frame, params, plots):
    higher = _known_higher(claim)
    rows = rows_for(frame, claim)
    sels = [claim["series"], *claim["than"]]
    series = [select_series(rows, s, stat=claim["stat"], higher=higher) for s in sels]
    exclude = set().union(*(overs(s) for s in sels))
    per = per_columns(claim, series, params, exclude, rows)
    tables = [table_of(s, per) for s in series]
    keys, lookup = align(tables, len(per))
    groups, skipped = [], []
    for key in keys:
        cells = [lookup(t, key) for t in tables]
        group = _group(per, key)
        if any(c is None for c in cells):
            missing = [s.name for s, c in zip(series, cells, strict=True) if c is None]
            skipped.append({"group": group, "missing": missing})
            continue
        groups.append(_compare_group(claim, series, cells, group, higher))
    tol, factor = claim["tolerance"], claim["factor"]
    if factor != 1 or tol:
        need = (1 + tol) / factor if not higher else factor / (1 + tol)
        need = f"; needs ratio {'>=' if higher else '<='} {num(need)}"
    else:
        need = ""

    def describe(g):
        head = f"{g['series']} " if "series" in g else ""
        return f"{head}{num(g['ours'])} vs {g['than']} {num(g['other'])}"

    describe.need = need
    return groups, skipped, describe


# --------------------------------------------------------------------------- trend


def _trend_group(group, points: dict, decreasing: bool, tol: float) -> dict:
    """One group of a trend claim: its worst step along the parameter."""
    xs = sorted(points, key=sort_key)
    worst, held = None, True
    for a, b in itertools.pairwise(xs):
        prev, nxt = points[a], points[b]
        slack = tol * abs(prev)
        ok = nxt <= prev + slack if decreasing else nxt >= prev - slack
        held &= ok
        score = ratio_of(nxt, prev) if decreasing else ratio_of(prev, nxt)
        if worst is None or score > worst[0]:
            worst = (score, a, b, prev, nxt)
    score, a, b, prev, nxt = worst
    return {
        "group": group,
        "ours": nxt,
        "other": prev,
        "ratio": ratio_of(nxt, prev),
        "held": bool(held),
        "step": [plain(a), plain(b)],
        "values": {str(plain(x)): points[x] for x in xs},
        "_score": score,
    }


def _eval_trend(claim, frame, params, plots):
    rows = rows_for(frame, claim)
    along = claim["along"]
    if along not in rows.columns:
        raise NotEvaluated(f"along names {along!r}, which no result has")
    higher = None
    if overs(claim["series"]):
        higher = _higher(claim)
    s = select_series(rows, claim["series"], stat=claim["stat"], higher=higher)
    exclude = {along} | (overs(claim["series"]))
    per = per_columns(claim, [s], params, exclude, rows)
    by_group: dict[tuple, dict] = {}
    for key, cell in table_of(s, per, [along]).items():
        if key[-1] is None:
            continue
        by_group.setdefault(key[:-1], {})[key[-1]] = float(cell["_value"])
    decreasing = claim["direction"] == "decreasing"
    groups, skipped = [], []
    for gkey in sorted(by_group, key=group_order):
        group = _group(per, gkey)
        if len(by_group[gkey]) < 2:
            skipped.append({"group": group, "missing": [f"a second {along} value"]})
            continue
        groups.append(_trend_group(group, by_group[gkey], decreasing, claim["tolerance"]))
    sym = GREEK.get(along, along)

    def describe(g):
        a, b = num(g["step"][0]), num(g["step"][1])
        return f"{sym} {a}→{b}: {num(g['other'])} → {num(g['ours'])}"

    return groups, skipped, describe


# --------------------------------------------------------------------------- best


def _candidates_among_values(claim, rows, params, higher):
    """``best`` among the values of a parameter: per group, the cell of each value."""
    among = claim["among"]
    if among not in rows.columns:
        raise NotEvaluated(f"among names {among!r}, which no result has")
    selector = claim.get("series")
    if selector is not None:
        s = select_series(rows, selector, stat=claim["stat"], higher=higher)
    else:
        cells = cells_of(rows, claim["stat"])
        if cells.empty:
            raise NotEvaluated("no finite values")
        s = Series("all results", cells)
    exclude = {among} | (overs(selector))
    per = per_columns(claim, [s], params, exclude, rows)
    by_group: dict[tuple, dict] = {}
    for key, cell in table_of(s, per, [among]).items():
        if key[-1] is not None:
            by_group.setdefault(key[:-1], {})[key[-1]] = cell
    expect = key_value(claim["expect"])
    candidates = [
        (gkey, {f"{among}={plain(v)}": c for v, c in found.items()})
        for gkey, found in sorted(by_group.items(), key=lambda kv: group_order(kv[0]))
    ]
    return per, candidates, f"{among}={plain(expect)}"


def _candidates_among_series(claim, rows, params, higher):
    """``best`` among listed series: per group, the cell of each series."""
    sels = [claim["expect"], *claim["among"]]
    series = [select_series(rows, sel, stat=claim["stat"], higher=higher) for sel in sels]
    exclude = {p for sel in sels for p in overs(sel)}
    per = per_columns(claim, series, params, exclude, rows)
    tables = [table_of(s, per) for s in series]
    keys, lookup = align(tables, len(per))
    candidates = []
    for key in keys:
        found = {}
        for s, t in zip(series, tables, strict=True):
            cell = lookup(t, key)
            if cell is not None:
                found[s.name] = cell
        candidates.append((key, found))
    return per, candidates, series[0].name


def _best_group(group, found, expect_name, higher, tol) -> dict:
    """One group of a best claim where ``expect_name`` and a rival have a cell."""
    vals = {n: float(c["_value"]) for n, c in found.items()}
    ours = vals[expect_name]
    rivals = {n: v for n, v in vals.items() if n != expect_name}
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
        "ratio": ratio_of(ours, other),
        "held": held,
        "values": vals,
        "_score": _better_score(ours, other, higher),
    }
    if not held:
        entry["within_noise"] = _within_noise(found[expect_name], found[runner], higher, 1.0,
                                              tol)
    return entry


def _eval_best(claim, frame, params, plots):
    higher = _known_higher(claim)
    rows = rows_for(frame, claim)
    candidates_of = (
        _candidates_among_values if isinstance(claim["among"], str) else _candidates_among_series
    )
    per, candidates, expect_name = candidates_of(claim, rows, params, higher)
    groups, skipped = [], []
    for gkey, found in candidates:
        group = _group(per, gkey)
        if expect_name not in found or len(found) < 2:
            missing = [expect_name] if expect_name not in found else ["a rival"]
            skipped.append({"group": group, "missing": missing})
            continue
        groups.append(_best_group(group, found, expect_name, higher, claim["tolerance"]))
    return (
        groups,
        skipped,
        lambda g: f"{expect_name} {num(g['ours'])} vs {g['rival']} {num(g['other'])}",
    )


# --------------------------------------------------------------------------- value, bound


def _eval_value(claim, frame, params, plots):
    rows = rows_for(frame, claim)
    s = select_series(rows, claim["series"], stat=claim["stat"], higher=None)
    per = per_columns(claim, [s], params, set(), rows)
    paper, tol = claim["paper"], claim["tolerance"]
    groups = []
    for key, cell in sorted(table_of(s, per).items(), key=lambda kv: group_order(kv[0])):
        ours = float(cell["_value"])
        r = ratio_of(ours, paper)
        groups.append(
            {
                "group": _group(per, key),
                "ours": ours,
                "other": paper,
                "paper": paper,
                "ratio": r,
                "held": abs(r - 1) <= tol + 1e-12,
                "_score": abs(r - 1),
            }
        )
    return groups, [], lambda g: f"ours {num(g['ours'])} vs paper {num(g['paper'])}"


def _eval_bound(claim, frame, params, plots):
    """The series' statistic (``stat``: mean by default, or std, min, max, median) stays
    within ``at_most`` / ``at_least`` in every group, up to ``tolerance`` (relative)."""
    rows = rows_for(frame, claim)
    s = select_series(rows, claim["series"], stat=claim["stat"], higher=None)
    per = per_columns(claim, [s], params, set(), rows)
    most, least, tol = claim["at_most"], claim["at_least"], claim["tolerance"]
    groups = []
    for key, cell in sorted(table_of(s, per).items(), key=lambda kv: group_order(kv[0])):
        ours = float(cell["_value"])
        high = most is None or ours <= most + tol * abs(most) + 1e-12
        low = least is None or ours >= least - tol * abs(least) - 1e-12
        bound = most if not high or least is None else least
        groups.append(
            {
                "group": _group(per, key),
                "ours": ours,
                "other": bound,
                "ratio": ratio_of(ours, bound),
                "held": bool(high and low),
                "_score": max(
                    (ours - most) / (abs(most) or 1) if most is not None else -math.inf,
                    (least - ours) / (abs(least) or 1) if least is not None else -math.inf,
                ),
            }
        )
    limits = " and ".join(
        f"{sign} {num(v)}" for sign, v in (("<=", most), (">=", least)) if v is not None
    )
    return groups, [], lambda g: f"{claim['stat']} {num(g['ours'])} (bound {limits})"


# --------------------------------------------------------------------------- table


def _table_plot(claim: dict, plots) -> dict:
    """The table plot a table claim checks; sets the claim's tolerance to the plot's when
    the claim gives none."""
    tables = {
        p.get("name"): p for p in plots or [] if isinstance(p, Mapping) and p.get("kind") == "table"
    }
    plot = tables.get(claim["plot"])
    if plot is None:
        raise NotEvaluated(f"no table plot named {claim['plot']!r}")
    if not plot.get("paper"):
        raise NotEvaluated(f"table plot {claim['plot']!r} has no published numbers")
    if not claim.get("tolerance_given") and plot.get("tolerance") is not None:
        claim["tolerance"] = float(plot["tolerance"])
    return plot


def _claimed_cells(claim: dict, frame, plot: dict) -> list[dict]:
    """The table's cells (:func:`privpub.plots.tables.table_cells`) of the claim's metrics and
    ``where``."""
    from privpub.plots.tables import table_cells

    rows = frame
    if claim["metric"]:
        rows = rows[rows["metric"].astype(str).isin(claim["metric"])]
    rows = where_rows(rows, claim["where"])
    if rows.empty:
        raise NotEvaluated("no results for the table's cells")
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
            average_over=plot.get("average_over") or (),
        )
    except PrivpubError as exc:
        raise NotEvaluated(str(exc).splitlines()[0]) from None
    if claim["metric"]:  # the claim checks only some metrics of the table
        wanted = set(claim["metric"])
        metric_of = [{**c["row"], **c["column"]}.get("metric") for c in cells]
        cells = [c for c, m in zip(cells, metric_of, strict=True) if m is None or m in wanted]
    if cells and all(c["paper"] is None for c in cells):
        computed = sorted({str(v) for c in cells for v in c["row"].values()})
        raise NotEvaluated(
            f"the paper publishes no number for the rows computed ({', '.join(computed[:8])})"
        )
    return cells


def _dataset_labels(frame) -> dict:
    """dataset -> its display label, for the datasets that have one label."""
    labels = {}
    if "dataset_label" in frame.columns:
        pairs = frame[["dataset", "dataset_label"]].drop_duplicates()
        for name, grp in pairs.groupby("dataset"):
            if len(grp) == 1:
                labels[name] = grp["dataset_label"].iloc[0]
    return labels


def _table_held(cell: dict, better, tol: float):
    """Whether our number of a published cell agrees with the paper's, and its score."""
    from privpub.plots.tables import agrees_at_precision, beyond_tolerance, ours_over_paper

    ours, paper = cell["ours"], cell["paper"]
    r = ours_over_paper(ours, paper)
    if better == "lower":
        return r <= 1 + tol + 1e-12, r
    if better == "higher":
        return ours * (1 + tol) >= paper - 1e-12 * abs(paper), ratio_of(paper, ours)
    # within the tolerance, or equal at the paper's printed precision
    close = agrees_at_precision(ours, paper, cell.get("decimals", 0))
    return not beyond_tolerance(r, tol) or close, abs(r - 1)


def _eval_table(claim, frame, params, plots):
    from privpub.plots.tables import ours_over_paper

    plot = _table_plot(claim, plots)
    cells = _claimed_cells(claim, frame, plot)
    labels = _dataset_labels(frame)
    groups, skipped = [], []
    for cell in cells:
        group = {**cell["row"], **cell["column"]}
        if "dataset" in group:
            group["dataset"] = labels.get(group["dataset"], group["dataset"])
        group = {k: plain(v) for k, v in group.items()}
        ours, paper = cell["ours"], cell["paper"]
        if paper is None:
            continue
        if math.isnan(ours):
            skipped.append({"group": group, "missing": ["our number"]})
            continue
        held, score = _table_held(cell, claim.get("better"), claim["tolerance"])
        groups.append(
            {
                "group": group,
                "ours": ours,
                "other": paper,
                "paper": paper,
                "ratio": ours_over_paper(ours, paper),
                "held": bool(held),
                "_score": score,
            }
        )
    return groups, skipped, lambda g: f"ours {num(g['ours'])} vs paper {num(g['paper'])}"


# --------------------------------------------------------------------------- times_best


def _eval_times_best(claim, frame, params, plots):
    """PGB's count (pgb2024): per group (dataset x epsilon by default), on how many of the
    claim's metrics each series of ``among`` has the best mean
    (:func:`privpub.plots.leaderboard.ranking.across_metrics`, ties counted for each tied
    series). A group holds when ``expect`` has the largest count (ties included); for
    ``expect: no single series``, when the series most often top over all groups is not
    top there, so the claim holds when that happens in at least ``holds_in`` of them."""
    from privpub.experiments.claims.schema import NO_SINGLE_BEST
    from privpub.plots.leaderboard.ranking import across_metrics
    from privpub.registry import get_metric

    metrics = list(claim["metric"])
    rows = rows_for(frame, claim)
    rows = rows[rows["metric"].astype(str).isin(metrics)]
    per = [("dataset_label" if c == "dataset" and "dataset_label" in rows.columns else c)
           for c in (claim["per"] or ["dataset", "epsilon"]) if c in rows.columns
           or (c == "dataset" and "dataset_label" in rows.columns)]
    parts = []
    for metric in metrics:
        of_metric = rows[rows["metric"].astype(str) == metric]
        for sel in claim["among"]:
            try:
                cells = select_series(of_metric, sel, stat=claim["stat"], higher=None).cells
            except NotEvaluated:
                continue
            parts.append(pd.DataFrame({
                "notion": "all", "axis": "", "setting": "", "series": selector_name(sel),
                "dataset": (cells[per].astype(str).agg(" ".join, axis=1) if per
                            else "all"),
                "x": 0.0, "metric": metric, "mean": cells["_value"].to_numpy(float),
            }))
    if not parts:
        raise NotEvaluated("no series of among has results")
    stats = pd.concat(parts, ignore_index=True)
    higher = {m: get_metric(m).higher_is_better for m in metrics if not is_mechanism_row(m)}
    result = across_metrics(stats, "all", metrics, higher)
    blocks = [b for b in result["blocks"] if b["times_best"]]
    tops = [{s for s, c in b["times_best"].items() if c == max(b["times_best"].values())}
            for b in blocks]
    if claim["expect"] == NO_SINGLE_BEST:
        counts: dict[str, int] = {}
        for top in tops:
            for s in top:
                counts[s] = counts.get(s, 0) + 1
        leader = max(sorted(counts), key=counts.get) if counts else None
    groups = []
    keys = {(" ".join(map(str, k)) if per else "all"): k for k in
            rows[per].drop_duplicates().itertuples(index=False, name=None)} if per else {}
    for block, top in zip(blocks, tops, strict=True):
        count = block["times_best"]
        if claim["expect"] == NO_SINGLE_BEST:
            name, held = leader, leader not in top
        else:
            name = selector_name(claim["expect"])
            held = name in top
        best = max(count.values())
        ours = count.get(name, 0)
        key = keys.get(block["dataset"], (block["dataset"],))
        groups.append({
            "group": _group(per or ["dataset"], key), "ours": ours, "other": best,
            "best": ", ".join(sorted(top)), "held": bool(held), "values": dict(count),
            "ratio": None, "_score": float(best - ours) if claim["expect"] != NO_SINGLE_BEST
            else float(held is False),
        })
    n_metrics = max((b["n_metrics"] for b in blocks), default=0)
    return groups, [], lambda g: (
        f"most often best: {g['best']} ({g['other']} of {n_metrics}); "
        + ", ".join(f"{k} {v}" for k, v in sorted(g["values"].items(), key=lambda kv: -kv[1])))


_EVALUATORS = {
    "compare": _eval_compare,
    "trend": _eval_trend,
    "best": _eval_best,
    "value": _eval_value,
    "bound": _eval_bound,
    "table": _eval_table,
    "times_best": _eval_times_best,
}


def evaluate_kind(claim: dict, frame, params: list[str], plots):
    """Judge ``claim`` group by group on ``frame`` (its parameters ``params``; ``plots``
    for table claims): ``(groups, skipped, describe)``; raises
    :class:`~privpub.experiments.claims.select.NotEvaluated` when the results cannot decide."""
    return _EVALUATORS[claim["kind"]](claim, frame, params, plots)
