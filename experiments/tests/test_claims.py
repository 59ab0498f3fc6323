"""Machine-checked paper claims (``experiments/claims/``, ``docs/claims.md``) on
constructed result frames: every kind held, not held with the right numbers, and not
evaluated with a reason; tolerance, holds_in, best_over, where comparisons, bad claims."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from privpub.errors import ConfigError
from privpub.experiments.claims import evaluate_claims, parse_claims, referenced_labels


def rows(dataset, label, params, values, *, metric="l1", mechanism=None, options=None):
    """Tidy ok rows of one cell: one row per repetition value."""
    options = options or {}
    opts = json.dumps(options, sort_keys=True) if options else "{}"
    shown = dataset + (f" ({', '.join(f'{k}={v}' for k, v in options.items())})" if options else "")
    return [
        {
            "experiment": "exp",
            "scale": "smoke",
            "dataset": dataset,
            "dataset_options": opts,
            "dataset_label": shown,
            "mechanism": mechanism or label.lower().replace(" ", "_"),
            "label": label,
            "privacy": "node-DP",
            "caveat": None,
            "params": json.dumps(params, sort_keys=True),
            **params,
            "rep": rep,
            "metric": metric,
            "value": v,
        }
        for rep, v in enumerate(values)
    ]


def claim(**fields):
    return {"id": "c", "text": "the paper says so", "source": "Sec 4", **fields}


def check(raw, frame, plots=None):
    """Parse one claim and evaluate it; returns its result dict."""
    [result] = evaluate_claims(parse_claims([raw], where="exp", plots=plots), frame, plots=plots)
    json.dumps(result, allow_nan=False)  # JSON-serialisable, no NaN
    return result


@pytest.fixture
def fig3():
    """day2016 Fig. 3 in miniature: two graphs, epsilon 0.1 / 0.5 / 1; Truncation has theta."""
    r = []
    for ds, scale in (("facebook", 1.0), ("dblp", 0.1)):
        opts = {"lcc": True}
        for eps in (0.1, 0.5, 1.0):
            base = scale / eps
            r += rows(ds, "θ-Cumulative", {"epsilon": eps}, [base, base * 1.2], options=opts)
            r += rows(ds, "Flowgraph", {"epsilon": eps}, [base * 2, base * 2.2], options=opts)
            # θ-Constrained: worse than Flowgraph on dblp at epsilon = 0.1 only
            worse = 3.0 if (ds == "dblp" and eps == 0.1) else 1.5
            r += rows(ds, "θ-Constrained", {"epsilon": eps}, [base * worse] * 2, options=opts)
            for theta in (4, 16):
                r += rows(
                    ds,
                    "Truncation",
                    {"epsilon": eps, "theta": theta},
                    [base * (5 if theta == 4 else 3)] * 2,
                    options=opts,
                )
    return pd.DataFrame(r)


# --------------------------------------------------------------------------- subject


@pytest.mark.parametrize("raw, subject", [
    (claim(kind="compare", metric="l1", series="θ-Cumulative",
           than=["Flowgraph", {"label": "Truncation", "best_over": "theta"}]),
     "θ-Cumulative vs Flowgraph, Truncation (best theta) on l1"),
    (claim(kind="compare", metric="l1", series="Flowgraph", than="θ-Constrained", factor=2,
           where={"dataset": ["facebook", "dblp"], "epsilon": "< 0.5"}),
     "Flowgraph vs θ-Constrained (by a factor 2) on l1, where dataset=facebook/dblp, "
     "epsilon < 0.5"),
    (claim(kind="trend", metric="l1", series={"label": "RPS", "depth": 50}, along="epsilon",
           direction="decreasing", per="dataset"),
     "RPS (depth=50) decreasing along epsilon on l1, per dataset"),
    (claim(kind="best", metric="l1", among=["Flowgraph", "θ-Cumulative"],
           expect="θ-Cumulative"), "θ-Cumulative best among Flowgraph, θ-Cumulative on l1"),
    (claim(kind="best", metric="l1", series="Truncation", among="theta", expect=16),
     "Truncation: best theta = 16 on l1"),
    (claim(kind="value", metric="l1", series="Flowgraph", paper=2.5, at={"epsilon": 1}),
     "Flowgraph vs the paper's 2.5 at epsilon=1 on l1"),
    (claim(kind="bound", metric="l1", series="Flowgraph", at_least=0, at_most=3),
     "Flowgraph >= 0 and <= 3 on l1"),
])
def test_a_claims_subject_names_what_it_tests(raw, subject, fig3):
    """A paper's sentence often becomes one claim per series: each result says which."""
    assert check(raw, fig3)["subject"] == subject


def test_claims_quoting_one_sentence_have_different_subjects(fig3):
    text = "Our two proposed methods and the variant all perform better than Flowgraph"
    raw = [dict(claim(kind="compare", metric="l1", series=s, than="Flowgraph"), id=f"c{i}",
                text=text) for i, s in enumerate(("θ-Cumulative", "θ-Constrained"))]
    results = evaluate_claims(parse_claims(raw, where="exp"), fig3)
    assert [(r["subject"], r["verdict"]) for r in results] == [
        ("θ-Cumulative vs Flowgraph on l1", "held"),
        ("θ-Constrained vs Flowgraph on l1", "not held")]


# --------------------------------------------------------------------------- compare


def test_compare_held_with_numbers(fig3):
    res = check(claim(kind="compare", metric="l1", series="θ-Cumulative", than="Flowgraph"), fig3)
    assert res["verdict"] == "held"
    assert (res["n_held"], res["n_groups"]) == (6, 6)
    g = next(
        g for g in res["groups"] if g["group"] == {"dataset": "facebook (lcc=True)", "epsilon": 1}
    )
    assert g["ours"] == pytest.approx(1.1) and g["other"] == pytest.approx(2.1)
    assert g["ratio"] == pytest.approx(1.1 / 2.1) and g["held"] is True
    assert res["summary"].startswith("held in 6 of 6 groups; closest: ")
    assert "ratio 0.524" in res["summary"]


