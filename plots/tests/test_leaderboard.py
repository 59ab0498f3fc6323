"""The leaderboard's numbers and pages on constructed stores (hand-computed ranks and CD)."""

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from privpub.experiments.store import ResultStore
from privpub.plots.leaderboard import CSV_COLUMNS, leaderboard_csv, write_leaderboard
from privpub.plots.leaderboard.ranking import (
    HINDSIGHT,
    aggregate,
    cell_stats,
    critical_difference,
    tidy_rows,
)


def _board(methods: dict, **extra) -> dict:
    board = {
        "task": "toy", "title": "toy task", "scale": "smoke", "input_kind": "graph",
        "output_kinds": ["degree_histogram"], "notions": ["node-DP", "edge-DP", "none"],
        "metric": "l1", "secondary": [], "higher_is_better": {"l1": False}, "settings": [],
        "headline": {"epsilon": 1.0}, "left_out": {"an_oracle": "an oracle"}, "claims": [],
        "methods": {n: {"paper": "day2016", "notion": notion, "role": "mechanism",
                        "caveat": None, "rule": None, "reference": None,
                        "tuned_in_hindsight": tuned, "module": "m", "added": False}
                    for n, (notion, tuned) in methods.items()},
    }
    board.update(extra)
    return board


def _rows(mechanism, privacy, dataset, values, *, epsilon=1.0, **params):
    """Stored rows of one cell: one ``l1`` row per repetition value."""
    return [{
        "experiment": "_leaderboard_toy", "scale": "smoke", "dataset": dataset,
        "dataset_options": "{}", "mechanism": mechanism, "label": mechanism, "role": "mechanism",
        "paper": "day2016", "params": "{}", "rep": rep, "base_seed": 0, "seed": rep,
        "metric": "l1", "value": v, "seconds": 0.1, "task_seconds": 0.1, "cpu_seconds": 0.1,
        "peak_mb": 50.0, "privacy": privacy, "noise_free": False, "caveat": None,
        "status": "ok", "error": None, "cell": f"{mechanism}-{dataset}-{epsilon}-{params}",
        "code_hash": "x", "written_at": 0.0, "epsilon": epsilon, **params,
    } for rep, v in enumerate(values)]


@pytest.fixture
def constructed_store(tmp_path):
    """Three node-DP methods on four datasets at epsilon 1 (hand-ranked in the test), an
    edge-DP method better than all of them, and a hindsight-tuned one over two thetas."""
    means = {"d1": (1, 2, 3), "d2": (1, 3, 2), "d3": (2, 1, 3), "d4": (1, 2, 2)}
    rows = []
    for dataset, (a, b, c) in means.items():
        rows += _rows("A", "node-DP", dataset, [a - 0.1, a + 0.1])
        rows += _rows("B", "node-DP", dataset, [b - 0.1, b + 0.1])
        rows += _rows("C", "node-DP", dataset, [c, c])
        rows += _rows("E", "edge-DP", dataset, [0.01, 0.01])
        rows += _rows("T", "node-DP", dataset, [0.5, 0.5], theta=4)
        rows += _rows("T", "node-DP", dataset, [5.0, 5.0], theta=8)
    store = ResultStore(tmp_path / "_leaderboard_toy" / "smoke" / "store")
    store.write(rows)
    return store.load()


def _stats(frame):
    board = _board({"A": ("node-DP", None), "B": ("node-DP", None), "C": ("node-DP", None),
                    "E": ("edge-DP", None), "T": ("node-DP", "theta")})
    return board, cell_stats(tidy_rows(frame, board), board)


