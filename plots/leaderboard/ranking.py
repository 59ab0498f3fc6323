"""The leaderboard's numbers from a task's stored rows: per-group means, 95% CIs and ranks,
the rank aggregate across datasets (average rank, Friedman test, Nemenyi critical
difference, pairwise win rates) and the aggregate across metrics (how often best, average
rank over a task's ``across_metrics``).

Rules (notions never ranked together, hindsight-tuned series, blocks of the aggregate):
docs/design.md ("Leaderboards"). The critical difference follows Demšar, "Statistical
Comparisons of Classifiers over Multiple Data Sets", JMLR 7 (2006), Sec. 3.2.2.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from privpub.registry import K_ANONYMITY, NO_PRIVACY, SMOOTH_K_ANONYMITY
from privpub.results import COLUMN_ORDER

__all__ = [
    "HINDSIGHT",
    "GROUP",
    "axis_of",
    "tidy_rows",
    "cell_stats",
    "aggregate",
    "ACROSS_METRICS",
    "across_metrics",
    "across_rows",
    "critical_difference",
    "method_costs",
]

#: How a series tuned after seeing its error is named in the legend, the tables and the CSV.
HINDSIGHT = "tuned in hindsight (not private)"
#: The columns that make one ranked group (a table's cell row): never two notions together.
GROUP = ["notion", "dataset", "axis", "x", "setting", "metric"]


def axis_of(notion: str) -> str:
    """The privacy parameter a notion's rows are ranked at: ``k`` for k-anonymity, else
    ``epsilon``."""
    return "k" if notion in (K_ANONYMITY, SMOOTH_K_ANONYMITY) else "epsilon"


def _dataset_label(name: str, options) -> str:
    """``facebook[lcc=true]``: the dataset with the options its rows were computed with."""
    try:
        opts = json.loads(options) if isinstance(options, str) else dict(options or {})
    except (TypeError, ValueError):
        opts = {}
    if not opts:
        return str(name)
    return f"{name}[{','.join(f'{k}={json.dumps(v)}' for k, v in sorted(opts.items()))}]"


def _param_columns(frame: pd.DataFrame) -> list[str]:
    return sorted(set(frame.columns) - set(COLUMN_ORDER) - {"dataset_label"})


def _text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def tidy_rows(frame: pd.DataFrame, board: dict) -> pd.DataFrame:
    """One row per (series, group, repetition) of the task's metrics, ready to rank.

    Columns: ``notion`` (the series' privacy notion; ``none`` for a hindsight-tuned one),
    ``dataset``, ``axis`` and ``x`` (epsilon or k), ``setting`` (the task's ``settings``
    values, e.g. ``k=5``), ``metric``, ``series``, ``mechanism``, ``hindsight``, ``rep``,
    ``value``, ``caveat``, ``cell``, ``params``. A series is a mechanism with every other
    parameter its rows vary (``global_diffpid3 [criterion=gini]``); a hindsight-tuned
    parameter is replaced by its best value per group and metric, chosen on the mean (as
    the paper reports it)."""
    metrics = [board["metric"], *board.get("secondary", [])]
    if frame is None or frame.empty:
        return pd.DataFrame(columns=[*GROUP, "series", "mechanism", "hindsight", "rep", "value"])
    rows = frame[(frame["status"] == "ok") & frame["metric"].isin(metrics)].copy()
    if "noise_free" in rows:
        rows = rows[~rows["noise_free"].fillna(False).astype(bool)]
    methods = board["methods"]
    rows = rows[rows["mechanism"].isin(list(methods))]
    params = _param_columns(rows)
    rows["notion"] = rows["privacy"].astype(str)
    rows["axis"] = rows["notion"].map(axis_of)
    rows["x"] = [r[a] if a in rows.columns else np.nan for r, a in
                 zip(rows.to_dict("records"), rows["axis"], strict=True)]
    rows["dataset"] = [_dataset_label(d, o) for d, o in
                       zip(rows["dataset"], rows["dataset_options"], strict=True)]
    settings = [s for s in board.get("settings", []) if s in rows.columns]
    rows["setting"] = [
        ", ".join(f"{s}={_text(r[s])}" for s in settings if pd.notna(r[s])) for r in
        rows.to_dict("records")
    ] if settings else ""
    parts = []
    for mechanism, mine in rows.groupby("mechanism", sort=True):
        tuned = methods[mechanism].get("tuned_in_hindsight")
        fixed = {str(mine["axis"].iloc[0]), *settings, *([tuned] if tuned else [])}
        mine = _fill_defaults(mine, params, methods[mechanism].get("defaults") or {})
        varied = [p for p in params if p not in fixed and mine[p].nunique(dropna=False) > 1]
        mine = mine.assign(series=[
            mechanism + (" [" + ", ".join(f"{p}={_text(r[p])}" for p in varied) + "]"
                         if varied else "") for r in mine.to_dict("records")])
        if tuned and tuned in mine.columns:
            mine = _best_in_hindsight(mine, tuned, board)
        else:
            mine = mine.assign(hindsight=False)
        parts.append(mine)
    if not parts:
        return pd.DataFrame(columns=[*GROUP, "series", "mechanism", "hindsight", "rep", "value"])
    out = pd.concat(parts, ignore_index=True)
    keep = [*GROUP, "series", "mechanism", "hindsight", "rep", "value", "caveat", "seconds",
            "peak_mb", "cell", "params"]
    return out[[c for c in keep if c in out.columns]]


def _fill_defaults(rows: pd.DataFrame, params: list[str], defaults: dict) -> pd.DataFrame:
    """A parameter left empty in some rows of a mechanism and set in others was left at its
    default (a cell's identity omits defaults, so a stored trial may lack the column): fill
    it, so that rows at the default and rows set to another value stay apart."""
    rows = rows.copy()
    for p in params:
        if p in defaults and rows[p].notna().any() and rows[p].isna().any():
            rows[p] = rows[p].astype(object).where(rows[p].notna(), defaults[p])
    return rows


def _best_in_hindsight(rows: pd.DataFrame, param: str, board: dict) -> pd.DataFrame:
    """Per group, metric and series, the rows of the ``param`` value with the best mean:
    the paper's "report the result with the smallest error", a non-private choice, so the
    series is ranked with the not-private ones and named :data:`HINDSIGHT`."""
    higher = board["higher_is_better"]
    keys = ["dataset", "x", "setting", "metric", "series"]
    means = rows.groupby([*keys, param], dropna=False)["value"].mean().reset_index()
    best = []
    for key, group in means.groupby(keys, dropna=False):
        metric = key[3]
        pick = group["value"].idxmax() if higher.get(metric) else group["value"].idxmin()
        best.append(group.loc[pick, [*keys, param]])
    chosen = pd.DataFrame(best)
    out = rows.merge(chosen, on=[*keys, param], how="inner")
    return out.assign(notion=NO_PRIVACY, hindsight=True,
                      series=out["series"] + f" [{param} {HINDSIGHT}]")


def cell_stats(tidy: pd.DataFrame, board: dict) -> pd.DataFrame:
    """Per group (:data:`GROUP`) and series: ``mean``, ``std``, ``n``, ``ci95`` (the
    half-width of the Student-t 95% interval of the mean; NaN with one repetition) and
    ``rank`` (1 = best; ties share their average rank), ranked within the group only."""
    from scipy.stats import rankdata, t

    if tidy.empty:
        return pd.DataFrame(columns=[*GROUP, "series", "mean", "ci95", "n", "rank"])
    stats = (tidy.groupby([*GROUP, "series", "mechanism", "hindsight"], dropna=False)["value"]
             .agg(["mean", "std", "count"]).reset_index().rename(columns={"count": "n"}))
    half = [t.ppf(0.975, n - 1) * s / math.sqrt(n) if n > 1 else np.nan
            for s, n in zip(stats["std"], stats["n"], strict=True)]
    stats["ci95"] = half
    ranks = np.full(len(stats), np.nan)
    for _, idx in stats.groupby(GROUP, dropna=False).groups.items():
        values = stats.loc[idx, "mean"].to_numpy(float)
        metric = stats.loc[idx[0], "metric"]
        sign = -1.0 if board["higher_is_better"].get(metric) else 1.0
        ranks[stats.index.get_indexer(idx)] = rankdata(sign * values, method="average")
    stats["rank"] = ranks
    if "caveat" in tidy:  # per series: a caveat may depend on its parameters
        caveats = tidy.dropna(subset=["caveat"]).groupby("series")["caveat"].first()
        stats["caveat"] = stats["series"].map(caveats)
    return stats.sort_values([*GROUP, "rank"], ignore_index=True)


def critical_difference(k: int, n_blocks: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks for ``k`` methods over ``n_blocks``
    blocks: ``q_alpha sqrt(k (k + 1) / (6 N))`` with ``q_alpha`` the studentized range
    quantile over sqrt 2 (Demšar 2006, Eq. 5)."""
    from scipy.stats import studentized_range

    if k < 2 or n_blocks < 1:
        return float("nan")
    q = studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
    return float(q * math.sqrt(k * (k + 1) / (6.0 * n_blocks)))


def aggregate(stats: pd.DataFrame, notion: str, metric: str, higher: bool) -> dict:
    """The rank aggregate of one notion's table on one metric across its blocks (every
    dataset x epsilon-or-k x setting where each kept series has a mean).

    Series present in fewer than half of the blocks are left out (listed in ``dropped``);
    blocks missing a kept series are left out. Returns ``series`` (by average rank),
    ``avg_rank``, ``n_blocks``, ``friedman`` (statistic, p-value; None for fewer than 3
    series or 2 blocks), ``cd`` (Nemenyi, alpha 0.05), ``wins`` (``wins[a][b]``: the
    fraction of blocks where a's mean beats b's) and ``dropped``."""
    from scipy.stats import friedmanchisquare, rankdata

    rows = stats[(stats["notion"] == notion) & (stats["metric"] == metric)]
    table = rows.pivot_table(index=["dataset", "x", "setting"], columns="series",
                             values="mean", aggfunc="first")
    present = table.notna().mean()
    dropped = sorted(present[present < 0.5].index)
    table = table.drop(columns=dropped).dropna()
    out = {"series": [], "avg_rank": {}, "n_blocks": int(len(table)), "friedman": None,
           "cd": float("nan"), "wins": {}, "dropped": dropped}
    if table.empty or table.shape[1] < 1:
        return out
    values = table.to_numpy(float)
    sign = -1.0 if higher else 1.0
    ranks = np.vstack([rankdata(sign * row, method="average") for row in values])
    avg = dict(zip(table.columns, ranks.mean(axis=0), strict=True))
    order = sorted(avg, key=lambda s: (avg[s], s))
    out.update(series=order, avg_rank=avg)
    k, n = table.shape[1], table.shape[0]
    if k >= 3 and n >= 2:
        stat, p = friedmanchisquare(*values.T)
        out["friedman"] = (float(stat), float(p))
    out["cd"] = critical_difference(k, n)
    cols = list(table.columns)
    for i, a in enumerate(cols):
        better = (values[:, i][:, None] > values) if higher else (values[:, i][:, None] < values)
        out["wins"][a] = {b: float(better[:, j].mean()) for j, b in enumerate(cols) if b != a}
    return out


def across_metrics(stats: pd.DataFrame, notion: str, over: list[str],
                   higher_is_better: dict[str, bool]) -> dict:
    """The aggregate of one notion's series across the metrics ``over``, per block (dataset
    x epsilon-or-k x setting): PGB's "how often best" (pgb2024's results: the number of
    its fifteen queries on which a generator has the best mean error) and the average rank.

    In a block, a series lacking a metric (no stored row: the metric does not take its
    output, or every trial failed) is left out of that block (``left_out`` lists what it
    lacks); a metric that no kept series has is not counted (``n_metrics`` counts the
    rest). Per metric the kept series are ranked on their means (ties share their average
    rank; a NaN mean, a metric undefined on the release, ranks last and is never best). A
    series is best on a metric when its mean equals the best mean: tied series are each
    counted, so the counts of a block may add up to more than ``n_metrics``.

    Returns ``{"blocks": [...], "series": [...], "total_best": {...}, "mean_rank": {...}}``:
    each block is ``{"dataset", "axis", "x", "setting", "n_metrics", "times_best": {series:
    count}, "avg_rank": {series: rank}, "best_on": {series: [metrics]}, "left_out":
    {series: [metrics it lacks]}}``; ``series`` is ordered by ``mean_rank`` (the mean over
    the blocks holding it of its average rank), ``total_best`` sums its counts."""
    from scipy.stats import rankdata

    rows = stats[(stats["notion"] == notion) & stats["metric"].isin(over)]
    out = {"blocks": [], "series": [], "total_best": {}, "mean_rank": {}}
    if rows.empty:
        return out
    ranks_of: dict[str, list[float]] = {}
    for (dataset, x, setting), block in rows.groupby(["dataset", "x", "setting"],
                                                     sort=True, dropna=False):
        table = block.pivot_table(index="series", columns="metric", values="mean",
                                  aggfunc="first", dropna=False)
        present = block.groupby("series")["metric"].agg(set)
        metrics = [m for m in over if m in set(block["metric"])]
        lacking = {s: [m for m in metrics if m not in have] for s, have in present.items()}
        left_out = {s: miss for s, miss in lacking.items() if miss}
        kept = [s for s in sorted(present.index) if s not in left_out]
        info = {"dataset": dataset, "axis": block["axis"].iloc[0], "x": x, "setting": setting,
                "n_metrics": 0, "times_best": {}, "avg_rank": {}, "best_on": {},
                "left_out": left_out}
        out["blocks"].append(info)
        if not kept:
            continue
        best_on = {s: [] for s in kept}
        ranks = []
        for metric in metrics:
            values = table.loc[kept, metric].to_numpy(float)
            if np.isnan(values).all():
                continue
            signed = (-1.0 if higher_is_better.get(metric) else 1.0) * values
            signed = np.where(np.isnan(signed), np.inf, signed)
            ranks.append(rankdata(signed, method="average"))
            top = signed.min()
            for s, v in zip(kept, signed, strict=True):
                if v == top:
                    best_on[s].append(metric)
        info["n_metrics"] = len(ranks)
        if not ranks:
            continue
        mean_ranks = np.mean(ranks, axis=0)
        for s, r in zip(kept, mean_ranks, strict=True):
            info["times_best"][s] = len(best_on[s])
            info["avg_rank"][s] = float(r)
            info["best_on"][s] = best_on[s]
            ranks_of.setdefault(s, []).append(float(r))
            out["total_best"][s] = out["total_best"].get(s, 0) + len(best_on[s])
    out["mean_rank"] = {s: float(np.mean(r)) for s, r in ranks_of.items()}
    out["series"] = sorted(out["mean_rank"], key=lambda s: (out["mean_rank"][s], s))
    return out


#: The two numbers of :func:`across_metrics` as the CSV's ``metric`` column names them.
ACROSS_METRICS = ("times_best", "average_rank")


def across_rows(result: dict, notion: str, stats: pd.DataFrame) -> pd.DataFrame:
    """:func:`across_metrics`'s ``result`` as rows shaped like :func:`cell_stats`' (for the
    CSV): per block and series a ``times_best`` row (ranked by count, most first) and an
    ``average_rank`` row (ranked by it, lowest first), ``n`` = the block's ``n_metrics``."""
    from scipy.stats import rankdata

    columns = [*GROUP, "series", "mechanism", "hindsight", "mean", "ci95", "n", "rank"]
    info = stats.drop_duplicates("series").set_index("series")
    rows = []
    for block in result["blocks"]:
        series = sorted(block["avg_rank"])
        if not series:
            continue
        counts = [block["times_best"][s] for s in series]
        ranks = [block["avg_rank"][s] for s in series]
        orders = (rankdata([-c for c in counts]), rankdata(ranks))  # most bests, lowest rank
        for metric, values, order in zip(ACROSS_METRICS, (counts, ranks), orders, strict=True):
            for s, v, r in zip(series, values, order, strict=True):
                rows.append({"notion": notion, "dataset": block["dataset"],
                             "axis": block["axis"], "x": block["x"],
                             "setting": block["setting"], "metric": metric, "series": s,
                             "mechanism": info.at[s, "mechanism"],
                             "hindsight": info.at[s, "hindsight"], "mean": float(v),
                             "ci95": np.nan, "n": block["n_metrics"], "rank": float(r),
                             **({"caveat": info.at[s, "caveat"]} if "caveat" in info
                                else {})})
    return pd.DataFrame(rows, columns=columns + (["caveat"] if "caveat" in info else []))


def method_costs(frame: pd.DataFrame) -> dict[str, dict]:
    """Per mechanism: mean seconds and CPU seconds of one trial and the largest peak
    memory of a worker (MB), over its stored ok trials."""
    if frame is None or frame.empty:
        return {}
    ok = frame[frame["status"] == "ok"].drop_duplicates(["cell", "base_seed", "rep"])
    out = {}
    for mechanism, rows in ok.groupby("mechanism"):
        took = rows["task_seconds"] if "task_seconds" in rows else rows["seconds"]
        out[mechanism] = {
            "seconds": float(pd.to_numeric(took, errors="coerce").mean()),
            "cpu_seconds": float(pd.to_numeric(rows.get("cpu_seconds"), errors="coerce").mean())
            if "cpu_seconds" in rows else float("nan"),
            "peak_mb": float(pd.to_numeric(rows.get("peak_mb"), errors="coerce").max())
            if "peak_mb" in rows else float("nan"),
            "trials": int(len(rows)),
        }
    return out