def test_compare_not_held_names_worst_group(fig3):
    res = check(claim(kind="compare", metric="l1", series="Flowgraph", than="θ-Constrained"), fig3)
    assert res["verdict"] == "not held"
    assert (res["n_held"], res["n_groups"]) == (1, 6)
    # Flowgraph (2.1 x base) beats θ-Constrained (1.5 x base) only on dblp at epsilon 0.1
    [held] = [g for g in res["groups"] if g["held"]]
    assert held["group"] == {"dataset": "dblp (lcc=True)", "epsilon": 0.1}
    assert res["summary"].startswith("held in 1 of 6 groups; worst: ")
    # every failing group has Flowgraph at 2.1 / 1.5 = 1.4 times θ-Constrained
    assert "ε=0.5: 4.2 vs θ-Constrained 3 (ratio 1.4)" in res["summary"]


def test_compare_tolerance_edges(fig3):
    # Flowgraph / θ-Cumulative = 2.1 / 1.1 = 1.909...: factor 2 fails without slack ...
    base = claim(kind="compare", metric="l1", series="θ-Cumulative", than="Flowgraph", factor=2)
    assert check(base, fig3)["verdict"] == "not held"
    # ... 2 * 1.1 <= 2.1 * (1 + 0.05) = 2.205 holds, 0.04 (2.184) does not
    assert check({**base, "tolerance": 0.05}, fig3)["verdict"] == "held"
    assert check({**base, "tolerance": 0.04}, fig3)["verdict"] == "not held"


def test_compare_exactly_at_tolerance_holds():
    frame = pd.DataFrame(
        rows("g", "A", {"epsilon": 1}, [1.1]) + rows("g", "B", {"epsilon": 1}, [1.0])
    )
    base = claim(kind="compare", metric="l1", series="A", than="B")
    assert check({**base, "tolerance": 0.1}, frame)["verdict"] == "held"
    assert check({**base, "tolerance": 0.0999}, frame)["verdict"] == "not held"


def test_holds_in_fraction(fig3):
    base = claim(kind="compare", metric="l1", series="Flowgraph", than="θ-Constrained")
    # held in 1 of 6 groups: 1/6 >= 0.15 holds, 0.2 does not
    assert check({**base, "holds_in": 0.15}, fig3)["verdict"] == "held"
    res = check({**base, "holds_in": 0.2}, fig3)
    assert res["verdict"] == "not held" and "(needs 20%)" in res["summary"]


def test_holds_in_exact_fraction_holds():
    r = []
    for eps, (a, b) in zip((1, 2, 3, 4, 5), [(1, 2)] * 4 + [(3, 2)], strict=True):
        r += rows("g", "A", {"epsilon": eps}, [a]) + rows("g", "B", {"epsilon": eps}, [b])
    base = claim(kind="compare", metric="l1", series="A", than="B")
    assert check({**base, "holds_in": 0.8}, pd.DataFrame(r))["verdict"] == "held"
    assert check({**base, "holds_in": 0.81}, pd.DataFrame(r))["verdict"] == "not held"


def test_compare_where_comparison_strings(fig3):
    base = claim(kind="compare", metric="l1", series="Flowgraph", than="θ-Constrained")
    res = check({**base, "where": {"epsilon": "< 0.5", "dataset": "dblp"}}, fig3)
    assert res["verdict"] == "held" and res["n_groups"] == 1
    res = check({**base, "where": {"epsilon": ">= 0.5"}}, fig3)
    assert (res["verdict"], res["n_held"], res["n_groups"]) == ("not held", 0, 4)
    res = check({**base, "where": {"epsilon": "!= 0.1"}}, fig3)
    assert res["n_groups"] == 4
    res = check({**base, "where": {"epsilon": [0.1, 1]}}, fig3)
    assert res["n_groups"] == 4
    res = check({**base, "where": {"epsilon": "> 0.5"}}, fig3)
    # one epsilon left: it no longer varies, so groups are the datasets
    assert res["n_groups"] == 2 and all(set(g["group"]) == {"dataset"} for g in res["groups"])
    assert res["groups"][0]["ours"] == pytest.approx(0.21)  # dblp, epsilon = 1
    # dataset matches the name or the display label
    res = check({**base, "where": {"dataset": "facebook (lcc=True)"}}, fig3)
    assert res["n_groups"] == 3


def test_compare_higher_is_better_from_registry():
    frame = pd.DataFrame(
        rows("adult", "RPS", {"epsilon": 1}, [0.82], metric="accuracy_cv_nb")
        + rows("adult", "Mondrian", {"k": 5}, [0.78], metric="accuracy_cv_nb")
    )
    base = claim(kind="compare", metric="accuracy_cv_nb", series="RPS", than="Mondrian")
    assert check(base, frame)["verdict"] == "held"
    assert check({**base, "series": "Mondrian", "than": "RPS"}, frame)["verdict"] == "not held"
    # an explicit better overrides the metric's direction
    assert check({**base, "better": "lower"}, frame)["verdict"] == "not held"


