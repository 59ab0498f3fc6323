"""The probes behind day2016's notes.

- Table 1: the edge counts the paper prints exceed ours by exactly the self-loops inside the
  largest component (ca-HepPh 30, cit-HepPh 44, Twitter 14), read from the raw files.
- Table 2: the L1 bound of :mod:`privpub.probes.day2016` holds (brute force on small
  graphs), and the published DBLP cells at theta = 128 exceed it; the notes quote it.
- Fig. 3: Truncation's theta sweep may stop at the first power of two >= d_max: larger
  thetas release the same noise-free histogram with more noise.
- Fig. 5: the probe's candidate errors are the shipped Oracle's and Q-Best's releases, and
  the per-run Oracle (chosen after the noise) is far below a fixed Oracle (chosen before
  it), which is where Q-Best lies; the notes quote the paper-scale numbers.
- Fig. 4: the probe reads the experiment's runs; Truncation's near-tie with Flowgraph on
  wiki-Vote is the noise of a median of few runs plus theta chosen in hindsight; on
  ca-HepPh θ-Cumulative and (θ,Ω)-Histogram are a near tie, on cit-HepPh the histogram is
  ahead beyond the noise, and the release step, not the theta choice, puts it there.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

import privpub.baselines  # noqa: F401
import privpub.mechanisms  # noqa: F401
from privpub.data import load_dataset
from privpub.noise import noise_off
from privpub.probes.day2016 import (
    CandidateErrors,
    after_noise_share,
    fig4_fresh_errors,
    fig4_median_rows,
    fig4_medians,
    fig4_selection,
    fig4_store_errors,
    fig5_candidate_errors,
    fig5_oracle_rows,
    l1_upper_bound,
    main,
    oracle_readings,
    raw_edges,
    self_loops_in_lcc,
    table2_bound_cells,
    theta_bin_readings,
    truncation_held_out,
)
from privpub.probes.support import needs_data, run_at_smoke

CONF = Path(__file__).resolve().parents[2] / "conf"


@needs_data("ca_hepph", "cit_hepph", "twitter")
@pytest.mark.parametrize("name, loops", [("ca_hepph", 30), ("cit_hepph", 44), ("twitter", 14)])
def test_table1_edge_counts_differ_by_the_self_loops(name, loops):
    spec = yaml.safe_load((CONF / "experiment" / "day2016_table1.yaml").read_text())
    paper_edges = next(p for p in spec["plots"] if p.get("kind") == "table")["paper"][name][1]
    ours = load_dataset(name, lcc=True).n_edges
    total, in_lcc = self_loops_in_lcc(raw_edges(name))
    assert in_lcc == loops and paper_edges - ours == loops
    assert f"{loops}" in spec["notes"] and "python -m privpub.probes.day2016" in spec["notes"]


def test_self_loops_in_lcc_counts_only_the_big_component():
    edges = np.array([[0, 1], [1, 2], [2, 2], [2, 2], [5, 6], [6, 6], [9, 9]])
    assert self_loops_in_lcc(edges) == (3, 1)


def test_truncation_above_dmax_is_the_same_histogram_with_more_noise():
    """day2016 Fig. 3's notes: for theta >= d_max nothing is truncated (the noise-free
    release is the true histogram whatever theta) and the noise scale grows with theta, so
    no theta beyond the first power of two >= d_max can be best."""
    from privpub.baselines.truncation import truncation
    from privpub.types import Graph

    rng = np.random.default_rng(0)
    pairs = np.argwhere(np.triu(rng.random((300, 300)) < 0.02, 1))
    graph = Graph.from_edges(pairs, 300)  # d_max about 14: several powers of two below n
    d_max = int(graph.degrees().max())
    first = 1 << math.ceil(math.log2(d_max))
    releases, scales = [], []
    for theta in (first, 2 * first, 4 * first):
        if theta >= graph.n_nodes:
            break
        with noise_off():
            out = truncation(graph, epsilon=1.0, theta=theta, rng=np.random.default_rng(0))
        counts = np.trim_zeros(np.asarray(out.value.counts, dtype=float), "b")
        releases.append(counts)
        scales.append(out.diagnostics["noise_scale"])
    assert len(releases) >= 2
    truth = np.trim_zeros(np.bincount(graph.degrees()).astype(float), "b")
    assert all(np.array_equal(r, truth) for r in releases)
    assert all(b > a for a, b in zip(scales, scales[1:], strict=False))


def test_table2_l1_bound_holds_on_small_graphs():
    """The bound behind the Table 2 notes holds (brute force): deleting edges, or
    truncating at theta, never changes the raw-count histogram L1 by more than it says."""
    rng = np.random.default_rng(0)
    from privpub.baselines.truncation import truncate
    from privpub.types import Graph

    for _ in range(200):
        n = int(rng.integers(3, 12))
        edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.5]
        if not edges:
            continue
        g = Graph.from_edges(np.array(edges), n)
        keep = rng.random(len(edges)) < rng.random()
        h = Graph.from_edges(np.array(edges)[keep].reshape(-1, 2), n)
        hg, hh = np.bincount(g.degrees(), minlength=n), np.bincount(h.degrees(), minlength=n)
        frac = h.n_edges / g.n_edges
        assert np.abs(hg - hh).sum() <= l1_upper_bound(n, g.n_edges, frac, rounding=0) + 1e-9
        theta = int(rng.integers(1, n))
        t = truncate(g, theta)
        ht = np.bincount(t.degrees(), minlength=n)
        frac = t.n_edges / g.n_edges
        assert np.abs(hg - ht).sum() <= l1_upper_bound(
            n, g.n_edges, frac, rounding=0, truncated_at=theta) + 1e-9


def test_published_dblp_l1_exceeds_what_its_edge_fraction_allows():
    spec = yaml.safe_load((CONF / "experiment" / "day2016_table2.yaml").read_text())
    paper = next(p for p in spec["plots"] if p.get("kind") == "table")["paper"]
    sizes = {"dblp": (317_080, 1_049_866), "facebook": (4_039, 88_234)}  # LCCs, Table 1
    cells = table2_bound_cells(paper, sizes)
    bad = {(c["dataset"], c["theta"], c["label"]) for c in cells if c["exceeds"]}
    assert bad == {("dblp", 128, "FG"), ("dblp", 128, "ER"), ("dblp", 128, "pi_theta")}
    notes = " ".join(spec["notes"].split())
    assert "python -m privpub.probes.day2016" in notes and "62,992" in notes


# --------------------------------------------------------------------------- theta bin
def test_theta_bin_readings_differ_only_in_bin_theta():
    """On a small graph: the three readings agree outside bin theta, ``drop`` ignores it,
    ``zero`` counts the true nodes of degree theta, ``keep`` the projected bin's error."""
    from privpub.types import Graph

    rng = np.random.default_rng(0)
    pairs = np.argwhere(np.triu(rng.random((60, 60)) < 0.15, 1))
    graph = Graph.from_edges(pairs, 60)
    theta = 5
    (r,) = theta_bin_readings(graph, thetas=(theta,))
    true_bin = int(np.sum(graph.degrees() == theta))
    assert r["zero"] == r["drop"] + true_bin
    assert r["keep"] >= r["drop"]