def test_rank_aggregate_hand_computed(constructed_store):
    board, stats = _stats(constructed_store)
    one = stats[(stats["notion"] == "node-DP") & (stats["dataset"] == "d1")]
    assert dict(zip(one["series"], one["rank"], strict=True)) == {"A": 1, "B": 2, "C": 3}
    a = one[one["series"] == "A"].iloc[0]
    # mean 1, std 0.1414 over 2 reps: t(0.975, 1) * 0.1414 / sqrt 2 = 12.706 * 0.1
    assert a["mean"] == pytest.approx(1.0) and a["ci95"] == pytest.approx(1.2706, abs=1e-3)
    agg = aggregate(stats, "node-DP", "l1", higher=False)
    # ranks: d1 (1,2,3), d2 (1,3,2), d3 (2,1,3), d4 (1,2.5,2.5)
    assert agg["avg_rank"] == pytest.approx({"A": 1.25, "B": 2.125, "C": 2.625})
    assert agg["series"] == ["A", "B", "C"] and agg["n_blocks"] == 4
    # Demšar 2006 Table 5(a): q_0.05 = 2.343 for k = 3; CD = q sqrt(k(k+1)/(6N))
    assert agg["cd"] == pytest.approx(2.343 * math.sqrt(3 * 4 / (6 * 4)), abs=2e-3)
    assert critical_difference(3, 4) == agg["cd"]
    assert agg["wins"]["A"]["B"] == 0.75 and agg["wins"]["B"]["A"] == 0.25
    from scipy.stats import friedmanchisquare

    stat, p = friedmanchisquare([1, 1, 2, 1], [2, 3, 1, 2], [3, 2, 3, 2])
    assert agg["friedman"] == pytest.approx((stat, p))


def test_notions_are_never_ranked_together(constructed_store):
    board, stats = _stats(constructed_store)
    for _, group in stats.groupby(["notion", "dataset"]):  # each notion ranked on its own
        assert group["rank"].min() == 1 and group["rank"].max() <= len(group)
    # the edge-DP method beats every node-DP one, yet ranks only among edge-DP rows
    edge = stats[stats["series"] == "E"]
    assert set(edge["notion"]) == {"edge-DP"} and set(edge["rank"]) == {1}
    node = stats[stats["notion"] == "node-DP"]
    assert "E" not in set(node["series"]) and node.groupby("dataset")["rank"].min().eq(1).all()
    agg = aggregate(stats, "node-DP", "l1", higher=False)
    assert "E" not in agg["avg_rank"]


def test_hindsight_tuned_series_is_marked_and_not_private(constructed_store, tmp_path):
    board, stats = _stats(constructed_store)
    tuned = stats[stats["mechanism"] == "T"]
    assert set(tuned["notion"]) == {"none"} and tuned["hindsight"].all()
    assert all(HINDSIGHT in s for s in tuned["series"])
    assert tuned["mean"].eq(0.5).all()  # the best theta, chosen after seeing the error
    node = stats[stats["notion"] == "node-DP"]
    assert "T" not in set(node["mechanism"])  # never silently among the private ones
    csv = leaderboard_csv("toy", stats, {})
    assert list(csv.columns) == CSV_COLUMNS
    marked = csv[csv["mechanism"].str.startswith("T ")]
    assert set(marked["tuned_in_hindsight"]) == {HINDSIGHT}
    assert set(marked["notion"]) == {"not private"}
    board["frame"] = constructed_store
    written = write_leaderboard([board], tmp_path / "leaderboard")
    page = (tmp_path / "leaderboard" / "toy.html").read_text()
    assert HINDSIGHT in page and "not private" in page
    assert written["tops"]["toy"]


def _offline_page(tmp_path, frame) -> tuple:
    board, _ = _stats(frame)
    board["frame"] = frame
    board["claims"] = [{"id": "c", "verdict": "held", "text": "A is best", "source": "test",
                        "summary": "held in 4 of 4 groups"}]
    out = tmp_path / "leaderboard"
    write_leaderboard([board], out)
    return out / "index.html", out / "toy.html"


def test_pages_load_nothing_from_elsewhere(constructed_store, tmp_path):
    for path in _offline_page(tmp_path, constructed_store):
        text = path.read_text()
        assert "<script" not in text and "<link" not in text and "url(" not in text
        assert " src=" not in text and "@import" not in text


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium_command(user_dir, *args) -> list[str]:
    """Headless Chromium with networking off (a proxy nobody answers, no background or
    component traffic) and an empty profile."""
    return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", f"--user-data-dir={user_dir}", "--proxy-server=127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>", *args]