def test_reference_series_without_the_parameter():
    """Mondrian takes no epsilon: a where on epsilon keeps it, and naming epsilon in per
    compares with it at every epsilon (a reference line)."""
    r = []
    for eps in (0.1, 1, 5):
        r += rows("adult", "RPS", {"epsilon": eps}, [0.74 + 0.02 * eps], metric="accuracy_cv_nb")
    r += rows("adult", "Mondrian", {"k": 5}, [0.75], metric="accuracy_cv_nb")
    frame = pd.DataFrame(r)
    base = claim(
        kind="compare",
        metric="accuracy_cv_nb",
        series="RPS",
        than={"label": "Mondrian", "k": 5},
        where={"epsilon": ">= 1"},
    )
    # default per: epsilon is not shared by both series, so RPS is ambiguous
    res = check(base, frame)
    assert res["verdict"] == "not evaluated" and "varies in epsilon" in res["reason"]
    res = check({**base, "per": ["dataset", "epsilon"]}, frame)
    assert (res["verdict"], res["n_groups"]) == ("held", 2)
    assert [g["other"] for g in res["groups"]] == [0.75, 0.75]


# --------------------------------------------------------------------------- not evaluated


def test_missing_series_not_evaluated(fig3):
    res = check(claim(kind="compare", metric="l1", series="θ-Cumulative", than="Hay"), fig3)
    assert res["verdict"] == "not evaluated"
    assert "no results for series 'Hay'" in res["reason"] and "Flowgraph" in res["reason"]
    assert res["groups"] == [] and res["n_groups"] == 0


def test_ambiguous_series_not_evaluated(fig3):
    res = check(claim(kind="compare", metric="l1", series="θ-Cumulative", than="Truncation"), fig3)
    assert res["verdict"] == "not evaluated"
    assert "'Truncation'" in res["reason"] and "varies in theta" in res["reason"]


def test_missing_dataset_not_evaluated(fig3):
    res = check(
        claim(
            kind="compare",
            metric="l1",
            series="θ-Cumulative",
            than="Flowgraph",
            where={"dataset": "twitter"},
        ),
        fig3,
    )
    assert res["verdict"] == "not evaluated" and "dataset: twitter" in res["reason"]


def test_missing_metric_and_empty_frame(fig3):
    base = claim(kind="compare", metric="ks", series="θ-Cumulative", than="Flowgraph")
    res = check(base, fig3)
    assert res["verdict"] == "not evaluated" and "metric 'ks'" in res["reason"]
    assert check(base, pd.DataFrame())["reason"] == "no results"


def test_group_lacking_a_series_is_skipped(fig3):
    frame = fig3[~((fig3["label"] == "Flowgraph") & (fig3["dataset"] == "dblp"))]
    res = check(claim(kind="compare", metric="l1", series="θ-Cumulative", than="Flowgraph"), frame)
    assert (res["verdict"], res["n_groups"], res["n_skipped"]) == ("held", 3, 3)
    assert "3 group(s) skipped" in res["summary"]
    res = check(
        claim(
            kind="compare",
            metric="l1",
            series="θ-Cumulative",
            than="Flowgraph",
            where={"dataset": "dblp"},
        ),
        frame,
    )
    assert (
        res["verdict"] == "not evaluated" and "no results for series 'Flowgraph'" in res["reason"]
    )


# --------------------------------------------------------------------------- best_over


def test_best_over_keeps_best_theta_per_group(fig3):
    than = {"label": "Truncation", "best_over": "theta"}
    res = check(claim(kind="compare", metric="l1", series="θ-Cumulative", than=than), fig3)
    assert res["verdict"] == "held" and res["n_groups"] == 6
    g = next(g for g in res["groups"] if g["group"] == {"dataset": "dblp (lcc=True)", "epsilon": 1})
    assert g["other"] == pytest.approx(0.3)  # theta = 16: 3 x base, not 5 x base
    assert g["than"] == "Truncation (best theta=16)"
    # pinning theta in the selector works too
    pinned = {"label": "Truncation", "theta": 4}
    res = check(claim(kind="compare", metric="l1", series="θ-Cumulative", than=pinned), fig3)
    assert res["verdict"] == "held" and res["groups"][0]["other"] == pytest.approx(5.0)


def test_best_over_on_higher_is_better_metric():
    r = []
    for k, acc in ((5, 0.80), (10, 0.84), (50, 0.78)):
        r += rows("adult", "Mondrian", {"k": k}, [acc], metric="accuracy_cv_nb")
    r += rows("adult", "RPS", {"epsilon": 1}, [0.82], metric="accuracy_cv_nb")
    frame = pd.DataFrame(r)
    res = check(
        claim(
            kind="compare",
            metric="accuracy_cv_nb",
            series="RPS",
            than={"label": "Mondrian", "best_over": "k"},
        ),
        frame,
    )
    assert res["verdict"] == "not held" and res["groups"][0]["other"] == pytest.approx(0.84)


def test_worst_over_against_best_over_states_a_parameter_hardly_matters():
    r = []
    for eps in (0.5, 1):
        for tail, v in (("linear", 1.0), ("powerlaw", 1.08), ("uniform", 1.12)):
            r += rows("enron", "θ-Cumulative", {"epsilon": eps, "tail": tail}, [v / eps])
    frame = pd.DataFrame(r)
    base = claim(
        kind="compare",
        metric="l1",
        series={"label": "θ-Cumulative", "worst_over": "tail"},
        than={"label": "θ-Cumulative", "best_over": "tail"},
    )
    res = check({**base, "tolerance": 0.12}, frame)
    assert (res["verdict"], res["n_groups"]) == ("held", 2)
    g = res["groups"][0]
    assert (g["ours"], g["other"]) == (pytest.approx(2.24), pytest.approx(2.0))
    assert g["than"] == "θ-Cumulative (best tail=linear)"
    assert g["series"] == "θ-Cumulative (worst tail=uniform)"
    assert "(ratio 1.12; needs ratio <= 1.12)" in res["summary"]
    assert check({**base, "tolerance": 0.1}, frame)["verdict"] == "not held"
    with pytest.raises(ConfigError, match="not both"):
        parse_claims(
            [{**base, "series": {"label": "X", "best_over": "a", "worst_over": "a"}}], where="e"
        )