@needs_data("facebook")
def test_drop_theta_bin_is_the_closest_reading_on_facebook():
    """The pi_theta note: leaving bin theta out of the L1 is the closest of three readings
    to the paper's Facebook row at every theta (the module docstring's numbers, rerun)."""
    spec = yaml.safe_load((CONF / "experiment" / "day2016_table2.yaml").read_text())
    paper = next(p for p in spec["plots"] if p.get("kind") == "table")["paper"]["facebook"]
    rows = theta_bin_readings(load_dataset("facebook", lcc=True))
    got = {k: [r[k] for r in rows] for k in ("drop", "zero", "keep")}
    assert got == {"drop": [3194, 1373, 898], "zero": [3276, 1386, 903],
                   "keep": [5144, 2032, 1128]}
    pi = paper["l1_counts"][3::4]
    assert pi == [3228, 1313, 801]
    for i in range(3):
        dist = {k: abs(got[k][i] - pi[i]) for k in got}
        assert dist["drop"] < dist["zero"] < dist["keep"]
    notes = " ".join(spec["notes"].split())
    for quoted in ("3,194 / 1,373 / 898", "3,276 / 1,386 / 903", "5,144 / 2,032 / 1,128",
                   "python -m privpub.probes.day2016 --theta-bin"):
        assert quoted in notes, quoted