@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (apt-get install -y chromium)")
def test_leaderboard_page_renders_in_headless_chromium(constructed_store, tmp_path):
    _, task_page = _offline_page(tmp_path, constructed_store)
    profile = tmp_path / "profile"
    profile.mkdir()
    shot = tmp_path / "shot.png"
    dom = subprocess.run(chromium_command(profile, "--dump-dom", task_page.as_uri()),
                         capture_output=True, text=True, timeout=120)
    assert "critical difference diagram" in dom.stdout and "toy task" in dom.stdout
    subprocess.run(chromium_command(profile, f"--screenshot={shot}", "--window-size=1200,900",
                                    task_page.as_uri()), capture_output=True, timeout=120)
    assert shot.is_file() and shot.stat().st_size > 10_000


def test_rows_at_a_default_are_not_averaged_with_rows_set_otherwise(tmp_path):
    """A stored trial may lack a parameter's column (its cell left it at the default): it
    is its own series, not averaged with the rows that set another value."""
    rows = _rows("G", "record-DP", "d1", [0.2, 0.2])  # criterion left at its default
    rows += _rows("G", "record-DP", "d1", [0.8, 0.8], criterion="gini")
    store = ResultStore(tmp_path / "s")
    store.write(rows)
    board = _board({"G": ("record-DP", None)})
    board["methods"]["G"]["defaults"] = {"criterion": "ig"}
    stats = cell_stats(tidy_rows(store.load(), board), board)
    assert dict(zip(stats["series"], stats["mean"], strict=True)) == {
        "G [criterion=ig]": pytest.approx(0.2), "G [criterion=gini]": pytest.approx(0.8)}


def _audits(tmp_path, records) -> Path:
    """A results directory holding ``records`` as the stored audits (``verdicts.json``)."""
    (tmp_path / "audit").mkdir(parents=True, exist_ok=True)
    (tmp_path / "audit" / "verdicts.json").write_text(json.dumps(records))
    return tmp_path


def _audit(mechanism, verdict, bound=0.0, witness=None, caveat=None):
    return {"mechanism": mechanism, "config": {"epsilon": 1}, "mode": "quick",
            "privacy": "node-DP", "epsilon": 1.0, "caveat": caveat, "verdict": verdict,
            "epsilon_lower_bound": bound, "witness_id": witness}