def test_best_over_label_is_the_better_of_several_series():
    """day2016 Table 2: "Truncation and our pi_theta have the lowest L1 error"."""
    r = []
    for theta, (t, fg, er, pi) in {16: (38, 51, 51, 32), 64: (19, 20, 18, 13)}.items():
        r += rows("facebook", "T", {"theta": theta}, [t], metric="l1_counts")
        r += rows("facebook", "FG", {"theta": theta}, [fg], metric="l1_counts")
        r += rows("facebook", "ER", {"theta": theta, "order": "random"}, [er], metric="l1_counts")
        r += rows(
            "facebook", "pi_theta", {"theta": theta, "drop_theta_bin": True}, [pi],
            metric="l1_counts",
        )  # fmt: skip
    frame = pd.DataFrame(r)
    base = claim(
        kind="compare",
        metric="l1_counts",
        series={"label": ["T", "pi_theta"], "best_over": "label"},
        than=["FG", "ER"],
    )
    res = check(base, frame)
    assert (res["verdict"], res["n_groups"]) == ("held", 2)
    assert [g["series"] for g in res["groups"]] == ["pi_theta"] * 2
    # T alone does not beat ER at theta = 64 (19 vs 18)
    res = check({**base, "series": "T"}, frame)
    assert (res["verdict"], res["n_held"]) == ("not held", 1)
    # without best_over the two labels are ambiguous
    res = check({**base, "series": {"label": ["T", "pi_theta"]}}, frame)
    assert res["verdict"] == "not evaluated" and "varies in mechanism, label" in res["reason"]


# --------------------------------------------------------------------------- trend


def test_trend_held_and_not_held(fig3):
    base = claim(
        kind="trend", metric="l1", series="θ-Cumulative", along="epsilon", direction="decreasing"
    )
    res = check(base, fig3)
    assert (res["verdict"], res["n_groups"]) == ("held", 2)
    g = next(g for g in res["groups"] if g["group"] == {"dataset": "facebook (lcc=True)"})
    assert g["values"] == pytest.approx({"0.1": 11.0, "0.5": 2.2, "1": 1.1})
    res = check({**base, "direction": "increasing"}, fig3)
    assert res["verdict"] == "not held" and res["n_held"] == 0
    g = res["groups"][0]
    assert g["step"] == [0.1, 0.5] or g["step"] == [0.5, 1]
    assert "ε 0.1→0.5" in res["summary"] or "ε 0.5→1" in res["summary"]


def test_trend_tolerance_relative_to_previous_mean():
    r = []
    for eps, v in ((0.1, 10.0), (1, 5.0), (2, 5.4)):
        r += rows("g", "RPS", {"epsilon": eps, "depth": 50}, [v])
    frame = pd.DataFrame(r)
    base = claim(kind="trend", metric="l1", series="RPS", along="epsilon", direction="decreasing")
    res = check(base, frame)
    assert res["verdict"] == "not held"
    g = res["groups"][0]
    assert (g["step"], g["other"], g["ours"]) == ([1, 2], 5.0, 5.4)
    assert g["ratio"] == pytest.approx(1.08)
    assert check({**base, "tolerance": 0.08}, frame)["verdict"] == "held"
    assert check({**base, "tolerance": 0.07}, frame)["verdict"] == "not held"


def test_trend_single_point_not_evaluated():
    frame = pd.DataFrame(rows("g", "RPS", {"epsilon": 1}, [1.0]))
    res = check(
        claim(kind="trend", metric="l1", series="RPS", along="epsilon", direction="decreasing"),
        frame,
    )
    assert res["verdict"] == "not evaluated" and "second epsilon" in res["reason"]


# --------------------------------------------------------------------------- best


@pytest.fixture
def depths():
    """qardaji2012 Fig. 1 in miniature: RPS at depths 10 / 50, two stop counts."""
    r = []
    for eps in (0.1, 1):
        for depth, emd in ((10, 0.5), (20, 0.6), (50, 1.2)):
            r += rows(
                "gaussian_1d",
                "RPS",
                {"epsilon": eps, "depth": depth, "stop_count": 5},
                [emd / eps, emd / eps * 1.1],
                metric="emd_p2",
                mechanism="rps_table",
            )
        for sc in (1, 10):
            r += rows(
                "gaussian_1d",
                "RPS",
                {"epsilon": eps, "depth": 50, "stop_count": sc},
                [2.0],
                metric="emd_p2",
                mechanism="rps_table",
            )
    return pd.DataFrame(r)


def test_best_among_parameter(depths):
    base = claim(
        kind="best",
        metric="emd_p2",
        series="RPS",
        among="depth",
        expect=50,
        where={"stop_count": 5},
    )
    res = check(base, depths)
    assert (res["verdict"], res["n_groups"]) == ("not held", 2)
    g = res["groups"][0]
    assert g["best"] == "depth=10" and g["ours"] == pytest.approx(12.6)
    assert g["other"] == pytest.approx(5.25) and g["ratio"] == pytest.approx(2.4)
    assert "depth=50 1.26 vs depth=10 0.525 (ratio 2.4)" in res["summary"] or (
        "depth=50 12.6 vs depth=10 5.25 (ratio 2.4)" in res["summary"]
    )
    assert check({**base, "expect": 10}, depths)["verdict"] == "held"
    # depth 20 is within 20% of depth 10 (0.6 / 0.5 = 1.2)
    assert check({**base, "expect": 20, "tolerance": 0.2}, depths)["verdict"] == "held"
    assert check({**base, "expect": 20, "tolerance": 0.19}, depths)["verdict"] == "not held"