# --------------------------------------------------------------------------- Fig. 5 oracles
@pytest.mark.parametrize("family, oracle, qbest", [
    ("hist", "theta_omega_histogram_oracle", "theta_omega_histogram_qbest"),
    ("cumulative", "theta_cumulative_oracle", "theta_cumulative_qbest"),
])
def test_fig5_candidate_errors_are_the_shipped_releases(family, oracle, qbest):
    """Run 0's least error is the shipped Oracle's L1 for the same seed (same noise), and
    without noise Q-Best's column is the shipped Q-Best's L1: the probe changes only which
    candidate is read."""
    from privpub.data import chung_lu
    from privpub.mechanisms import theta_cumulative, theta_histogram
    from privpub.metrics.distributions import l1

    get_mechanism = {**theta_histogram.FAMILY, **theta_cumulative.FAMILY}.get

    graph = chung_lu(n=600, average_degree=8.0, rng=np.random.default_rng(3))
    truth = graph.degree_histogram()
    for eps in (0.3, 2.0):
        got = fig5_candidate_errors(graph, eps, family=family, runs=3, theta_max=30,
                                    rng=np.random.default_rng(11))
        assert got.errors.shape == (3, got.quality.size) and got.quality.size > 30 * (
            family == "hist")
        shipped = get_mechanism(oracle)(graph, epsilon=eps, theta_max=30,
                                        rng=np.random.default_rng(11))
        assert got.errors[0].min() == pytest.approx(l1(truth, shipped.value), abs=1e-12)
        with noise_off():
            quiet = fig5_candidate_errors(graph, eps, family=family, runs=1, theta_max=30,
                                          rng=np.random.default_rng(0))
            best = get_mechanism(qbest)(graph, epsilon=eps, theta_max=30,
                                        rng=np.random.default_rng(0))
        pick = int(np.argmax(quiet.quality))
        assert quiet.errors[0, pick] == pytest.approx(l1(truth, best.value), abs=1e-12)
        assert best.info["theta"] == quiet.thetas[pick]


def test_oracle_readings_definitions():
    """Per-run Oracle: each run's least; fixed Oracle: the column least on average over the
    selection runs, read on the evaluation runs; Q-Best: the quality's argmax; private: the
    exponential mechanism's average."""
    quality = np.array([0.0, -1e9, -1e9])  # the exponential mechanism picks column 0
    sel = CandidateErrors(np.array([[1.0, 0.5, 2.0], [1.0, 0.7, 2.0]]), quality, 1.0, 1.0,
                          np.array([1, 2, 3]))
    ev = CandidateErrors(np.array([[1.0, 0.8, 0.2], [1.0, 0.6, 1.8]]), quality, 1.0, 1.0,
                         np.array([1, 2, 3]))
    r = oracle_readings(sel, ev)
    assert r["per_run_oracle"] == pytest.approx(0.4)  # (0.2 + 0.6) / 2
    assert r["fixed_oracle"] == pytest.approx(0.7) and r["fixed_theta"] == 2
    assert r["fixed_in_sample"] == pytest.approx(0.65)  # column 1 over all four runs
    assert r["qbest"] == r["private"] == pytest.approx(1.0) and r["qbest_theta"] == 1
    assert after_noise_share(r) == pytest.approx(0.5)  # (0.7 - 0.4) / (1.0 - 0.4)