def test_a_claim_the_stored_audit_refutes_is_never_ranked_under_it(constructed_store,
                                                                    tmp_path):
    """B (node-DP, caveat-free) is refuted by a stored audit: it is in no ranking table,
    aggregate, CD diagram, top three or CSV rank; the refuted table gives its bound,
    witness and replay command; A and C are ranked without it (C: "not audited")."""
    results = _audits(tmp_path / "results", [
        _audit("A", "holds"), _audit("B", "violated", 4.25, "0123456789ab"),
        _audit("E", "inconclusive", caveat="a caveat")])
    board, _ = _stats(constructed_store)
    board["frame"] = constructed_store
    written = write_leaderboard([board], tmp_path / "leaderboard", results_dir=results)
    [entry] = written["refuted"]["toy"]
    assert (entry["series"], entry["epsilon_lower_bound"], entry["witness_id"], entry["error"]) \
        == ("B", 4.25, "0123456789ab", True)
    # ranks without B: d1 (A 1, C 2), d2 (A 1, C 2), d3 (A 1, C 2), d4 (A 1, C 2)
    node = board["aggregates"]["node-DP"]
    assert node["series"] == ["A", "C"] and node["avg_rank"] == pytest.approx({"A": 1, "C": 2})
    assert "B" not in node["wins"] and node["n_blocks"] == 4
    tops = [s for t in written["tops"]["toy"] for s, _, _ in t["top"]]
    assert "B" not in tops and "A" in tops
    notes = {s: note for t in written["tops"]["toy"] for s, _, note in t["top"]}
    assert notes["C"] == "not audited" and notes["A"] == "" and notes["E"] == ""
    csv = pd.read_csv(tmp_path / "leaderboard" / "leaderboard.csv")
    b = csv[csv["mechanism"] == "B"]
    assert len(b) == 4 and b["rank"].isna().all() and set(b["standing"]) == {"refuted"}
    assert set(b["epsilon_lower_bound"]) == {4.25} and set(b["witness_id"]) == {"0123456789ab"}
    standing = csv.drop_duplicates("mechanism").set_index("mechanism")["standing"].to_dict()
    assert standing == {"A": "ranked", "B": "refuted", "C": "not audited", "E": "ranked",
                        "T [theta tuned in hindsight (not private)]": "not audited"}
    assert csv[csv["mechanism"] != "B"]["rank"].notna().all()
    page = (tmp_path / "leaderboard" / "toy.html").read_text()
    refuted, _, ranked = page.partition("<h2><span class=notion>")
    assert "claims node-DP, refuted by the audit" in refuted
    shown = re.sub(r"<[^>]+>", "", refuted)  # the text a reader sees (and copies)
    assert f"privpub audit --replay 0123456789ab --results-dir {results}" in shown
    assert "4.25" in refuted
    assert "ERROR: none, the claim is unreserved" in refuted
    tables = re.findall(r"<table>.*?</table>|<svg.*?</svg>", ranked.split("<h2>Methods")[0],
                        flags=re.S)
    assert tables and not any(re.search(r">B[ <]", t) for t in tables)
    assert "Set aside, not ranked: 1 series whose claim the audit refutes (B;" in ranked
    assert re.search(r">C <span class=unaudited>not audited</span>", ranked)
    index = (tmp_path / "leaderboard" / "index.html").read_text()
    assert "claims node-DP, refuted by the audit" in index and "0123456789ab" in index
    assert re.search(r"C \(\S+\) <span class=unaudited>not audited</span>", index)


def test_smoke_pages_say_they_are_toy_data(constructed_store, tmp_path):
    index, task = _offline_page(tmp_path, constructed_store)  # the board's scale: smoke
    for path in (index, task):
        assert "Smoke scale: toy data." in path.read_text()
        assert "not a ranking to cite" in path.read_text()
    board, _ = _stats(constructed_store)
    board.update(frame=constructed_store, scale="small")
    write_leaderboard([board], tmp_path / "small")
    for path in (tmp_path / "small").glob("*.html"):
        assert "toy data" not in path.read_text()


# --------------------------------------------------------------------------- across metrics
def _metric_rows(mechanism, privacy, epsilon, means: dict) -> list[dict]:
    """Two repetitions per metric around each mean (NaN: the metric undefined)."""
    rows = []
    for metric, mean in means.items():
        for row in _rows(mechanism, privacy, "d1", [mean - 0.01, mean + 0.01],
                         epsilon=epsilon):
            row.update(metric=metric, cell=f"{row['cell']}-{metric}")
            rows.append(row)
    return rows


@pytest.fixture
def three_metric_store(tmp_path):
    """A, B, C (node-DP) on m1, m2 (lower is better) and m3 (higher is better) at epsilon 1
    and 2; D has only m1; E (edge-DP) beats everyone on everything."""
    nan = float("nan")
    rows = []
    for mech, e1, e2 in [("A", (1, 3, 0.9), (1, 1, 0.9)), ("B", (2, 1, 0.5), (2, 2, 0.5)),
                         ("C", (1, 2, nan), (3, 3, 0.1))]:
        for eps, (m1, m2, m3) in ((1.0, e1), (2.0, e2)):
            rows += _metric_rows(mech, "node-DP", eps, {"m1": m1, "m2": m2, "m3": m3})
    rows += _metric_rows("D", "node-DP", 1.0, {"m1": 0.1})
    for eps in (1.0, 2.0):
        rows += _metric_rows("E", "edge-DP", eps, {"m1": 0.0, "m2": 0.0, "m3": 5.0})
    store = ResultStore(tmp_path / "_leaderboard_toy" / "smoke" / "store")
    store.write(rows)
    board = _board({n: ("node-DP", None) for n in "ABCD"} | {"E": ("edge-DP", None)},
                   metric="m1", secondary=["m2", "m3"],
                   higher_is_better={"m1": False, "m2": False, "m3": True},
                   across_metrics={"title": "three toy metrics", "over": ["m1", "m2", "m3"],
                                   "source": "a test"})
    board["frame"] = store.load()
    return board