def test_best_among_parameter_ambiguous_without_where(depths):
    res = check(claim(kind="best", metric="emd_p2", series="RPS", among="depth", expect=50), depths)
    # stop_count varies within RPS, so it becomes a group column; depth 50 alone at stop 1, 10
    assert res["verdict"] == "not held" and res["n_groups"] == 2 and res["n_skipped"] == 4


def test_best_among_series(fig3):
    among = [
        "θ-Cumulative",
        "Flowgraph",
        "θ-Constrained",
        {"label": "Truncation", "best_over": "theta"},
    ]
    res = check(claim(kind="best", metric="l1", among=among, expect="θ-Cumulative"), fig3)
    assert (res["verdict"], res["n_groups"]) == ("held", 6)
    res = check(claim(kind="best", metric="l1", among=among, expect="Flowgraph"), fig3)
    assert (res["verdict"], res["n_held"]) == ("not held", 0)
    assert res["groups"][0]["best"] == "θ-Cumulative"


# --------------------------------------------------------------------------- value


def test_value_against_published_number(depths):
    base = claim(
        kind="value",
        metric="emd_p2",
        series={"label": "RPS", "depth": 10},
        at={"epsilon": 1, "stop_count": 5},
        paper=0.5,
        tolerance=0.05,
    )
    res = check(base, depths)  # ours: mean(0.5, 0.55) = 0.525, ratio 1.05
    assert res["verdict"] == "held"
    assert res["groups"][0]["ours"] == pytest.approx(0.525)
    assert res["groups"][0]["ratio"] == pytest.approx(1.05)
    res = check({**base, "tolerance": 0.04}, depths)
    assert res["verdict"] == "not held" and "ours 0.525 vs paper 0.5 (ratio 1.05)" in res["summary"]
    # stat: median of one repetition pair is its mean; of three it is the middle one
    assert check({**base, "stat": "median"}, depths)["groups"][0]["ours"] == pytest.approx(0.525)


def test_value_median():
    frame = pd.DataFrame(rows("g", "A", {"epsilon": 1}, [1.0, 1.1, 9.0]))
    base = claim(kind="value", metric="l1", series="A", paper=1.1, stat="median")
    assert check(base, frame)["verdict"] == "held"
    assert check({**base, "stat": "mean"}, frame)["verdict"] == "not held"


# --------------------------------------------------------------------------- table


TABLE = {
    "kind": "table",
    "name": "table2",
    "rows": ["dataset", "metric"],
    "columns": {"theta": [16, 64], "label": ["T", "FG"]},
    "metrics": ["l1_counts", "diag/edge_fraction"],
    "paper": {
        "facebook": {
            "l1_counts": [100, 200, 300, None],
            "diag/edge_fraction": [0.5, 0.4, 0.0, 0.9],
        }
    },
}


@pytest.fixture
def table_frame():
    r = []
    for theta, label, l1, frac in (
        (16, "T", 110, 0.5),
        (16, "FG", 200, 0.4),
        (64, "T", 150, 0.0),
        (64, "FG", 500, 0.97),
    ):
        p = {"theta": theta}
        r += rows("facebook", label, p, [l1], metric="l1_counts", options={"lcc": True})
        r += rows("facebook", label, p, [frac], metric="diag/edge_fraction", options={"lcc": True})
    return pd.DataFrame(r)


def test_table_cells_against_the_paper(table_frame):
    base = claim(kind="table", plot="table2", tolerance=0.1)
    res = check(base, table_frame, plots=[TABLE])
    # 7 published cells (one null): l1 110/100 ok, 200/200 ok, 150/300 no; fractions
    # 0.5 ok, 0.4 ok, 0/0 ok, 0.97/0.9 ok
    assert (res["verdict"], res["n_held"], res["n_groups"]) == ("not held", 6, 7)
    worst = next(g for g in res["groups"] if not g["held"])
    assert worst["group"] == {
        "dataset": "facebook (lcc=True)",
        "metric": "l1_counts",
        "theta": 64,
        "label": "T",
    }
    assert (worst["ours"], worst["paper"], worst["ratio"]) == (150, 300, 0.5)
    assert "ours 150 vs paper 300 (ratio 0.5)" in res["summary"]
    only_fraction = check({**base, "metric": "diag/edge_fraction"}, table_frame, plots=[TABLE])
    assert (only_fraction["verdict"], only_fraction["n_groups"]) == ("held", 4)
    assert check({**base, "tolerance": 0.05}, table_frame, plots=[TABLE])["n_held"] == 4
    assert check({**base, "holds_in": 0.85}, table_frame, plots=[TABLE])["verdict"] == "held"


def test_table_one_sided_and_missing_numbers(table_frame):
    # better: lower (running times): ours at most the paper's
    res = check(
        claim(kind="table", plot="table2", metric="l1_counts", better="lower"),
        table_frame,
        plots=[TABLE],
    )
    assert (res["n_held"], res["n_groups"]) == (2, 3)
    # a published 0 holds only against what rounds to 0 at the row's printed precision
    frame = table_frame.copy()
    frame.loc[
        (frame["metric"] == "diag/edge_fraction")
        & (frame["theta"] == 64)
        & (frame["label"] == "T"),
        "value",
    ] = 0.06
    res = check(
        claim(kind="table", plot="table2", metric="diag/edge_fraction", tolerance=0.5),
        frame,
        plots=[TABLE],
    )
    assert res["n_held"] == 3
    zero = next(g for g in res["groups"] if not g["held"])
    assert zero["paper"] == 0 and zero["ratio"] is None  # infinite: not JSON
    # cells we did not compute are skipped, not failed
    res = check(
        claim(kind="table", plot="table2"), table_frame[table_frame["theta"] == 16], plots=[TABLE]
    )
    assert (res["n_groups"], res["n_skipped"]) == (4, 3)
    # no table plot given at evaluation
    res = evaluate_claims(
        parse_claims([claim(kind="table", plot="table2")], where="e"), table_frame
    )
    assert res[0]["verdict"] == "not evaluated" and "table2" in res[0]["reason"]