@needs_data("ca_hepph", "email_enron")
def test_fig5_qbest_gap_is_the_oracle_reading():
    """The Fig. 5 notes, small (epsilon = 1, 30 runs to choose the fixed Oracle, 10 to read):
    Q-Best is far above the per-run Oracle on both graphs and most of that gap is choosing
    after the noise; a fixed Oracle is within reach of Q-Best on ca-HepPh but not on
    Email-Enron, where Eq. (1) picks a theta under half the fixed Oracle's. theta-Q-Best is
    within 20% of the fixed theta-Oracle on both."""
    rows = {(r["dataset"], r["family"]): r
            for r in fig5_oracle_rows(["ca_hepph", "email_enron"], [1.0], runs=10,
                                      select_runs=30)}
    for name in ("ca_hepph", "email_enron"):
        hist, cum = rows[name, "hist"], rows[name, "cumulative"]
        assert hist["qbest"] > 1.2 * hist["per_run_oracle"]
        assert after_noise_share(hist) > 0.5
        assert cum["qbest"] > 1.3 * cum["per_run_oracle"]
        assert cum["qbest"] < 1.2 * cum["fixed_oracle"]
    assert rows["ca_hepph", "hist"]["qbest"] < 1.15 * rows["ca_hepph", "hist"]["fixed_oracle"]
    enron = rows["email_enron", "hist"]
    assert enron["qbest"] > 1.15 * enron["fixed_oracle"]
    assert 2 * enron["qbest_theta"] < enron["fixed_theta"]
    spec = yaml.safe_load((CONF / "experiment" / "day2016_fig5.yaml").read_text())
    notes = " ".join(spec["notes"].split())
    for quoted in ("python -m privpub.probes.day2016 fig5-oracle", "36 of 64", "62 of 64"):
        assert quoted in notes, quoted


# --------------------------------------------------------------------------- Fig. 4 median run
def test_fig4_median_reads_the_experiments_runs(tmp_path, capsys):
    """``fig4-median --results``: the probe's medians are those of the stored runs (smoke
    scale: chung_lu, three series, Truncation at theta 16 and 64, 3 runs)."""
    from privpub.experiments.store import ResultStore

    run_at_smoke("day2016_fig4", tmp_path)
    store = tmp_path / "day2016_fig4" / "smoke" / "store"
    errors = fig4_store_errors(store)["chung_lu"]
    assert set(errors) == {"(θ,Ω)-Histogram", "θ-Cumulative", "Truncation"}
    assert set(errors["Truncation"]) == {16, 64}
    rows = ResultStore(store).load()
    rows = rows[(rows["metric"] == "l1") & ~rows["noise_free"].fillna(False).astype(bool)]
    medians = rows.groupby(["label", rows["theta"].fillna(0)])["value"].median()
    m = fig4_medians(errors)
    assert m["values"]["θ-Cumulative"] == pytest.approx(medians[("θ-Cumulative", 0)])
    assert m["values"]["Truncation"] == pytest.approx(
        min(medians[("Truncation", 16)], medians[("Truncation", 64)]))
    assert m["flowgraph_beats_truncation"] is None  # no Flowgraph at smoke scale
    main(["fig4-median", "--results", str(tmp_path), "--scale", "smoke", "--resamples", "20"])
    out = capsys.readouterr().out
    assert "| chung_lu | 3 |" in out and "θ-Cumulative best: held in" in out


def test_truncation_held_out_undoes_the_hindsight_choice():
    """Thirteen thetas with the same wide distribution of errors: the least median over
    theta is biased low (chosen in hindsight), the median at a theta chosen on other runs
    is not."""
    rng = np.random.default_rng(0)
    cells = {t: rng.uniform(1.0, 2.0, 30) for t in range(13)}
    r = truncation_held_out(cells)
    assert r["in_sample"] < 1.45 < r["held_out"]


@needs_data("wiki_vote")
def test_fig4_truncation_near_tie_on_wiki_vote_is_noise_and_hindsight():
    """The small scale's miss (Flowgraph 1.27 vs Truncation 1.24 on wiki-Vote, 9 runs):
    with 30 runs Flowgraph's median is below Truncation's in nearly every bootstrap
    resample, less often with 9 of the runs, and Truncation's theta chosen on other runs
    is far worse than the one chosen in hindsight (the experiment's grid of thetas)."""
    thetas = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
    errors = fig4_fresh_errors(load_dataset("wiki_vote", lcc=True), runs=30,
                               rng=np.random.default_rng(0), labels=("Flowgraph", "Truncation"),
                               thetas=thetas)
    r = fig4_median_rows({"wiki_vote": errors}, resamples=500)[0]
    assert r["flowgraph_beats_truncation"]
    assert r["bootstrap"]["flowgraph_beats_truncation"] >= 0.9
    assert r["subsample"]["flowgraph_beats_truncation"] < r["bootstrap"][
        "flowgraph_beats_truncation"]
    assert r["held_out"] - r["in_sample"] > 0.1
    assert r["values"]["Flowgraph"] < r["in_sample"] < r["held_out"]
    spec = yaml.safe_load((CONF / "experiment" / "day2016_fig4.yaml").read_text())
    assert "python -m privpub.probes.day2016 fig4-median" in spec["notes"]
    assert all("fig4-median" in c["deviation"] for c in spec["claims"])