def test_across_metrics_counts_bests_and_averages_ranks_by_hand(three_metric_store):
    from privpub.plots.leaderboard.ranking import across_metrics

    board = three_metric_store
    stats = cell_stats(tidy_rows(board["frame"], board), board)
    result = across_metrics(stats, "node-DP", ["m1", "m2", "m3"], board["higher_is_better"])
    first, second = result["blocks"]
    assert (first["x"], second["x"]) == (1.0, 2.0) and first["n_metrics"] == 3
    # epsilon 1: m1 A = C = 1 < B (A, C share the best: ranks 1.5, 1.5, 3); m2 B < C < A;
    # m3 (higher is better) A 0.9 > B 0.5, C undefined (NaN): last, never best
    assert first["times_best"] == {"A": 2, "B": 1, "C": 1}
    assert first["best_on"] == {"A": ["m1", "m3"], "B": ["m2"], "C": ["m1"]}
    assert first["avg_rank"] == pytest.approx({"A": (1.5 + 3 + 1) / 3, "B": (3 + 1 + 2) / 3,
                                               "C": (1.5 + 2 + 3) / 3})
    assert first["left_out"] == {"D": ["m2", "m3"]}  # D has only m1: not in this block
    # epsilon 2: A best everywhere, B second, C third
    assert second["times_best"] == {"A": 3, "B": 0, "C": 0}
    assert second["avg_rank"] == {"A": 1.0, "B": 2.0, "C": 3.0}
    assert result["total_best"] == {"A": 5, "B": 1, "C": 1}
    assert result["mean_rank"] == pytest.approx({"A": (11 / 6 + 1) / 2, "B": 2.0,
                                                 "C": (13 / 6 + 3) / 2})
    assert result["series"] == ["A", "B", "C"]
    # the edge-DP series beats all of them, yet only counts among edge-DP series
    assert "E" not in result["mean_rank"]
    edge = across_metrics(stats, "edge-DP", ["m1", "m2", "m3"], board["higher_is_better"])
    assert edge["total_best"] == {"E": 6}


def test_across_metrics_on_the_page_and_in_the_csv(three_metric_store, tmp_path):
    board = three_metric_store
    out = tmp_path / "leaderboard"
    written = write_leaderboard([board], out)
    page = (out / "toy.html").read_text()
    assert "Across three toy metrics: how often best, average rank" in page
    assert "best on 2 of 3" in page and "a test" in page
    csv = pd.read_csv(written["csv"])
    assert list(csv.columns) == CSV_COLUMNS
    best = csv[(csv["metric"] == "times_best") & (csv["value"] == 1.0)]
    assert dict(zip(best["mechanism"], best["mean"], strict=True)) == {"A": 2, "B": 1, "C": 1,
                                                                      "E": 3}
    assert dict(zip(best["mechanism"], best["rank"], strict=True)) == {"A": 1, "B": 2.5,
                                                                      "C": 2.5, "E": 1}
    assert set(best["n"]) == {3}
    ranks = csv[(csv["metric"] == "average_rank") & (csv["value"] == 2.0)
                & (csv["notion"] == "node-DP")]
    assert dict(zip(ranks["mechanism"], ranks["mean"], strict=True)) == {"A": 1, "B": 2, "C": 3}
    assert board["across"]["node-DP"]["series"] == ["A", "B", "C"]


def test_a_refuted_series_is_not_counted_across_metrics(three_metric_store, tmp_path):
    board = three_metric_store
    results = _audits(tmp_path, [_audit("A", "violated", 3.0, witness="w1", caveat="toy")])
    write_leaderboard([board], tmp_path / "leaderboard", results_dir=results)
    node = board["across"]["node-DP"]
    assert "A" not in node["mean_rank"] and node["blocks"][1]["times_best"] == {"B": 3, "C": 0}