# --------------------------------------------------------------------------- output


def test_output_fields(fig3):
    raw = claim(
        kind="compare",
        metric="l1",
        series="θ-Cumulative",
        than=["Flowgraph", "θ-Constrained"],
        tolerance=0.05,
        deviation="known cause",
    )
    res = check(raw, fig3)
    assert set(res) >= {
        "id", "text", "source", "kind", "metric", "verdict", "summary", "n_held", "n_groups",
        "tolerance", "holds_in", "deviation", "groups", "reason",
    }  # fmt: skip
    assert (res["tolerance"], res["holds_in"], res["deviation"]) == (0.05, "all", "known cause")
    g = res["groups"][0]
    assert set(g) >= {"group", "ours", "other", "ratio", "held"}
    # the closest rival per group is the one reported
    assert set(g["others"]) == {"Flowgraph", "θ-Constrained"}
    assert g["than"] == min(g["others"], key=g["others"].get)


def test_evaluation_never_raises_on_odd_frames(fig3):
    claims = parse_claims(
        [claim(id="a", kind="compare", metric="l1", series="θ-Cumulative", than="Flowgraph")],
        where="exp",
    )
    odd = fig3.drop(columns=["dataset_label", "params"]).assign(value="n/a")
    [res] = evaluate_claims(claims, odd)
    assert res["verdict"] == "not evaluated"
    [res] = evaluate_claims(claims, fig3.assign(value=math.nan))
    assert res["verdict"] == "not evaluated"
    [res] = evaluate_claims(
        parse_claims(
            [
                claim(
                    kind="compare",
                    metric="l1",
                    series="θ-Cumulative",
                    than="Flowgraph",
                    per=["nope"],
                )
            ],
            where="exp",
        ),
        fig3,
    )
    assert res["verdict"] == "not evaluated" and "nope" in res["reason"]


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (claim(kind="compares", metric="l1", series="A", than="B"), "kind must be one of"),
        (claim(kind="compare", metric="l1", series="A"), "needs 'than'"),
        (claim(kind="compare", metric="l1", series="A", than="B", thann="C"), "unknown key"),
        (claim(kind="compare", metric="l2", series="A", than="B"), "l2"),
        (claim(kind="compare", metric="l1", series="A", than="B", tolerance=-1), "tolerance"),
        (claim(kind="compare", metric="l1", series="A", than="B", holds_in=1.5), "holds_in"),
        (claim(kind="compare", metric="l1", series="A", than="B", holds_in="most"), "holds_in"),
        (claim(kind="compare", metric="l1", series="A", than="B", stat="mode"), "stat"),
        (claim(kind="compare", metric="l1", series="A", than="B", better="less"), "better"),
        (claim(kind="compare", metric="l1", series="A", than="B", factor=0), "factor"),
        (claim(kind="compare", metric="l1", series="A", than=[]), "than"),
        (claim(kind="compare", metric="l1", series={}, than="B"), "series"),
        (
            claim(kind="compare", metric="l1", series="A", than="B", where={"epsilon": ">= x"}),
            "needs a number",
        ),
        (claim(kind="compare", metric="l1", series="A", than="B", where=["epsilon"]), "where"),
        (claim(kind="compare", metric="info/purity", series="A", than="B"), "better"),
        (
            claim(kind="trend", metric="l1", series="A", along="epsilon", direction="down"),
            "direction",
        ),
        (
            claim(
                kind="trend",
                metric="l1",
                series="A",
                along="epsilon",
                direction="increasing",
                per=["epsilon"],
            ),
            "per must not name",
        ),
        (claim(kind="best", metric="l1", among=["A"], expect="A"), "at least two"),
        (claim(kind="best", metric="l1", among="depth", expect=[1, 2]), "expect"),
        (claim(kind="value", metric="l1", series="A", paper="ten"), "paper"),
        (claim(kind="table"), "needs 'plot'"),
        (claim(kind="compare", metric="l1", series="A", than="B", deviation="a\nb"), "one line"),
        ({"id": "c", "kind": "compare", "metric": "l1", "series": "A", "than": "B"}, "text"),
        ({"text": "x", "source": "y", "kind": "compare"}, "needs an 'id'"),
    ],
)
def test_bad_claims_rejected(raw, message):
    with pytest.raises(ConfigError) as info:
        parse_claims([raw], where="qardaji2012_fig5")
    text = str(info.value)
    assert message in text and "qardaji2012_fig5" in text and "\n" not in text


def test_parse_rejects_duplicates_unknown_table_and_non_list():
    ok = claim(kind="compare", metric="l1", series="A", than="B")
    with pytest.raises(ConfigError, match="claim 'c': duplicate id"):
        parse_claims([ok, ok], where="e")
    with pytest.raises(ConfigError, match="no table plot named 'tab'"):
        parse_claims([claim(kind="table", plot="tab")], where="e", plots=[{"x": "epsilon"}])
    with pytest.raises(ConfigError, match="must be a list"):
        parse_claims({"id": "c"}, where="e")
    assert parse_claims(None, where="e") == []


def test_parse_normalises():
    [c] = parse_claims(
        [
            claim(
                kind="compare",
                metric="info/purity",
                better="higher",
                series="A",
                than={"label": "B", "depth": 5},
                where={"epsilon": ">= 0.5"},
            )
        ],
        where="e",
    )
    assert c["series"] == {"label": "A"} and c["than"] == [{"label": "B", "depth": 5}]
    assert (c["tolerance"], c["holds_in"], c["stat"], c["factor"]) == (0.0, "all", "mean", 1.0)
    assert referenced_labels([c]) == {"A", "B"}