@needs_data("ca_hepph", "cit_hepph")
def test_fig4_cumulative_against_histogram_on_the_hepph_graphs():
    """θ-Cumulative against (θ,Ω)-Histogram, 30 runs: a near tie on ca-HepPh (medians
    within 10%, the order flips in some bootstrap resamples and more often with 9 runs),
    a clear reversal on cit-HepPh (the histogram's median and mean below θ-Cumulative's,
    the order never flipping back)."""
    labels = ("(θ,Ω)-Histogram", "θ-Cumulative")
    rows = {}
    for name in ("ca_hepph", "cit_hepph"):
        errors = fig4_fresh_errors(load_dataset(name, lcc=True), runs=30,
                                   rng=np.random.default_rng(0), labels=labels)
        rows[name] = fig4_median_rows({name: errors}, resamples=500)[0]
    ca, cit = rows["ca_hepph"], rows["cit_hepph"]
    assert abs(ca["values"]["θ-Cumulative"] / ca["values"]["(θ,Ω)-Histogram"] - 1) < 0.1
    assert 0.05 < ca["subsample"]["cumulative_best"] <= ca["bootstrap"]["cumulative_best"] < 0.95
    assert cit["values"]["(θ,Ω)-Histogram"] < 0.85 * cit["values"]["θ-Cumulative"]
    assert cit["means"]["(θ,Ω)-Histogram"] < cit["means"]["θ-Cumulative"]
    assert cit["bootstrap"]["cumulative_best"] < 0.05


@needs_data("ca_hepph", "cit_hepph")
def test_fig4_cit_hepph_gap_is_the_release_not_the_theta_choice():
    """cit-HepPh at epsilon = 1, 30 runs of every candidate: θ-Cumulative's private theta
    choice costs it little (within 10% of Q-Best's, less than the histogram's), and even its
    best fixed theta (in hindsight) is above (θ,Ω)-Histogram's private median: the
    cumulative release's noise makes the gap; the histogram's grouping Omega is what keeps
    its release low (no grouping at the same theta: over 3x). On ca-HepPh, where the claim
    holds, the histogram's release is ahead too (Q-Best) but its private choice costs it
    the lead."""
    graph = load_dataset("cit_hepph", lcc=True)
    cum, hist = (fig4_selection(graph, 1.0, runs=30, rng=np.random.default_rng([0, i]),
                                family=f) for i, f in enumerate(("cumulative", "hist")))
    assert cum["private"] < 1.1 * cum["qbest"]
    assert cum["private"] / cum["qbest"] < hist["private"] / hist["qbest"]
    assert cum["best"] > 1.1 * hist["private"]
    assert hist["private"] < 0.8 * cum["private"]
    assert hist["singletons"] > 3 * hist["qbest"]
    assert cum["noise_free"] < hist["noise_free"]
    assert 0.2 < cum["theta_quantiles"][1] / 200 < 0.8  # the private choice is spread wide
    graph = load_dataset("ca_hepph", lcc=True)
    cum, hist = (fig4_selection(graph, 1.0, runs=30, rng=np.random.default_rng([0, i]),
                                family=f) for i, f in enumerate(("cumulative", "hist")))
    assert hist["qbest"] < cum["qbest"]
    assert hist["private"] - hist["qbest"] > 0.05
    spec = yaml.safe_load((CONF / "experiment" / "day2016_fig4.yaml").read_text())
    assert "python -m privpub.probes.day2016 fig4-selection" in spec["notes"]
    assert "fig4-selection" in spec["claims"][0]["deviation"]