def test_bound_checks_a_statistic_against_an_absolute_limit():
    frame = pd.DataFrame(
        rows("adult", "Smooth", {"k": 2}, [0.80, 0.82, 0.81], metric="jaccard")
        + rows("adult", "Smooth", {"k": 8}, [0.70, 0.74, 0.66], metric="jaccard")
    )
    # "Jaccard at most 0.5": not held at either k, and the worst group is named
    res = check(claim(kind="bound", metric="jaccard", series="Smooth", at_most=0.5), frame)
    assert (res["verdict"], res["n_held"], res["n_groups"]) == ("not held", 0, 2)
    assert "mean 0.81 (bound <= 0.5)" in res["summary"]
    # the paper's "maximum std over k around 0.04": std of the repetitions, per k
    res = check(claim(kind="bound", metric="jaccard", series="Smooth", stat="std",
                      at_most=0.04, per=["k"]), frame)
    assert (res["verdict"], res["n_held"]) == ("held", 2)
    res = check(claim(kind="bound", metric="jaccard", series="Smooth", at_least=0.7), frame)
    assert (res["n_held"], res["n_groups"]) == (2, 2)
    res = check(claim(kind="bound", metric="jaccard", series="Smooth", at_least=0.75,
                      tolerance=0.05), frame)
    assert res["n_held"] == 1  # 0.70 < 0.75 * 0.95
    with pytest.raises(ConfigError, match="a bound needs at_most, at_least or both"):
        parse_claims([claim(kind="bound", metric="jaccard", series="Smooth")], where="e")


# ------------------------------------------------------------------ paper reading, noise-free
@pytest.fixture
def fig5():
    """qardaji2012 Fig. 5 in miniature: RPS loses to Hay, the paper's (non-private)
    reading beats it; noise-free twins at the largest epsilon."""
    r, twins = [], []
    for ds in ("caltech", "unc"):
        for eps in (0.1, 1.0, 10.0):
            r += rows(ds, "RPS", {"epsilon": eps, "degree_bound": "n_minus_1"}, [200.0, 210.0],
                      metric="emd_p2")
            r += rows(ds, "Hay", {"epsilon": eps, "degree_bound": "n_minus_1"},
                      [100.0 / eps, 110.0 / eps], metric="emd_p2")
            r += rows(ds, "RPS [reading, not DP]", {"epsilon": eps, "degree_bound": "n_minus_1"},
                      [5.0, 6.0], metric="emd_p2", mechanism="rps_reading")
        twins += rows(ds, "RPS", {"epsilon": 10.0, "degree_bound": "n_minus_1"}, [1.0],
                      metric="emd_p2")
        twins += rows(ds, "Hay", {"epsilon": 10.0, "degree_bound": "n_minus_1"}, [0.0],
                      metric="emd_p2")
    frame = pd.DataFrame(r)
    twins = pd.DataFrame(twins).assign(noise_free=True, privacy="none", status="ok")
    return frame, twins


def _evaluate(raw, frame, twins=None):
    [result] = evaluate_claims(parse_claims([raw], where="exp"), frame, twins=twins)
    json.dumps(result, allow_nan=False)
    return result


def test_paper_reading_is_evaluated_in_place_of_the_series(fig5):
    frame, _ = fig5
    raw = claim(kind="compare", metric="emd_p2", series="RPS", than="Hay",
                paper_reading="RPS [reading, not DP]")
    result = _evaluate(raw, frame)
    assert result["verdict"] == "not held"
    reading = result["paper_reading"]
    assert reading["series"] == "RPS [reading, not DP]"
    assert reading["verdict"] == "held"  # 5.5 beats Hay everywhere, RPS only at 0.1
    assert reading["n_groups"] == result["n_groups"] == 6
    assert (reading["n_held"], result["n_held"]) == (6, 2)
    # the focus: ours and the reading in the worst group (unc, epsilon 10 or caltech)
    focus = result["focus"]
    assert focus["group"]["epsilon"] == 10
    assert focus["ours"] == pytest.approx(205.0)
    assert focus["paper_reading"]["ours"] == pytest.approx(5.5)
    assert focus["paper_reading"]["other"] == pytest.approx(10.5)
    assert result["noise_free"] is None  # no twins given


def test_paper_reading_keeps_the_selector_keys(fig5):
    frame, _ = fig5
    raw = claim(kind="value", metric="emd_p2",
                series={"label": "RPS", "degree_bound": "n_minus_1"},
                at={"epsilon": ">= 1"}, paper=10, tolerance=0.5,
                paper_reading="RPS [reading, not DP]")
    result = _evaluate(raw, frame)
    assert result["verdict"] == "not held"
    assert result["paper_reading"]["verdict"] == "held"
    assert result["paper_reading"]["n_groups"] == 4


def test_noise_free_replaces_every_series_by_its_twins(fig5):
    frame, twins = fig5
    raw = claim(kind="compare", metric="emd_p2", series="RPS", than="Hay")
    result = _evaluate(raw, frame, twins)
    free = result["noise_free"]
    assert free["epsilon"] == [10]
    assert free["n_groups"] == 2  # one per dataset: the twins' epsilon only
    assert free["verdict"] == "not held"  # 1.0 vs Hay's exact 0
    assert {g["ours"] for g in free["groups"]} == {1.0}
    assert result["focus"]["noise_free"]["ours"] == 1.0
    # a series without twins (the non-private reading) is kept as it is
    raw = claim(kind="compare", metric="emd_p2", series="RPS [reading, not DP]", than="RPS")
    result = _evaluate(raw, frame, twins)
    assert [g["other"] for g in result["noise_free"]["groups"]] == [1.0, 1.0]
    assert result["noise_free"]["verdict"] == "not held"  # 5.5 vs 1.0 noise-free


def test_noise_free_of_a_trend_along_epsilon_is_not_evaluated(fig5):
    frame, twins = fig5
    raw = claim(kind="trend", metric="emd_p2", series="Hay", along="epsilon",
                direction="decreasing")
    result = _evaluate(raw, frame, twins)
    assert result["verdict"] == "held"
    assert result["noise_free"]["verdict"] == "not evaluated"


def test_paper_reading_needs_a_series_claim():
    raw = claim(kind="table", plot="t", paper_reading="X")
    with pytest.raises(ConfigError, match="paper_reading"):
        parse_claims([raw], where="exp")
    raw = claim(kind="compare", metric="l1", series="A", than="B", paper_reading="")
    with pytest.raises(ConfigError, match="paper_reading"):
        parse_claims([raw], where="exp")
    parsed = parse_claims([claim(kind="compare", metric="l1", series="A", than="B",
                                 paper_reading="A [reading]")], where="exp")
    assert referenced_labels(parsed) == {"A", "B", "A [reading]"}


def test_missed_groups_are_tested_against_two_standard_errors():
    """A miss smaller than two standard errors of the difference is 'within noise'; a clear
    one is not; the count reaches the summary (the report's computed cause)."""
    frame = pd.DataFrame(
        rows("g1", "A", {"epsilon": 1}, [1.0, 1.4, 0.6, 1.2, 0.8])  # mean 1.0, se 0.14
        + rows("g1", "B", {"epsilon": 1}, [0.9, 1.3, 0.5, 1.1, 0.7])  # mean 0.9: a small miss
        + rows("g2", "A", {"epsilon": 1}, [2.0, 2.01, 1.99, 2.0, 2.0])
        + rows("g2", "B", {"epsilon": 1}, [1.0, 1.01, 0.99, 1.0, 1.0])  # a clear miss
        + rows("g3", "A", {"epsilon": 1}, [0.5] * 5)
        + rows("g3", "B", {"epsilon": 1}, [0.9] * 5)  # held
    )
    result = check(claim(kind="compare", metric="l1", series="A", than="B"), frame)
    by = {g["group"]["dataset"]: g for g in result["groups"]}
    assert by["g1"]["within_noise"] is True and by["g2"]["within_noise"] is False
    assert "within_noise" not in by["g3"]
    assert result["n_missed_within_noise"] == 1
    assert "1 of 2 missed group(s) within two standard errors" in result["summary"]
    # best: the same test against the best rival
    best = check(claim(kind="best", metric="l1", among=["A", "B"], expect="A"), frame)
    assert best["n_missed_within_noise"] == 1
    # one repetition: no standard error, no test
    single = pd.DataFrame(
        rows("g", "A", {"epsilon": 1}, [1.0]) + rows("g", "B", {"epsilon": 1}, [0.5])
    )
    one = check(claim(kind="compare", metric="l1", series="A", than="B"), single)
    assert one["groups"][0]["within_noise"] is None and "n_missed_within_noise" not in one


def _pgb_frame():
    """Three generators, three lower-is-better metrics and one higher-is-better one, on two
    graphs at two epsilons: A wins everywhere on g1; on g2 B wins at epsilon 1, C at 2."""
    r = []
    wins = {("g1", 1.0): "A", ("g1", 2.0): "A", ("g2", 1.0): "B", ("g2", 2.0): "C"}
    for (ds, eps), winner in wins.items():
        for label in ("A", "B", "C"):
            good = label == winner
            for metric in ("l1", "ks", "l1_counts"):
                r += rows(ds, label, {"epsilon": eps}, [0.1 if good else 0.5, 0.2 if good
                                                         else 0.6], metric=metric)
            r += rows(ds, label, {"epsilon": eps}, [0.9 if good else 0.3],
                      metric="accuracy_cv_nb")
    return pd.DataFrame(r)


def test_times_best_counts_wins_over_metrics_per_dataset_and_epsilon():
    """pgb2024's count: per graph and epsilon, on how many metrics a series is best."""
    metrics = ["l1", "ks", "l1_counts", "accuracy_cv_nb"]
    base = claim(kind="times_best", metric=metrics, among=["A", "B", "C"], expect="A")
    res = check(base, _pgb_frame())
    assert (res["verdict"], res["n_groups"], res["n_held"]) == ("not held", 4, 2)
    g = next(g for g in res["groups"] if g["group"] == {"dataset": "g2", "epsilon": 1})
    assert g["values"] == {"A": 0, "B": 4, "C": 0} and g["best"] == "B"  # accuracy: higher
    assert check({**base, "holds_in": 0.5}, _pgb_frame())["verdict"] == "held"
    # no single series is top everywhere: A (top in 2 groups) is not top on g2
    res = check({**base, "expect": "no single series", "holds_in": 0.25}, _pgb_frame())
    assert (res["verdict"], res["n_held"]) == ("held", 2)
    wins_everywhere = _pgb_frame()
    wins_everywhere = wins_everywhere[wins_everywhere["dataset"] == "g1"]
    res = check({**base, "expect": "no single series", "holds_in": 0.25}, wins_everywhere)
    assert res["verdict"] == "not held"


def test_times_best_needs_a_list_of_metrics_and_expect_among():
    with pytest.raises(ConfigError, match="two or more metrics"):
        parse_claims([claim(kind="times_best", metric="l1", among=["A", "B"], expect="A")],
                     where="exp")
    with pytest.raises(ConfigError, match="must be one of among"):
        parse_claims([claim(kind="times_best", metric=["l1", "ks"], among=["A", "B"],
                            expect="Z")], where="exp")
