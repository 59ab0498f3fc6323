"""The probes behind sala2011's Fig. 7, 8, 9 and Table 1 notes.

- Fig. 7 / 9: at eps = 100 the beta-order fit alone (LDRC with the noise off) gives the small,
  dense, deep-cored graph of short paths that LDRC gives; DRC (the same noise, no fit) does
  not. The honest DRC's threshold alone (noise off) gives its sparse graphs of long paths.
- Fig. 7 at eps = 5 / 10: LDRC's graphs are the fit's short core with leaves added; the
  hub rows' noise alone gives them (a large negative draw there zeroes the low rows).
- Fig. 8: the seed-to-seed spread of the 200-draw Reliable Email share below k = 10, and the
  share one compromised node reaches, split by adjacency to the largest hub; the rest of its
  variance is which other hubs it touches.
- Table 1: the counts of SNAP's as-caida20040105 file.

Shown on small built graphs, and on AS with the seed-0 numbers the notes quote
(``python -m privpub.probes.sala2011``, which this test runs on a seed-0 subset).
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import yaml

from privpub.algorithms.dk import dk2_l1, joint_degree
from privpub.data import load_dataset
from privpub.mechanisms.pygmalion import pygmalion
from privpub.noise import noise_off
from privpub.probes import sala2011 as probe
from privpub.probes.support import load_benchmark, needs_data
from privpub.types import Graph

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf" / "experiment"


def _as():
    return load_dataset("as_caida")


def _text(name: str) -> str:
    """The experiment's notes and claim deviations, whitespace collapsed."""
    exp = yaml.safe_load((CONF / f"{name}.yaml").read_text())
    parts = [exp.get("notes", "")] + [c.get("deviation", "") for c in exp.get("claims", [])]
    return " ".join(" ".join(parts).split())


NEEDS_AS = needs_data("as_caida")


def test_structure_and_single_draw_on_built_graphs():
    # K5 (nodes 0-4) with a path 4-5-6-7 hanging off it
    k5 = [(u, v) for u in range(5) for v in range(u + 1, 5)]
    s = probe.structure(Graph.from_edges(np.array(k5 + [(4, 5), (5, 6), (6, 7)])))
    assert (s["nodes"], s["edges"], s["kmax"]) == (8, 13, 4)
    assert (s["top_core_nodes"], s["top_core_edges"], s["top_core_density"]) == (5, 10, 1.0)
    assert s["max_degree"] == 5 and s["hub_neighbour_degree"] == pytest.approx((4 * 4 + 2) / 5)
    # a star (hub 0, leaves 1-10) with a path 1-11-12: leaf 1 reaches all 12 others within
    # two hops, leaves 2-10 reach 10 (the hub and the other leaves); 0 reaches 11, 11
    # reaches 3 (1, 12, 0) and 12 reaches 2 (11, 1)
    edges = [(0, i) for i in range(1, 11)] + [(1, 11), (11, 12)]
    one = probe.re_single_draw(Graph.from_edges(np.array(edges)))
    assert one["hub_degree"] == 10 and one["hub_neighbour_share"] == pytest.approx(10 / 13)
    assert one["reach_hub_neighbours"] == pytest.approx((12 + 9 * 10) / 10 / 12)
    assert one["reach_others"] == pytest.approx((11 + 3 + 2) / 3 / 12)
    assert one["reach_hub_neighbours_min"] == pytest.approx(10 / 12)


@NEEDS_AS
def test_as_structure_seed0_is_what_the_notes_quote():
    series = (
        ("LDRC", "ldrc", False, (100,)),
        ("LDRC noise off (fit alone)", "ldrc", True, (100,)),
        ("DRC (no fit)", "drc", False, (100,)),
        ("honest DRC", "drc_honest", False, (5, 10, 100)),
        ("honest DRC noise off (threshold alone)", "drc_honest", True, (5, 10, 100)),
    )
    rows = {(r["series"], r["epsilon"]): r
            for r in probe.structure_rows(_as(), seeds=(0,), series=series)}
    orig = rows[("original", None)]
    assert (orig["nodes"], orig["edges"], orig["kmax"], orig["in_truth_core"]) == (
        16301, 32955, 19, 51)
    assert orig["top_core_density"] == pytest.approx(0.5639, abs=1e-4)
    assert orig["mean_degree"] == pytest.approx(4.043, abs=1e-3)
    assert orig["apl"] == pytest.approx(3.741, abs=1e-3)
    assert orig["ic_1"] == pytest.approx(31.02, abs=0.01)
    assert orig["hub_neighbour_degree"] == pytest.approx(9.374, abs=1e-3)

    ldrc, fit = rows[("LDRC", 100)], rows[("LDRC noise off (fit alone)", 100)]
    drc = rows[("DRC (no fit)", 100)]
    # seed 0 is the lower end of the ranges the notes quote (6,099-6,871 nodes; ...)
    assert (ldrc["nodes"], ldrc["edges"], ldrc["kmax"], ldrc["in_truth_core"]) == (
        6099, 37684, 39, 459)
    assert ldrc["apl"] == pytest.approx(2.893, abs=1e-3)
    assert ldrc["ic_gap"] == pytest.approx(1.325, abs=1e-3)
    assert (fit["nodes"], fit["edges"], fit["kmax"], fit["in_truth_core"]) == (
        6065, 37224, 38, 439)
    assert fit["apl"] == pytest.approx(2.867, abs=1e-3)
    assert fit["ic_gap"] == pytest.approx(1.121, abs=1e-3)
    assert (drc["nodes"], drc["edges"], drc["kmax"], drc["in_truth_core"]) == (
        25528, 65301, 22, 234)
    assert drc["apl"] == pytest.approx(3.487, abs=1e-3)
    assert drc["ic_gap"] == pytest.approx(0.858, abs=1e-3)
    # the ablation: the fit alone is LDRC's graph; the noise without the fit is not
    assert abs(fit["nodes"] / ldrc["nodes"] - 1) < 0.05 and abs(fit["kmax"] - ldrc["kmax"]) <= 2
    assert abs(fit["apl"] - ldrc["apl"]) < 0.05
    assert drc["nodes"] > orig["nodes"] > 2 * ldrc["nodes"]
    assert drc["kmax"] < fit["kmax"] - 10 and drc["apl"] > fit["apl"] + 0.5
    # the deeper core is not a denser one
    assert abs(ldrc["top_core_density"] - orig["top_core_density"]) < 0.05

    # honest DRC: the threshold alone (noise off) gives its graphs
    for eps, (nodes, dmax, apl) in {5: (2570, 9, 12.37), 10: (3570, 16, 10.28),
                                    100: (6943, 80, 6.988)}.items():
        off, on = rows[("honest DRC noise off (threshold alone)", eps)], rows[("honest DRC", eps)]
        assert (off["nodes"], off["max_degree"], off["kmax"]) == (nodes, dmax, 2)
        assert off["apl"] == pytest.approx(apl, abs=1e-2)
        assert on["kmax"] == 2 and abs(on["nodes"] / off["nodes"] - 1) < 0.05
        assert abs(on["apl"] - off["apl"]) < 0.5
    assert [rows[("honest DRC", e)]["nodes"] for e in (5, 10, 100)] == [2605, 3671, 6949]

    fig7, fig9 = _text("sala2011_fig7"), _text("sala2011_fig9")
    for text in (fig7, fig9):
        assert "python -m privpub.probes.sala2011" in text
    for quoted in ("6,365 nodes (6,099-6,871) / 38,989 edges", "maximum k-core 39 (38-40)",
                   "477 nodes in the 19-core against 51", "0.55 against 0.56",
                   "APL 2.87 against 3.74", "6,065 nodes, maximum k-core 38, APL 2.88",
                   "26,103 nodes, maximum k-core 22, APL 3.48",
                   "2,570 / 3,570 / 6,943 nodes", "maximum degree 9 / 16 / 80",
                   "APL 12.39 / 10.38 / 6.98", "2,612 / 3,624 / 6,921 nodes",
                   "APL 12.09 / 10.18 / 7.01", "42,310 (15,898-78,139)",
                   "23,663 (9,404-49,330)"):
        assert quoted in fig7, quoted
    for quoted in ("IC gap 1.39 (1.11-1.73", "74 nodes against the original's 31",
                   "maximum k-core of 39 against 19", "mean degree 21.1 against 9.4",
                   "38 / 445 / 20.4 and an IC gap of 1.16", "22 / 266 / 14.5 and 0.85",
                   "0.69 with the maximum k-core", "0.73 with the 19-core's size",
                   "0.87 with the hub's neighbour degree", "not an ablation"):
        assert quoted in fig9, quoted


def test_ldrc_rebuilt_is_pygmalions_graph():
    """The rebuild with the noise everywhere is pygmalion's LDRC graph; with the noise
    nowhere it has the dK-2 series of pygmalion's graph under noise_off() (which draws no
    noise, so its generator reads another stream); the anatomy of a star with a tail."""
    graph = Graph.from_networkx(nx.barabasi_albert_graph(300, 2, seed=1))
    rebuilt, _ = probe.ldrc_rebuilt(graph, epsilon=5, seed=3)
    shipped = pygmalion(graph, epsilon=5, rng=np.random.default_rng(3)).value
    assert np.array_equal(rebuilt.edges(), shipped.edges())
    rebuilt, _ = probe.ldrc_rebuilt(graph, epsilon=5, seed=3, noise_rows="none")
    with noise_off():
        shipped = pygmalion(graph, epsilon=5, rng=np.random.default_rng(3)).value
    assert dk2_l1(joint_degree(rebuilt), joint_degree(shipped)) == 0
    assert rebuilt.n_edges != probe.ldrc_rebuilt(graph, epsilon=5, seed=3)[0].n_edges
    with pytest.raises(ValueError, match="noise_rows"):
        probe.ldrc_rebuilt(graph, epsilon=5, seed=0, noise_rows="some")
    # star (hub 0, leaves 1-5) with a tail 5-6-7: leaves 1-4 and 7
    a = probe.path_anatomy(Graph.from_edges(np.array(
        [(0, i) for i in range(1, 6)] + [(5, 6), (6, 7)])))
    assert a["leaf_share"] == 5 / 8 and a["leaf_neighbour_degree"] == 5
    assert a["skeleton_nodes"] == 3 and a["skeleton_apl"] == pytest.approx(4 / 3)
    assert a["lcc_share"] == 1.0 and a["hubs"] == 0


@NEEDS_AS
def test_ldrc_short_paths_at_eps_5_10_are_what_the_notes_quote():
    rows = probe.apl_rows(_as(), noise_rows=("all", "hub rows", "below"))
    orig = rows[0]
    assert (orig["skeleton_nodes"], orig["hubs"]) == (10585, 51)
    assert orig["skeleton_apl"] == pytest.approx(3.370, abs=1e-3)
    assert round(100 * orig["leaf_share"]) == 35 and orig["leaf_neighbour_degree"] == 45
    by = {(r["noise_rows"], r["epsilon"], r["seed"]): r for r in rows[1:]}
    ldrc = [by[("all", e, s)] for e in (5, 10) for s in (0, 1, 2)]
    assert [r["nodes"] for r in ldrc] == [32892, 78139, 15898, 9404, 49330, 12254]
    # every graph connected; the core without the leaves as short as the fit alone's
    assert all(r["lcc_share"] == 1.0 for r in ldrc)
    assert [round(f(r["skeleton_apl"] for r in ldrc), 2) for f in (min, max)] == [2.20, 2.58]
    assert max(r["skeleton_apl"] for r in ldrc) < orig["skeleton_apl"] - 0.7
    # two regimes: the fit zeroes every row below the hubs (leaves on hubs), or it does not
    zeroed = [r for r in ldrc if r["edges_below"] == 0]
    assert [(r["epsilon"], r["seed"], r["first_row"]) for r in zeroed] == [
        (5, 0, 501), (5, 1, 1673), (10, 1, 1673)]
    assert round(zeroed[0]["min_noise"]) == -8000 and zeroed[0]["min_noise_row"] == 2331
    assert [round(100 * r["leaf_share"]) for r in zeroed] == [89, 96, 97]
    assert [r["leaf_neighbour_degree"] for r in zeroed] == [971, 637, 1003]
    assert [round(r["apl"], 2) for r in zeroed] == [3.41, 3.47, 3.44]
    kept = [r for r in ldrc if r["edges_below"] > 0]
    assert sorted(r["hubs"] for r in kept) == [86, 177, 245]
    assert [round(r["apl"], 2) for r in kept] == [2.82, 2.86, 2.82]
    # the ablation: the hub rows' noise alone gives LDRC's graphs, the rest's noise does not
    for eps in (5, 10):
        hub = [by[("hub rows", eps, s)] for s in (0, 1, 2)]
        below = [by[("below", eps, s)] for s in (0, 1, 2)]
        full = [by[("all", eps, s)] for s in (0, 1, 2)]
        assert abs(np.mean([r["apl"] for r in hub]) - np.mean([r["apl"] for r in full])) < 0.02
        assert all(abs(h["nodes"] / f["nodes"] - 1) < 0.05 for h, f in zip(hub, full, strict=True))
        assert all(6065 <= r["nodes"] <= 6771 and 2.87 < r["apl"] < 2.97 for r in below)
    fig7 = _text("sala2011_fig7")
    assert "python -m privpub.probes.sala2011 --ldrc-apl" in fig7
    for quoted in ("APL 2.20-2.58", "(1,430-11,520 nodes)", "against the original's 3.37 "
                   "(10,585 nodes)", "(APL 3.23 / 3.03)", "(6,065-6,771 nodes, APL 2.88-2.96)",
                   "-8,000 at degree 2,331", "every row below 501-1,673 (3 of the 6 graphs)",
                   "89-97% of the nodes are leaves (original 35%)",
                   "median degree 637-1,003 (original 45)", "APL 3.41-3.47",
                   "86-245 nodes of degree >= 100 (original 51), APL 2.82-2.86"):
        assert quoted in fig7, quoted
    assert "not probed" not in fig7


@NEEDS_AS
def test_reach_variance_is_what_the_notes_quote():
    out = probe.re_reach_variance(_as())
    r2 = {k: round(100 * v) for k, v in out["r2"].items()}
    assert [r2[f"largest {j} hubs"] for j in (2, 3, 5, 10)] == [72, 84, 92, 97]
    assert (r2["largest hub"], r2["own degree"], r2["neighbours' degree sum"]) == (52, 6, 94)
    assert round(100 * (out["r2"]["largest hub + own degree"] - out["r2"]["largest hub"])) == 4
    assert out["hub_degrees"][:5] == [2331, 1739, 1673, 1003, 971]
    fig8 = _text("sala2011_fig8")
    assert "python -m privpub.probes.sala2011 --re-variance" in fig8
    for quoted in ("largest 2 / 3 / 5 / 10 hubs (degrees 2,331, 1,739, 1,673, 1,003, 971",
                   "72% / 84% / 92% / 97%", "own degree explains 6% (4 points beside the split)",
                   "neighbours' degrees 94%"):
        assert quoted in fig8, quoted
    assert "not probed" not in fig8


@NEEDS_AS
def test_reliable_email_spread_is_what_the_notes_quote():
    graph = _as()
    spread = probe.re_seed_spread(graph, seeds=10)
    gaps = {k: round(100 * s["gap"], 1) for k, s in spread.items()}
    assert [gaps[k] for k in (1, 2, 5, 10)] == [28.1, 12.0, 5.2, 3.2]
    assert max(g for k, g in gaps.items() if k >= 20) == 0.9
    one = probe.re_single_draw(graph)
    assert one["hub_degree"] == 2331
    assert [round(100 * one[k], 1) for k in ("mean", "reach_hub_neighbours",
                                             "reach_hub_neighbours_min", "reach_others",
                                             "hub_neighbour_share")] == [
        6.0, 19.4, 14.3, 3.7, 14.3]
    assert round(100 * one["variance_share_of_hub_split"]) == 52
    fig8 = _text("sala2011_fig8")
    assert "python -m privpub.probes.sala2011" in fig8
    for quoted in ("28.1% / 12.0% / 5.2% at k = 1 / 2 / 5", "by 3.2% at k = 10",
                   "most 0.9% from k = 20", "6.0% of the other nodes", "19.4% (at least 14.3%)",
                   "2,331 neighbours (14.3% of the nodes), 3.7% otherwise", "52%"):
        assert quoted in fig8, quoted


@NEEDS_AS
def test_table1_counts_are_what_the_notes_quote():
    counts = probe.table1_counts()
    assert (counts["lines"], counts["links"], counts["nodes"]) == (65910, 32955, 16301)
    assert counts["codes"] == {-1: 29445, 0: 6722, 1: 29445, 2: 298}
    text = _text("sala2011_table1")
    assert "python -m privpub.probes.sala2011" in text
    for quoted in ("65,910 lines", "-1 / 1 / 0 / 2 on 29,445 / 29,445 / 6,722 / 298 lines",
                   "272 more nodes and 7,972 more edges", "a filter only removes"):
        assert quoted in text, quoted
    assert 16573 - counts["nodes"] == 272 and 40927 - counts["links"] == 7972


def test_honest_cells_on_a_built_graph():
    """The shares are of the edge count: a triangle 0-1-2 with a pendant 3 on node 2 has
    cells (2, 2): 1 edge, (2, 3): 2 edges, (1, 3): 1 edge."""
    rows = probe.honest_cells(Graph.from_edges(np.array([(0, 1), (1, 2), (0, 2), (2, 3)])),
                              epsilons=())
    assert rows == [{"epsilon": None, "cells": 3, "equal": 0.25, "within_2x": 0.75}]


@needs_data("web_notredame")
def test_honest_cells_on_www_are_what_fig6_quotes():
    rows = probe.honest_cells(load_dataset("web_notredame"))
    got = [(r["cells"], round(100 * r["equal"], 1), round(100 * r["within_2x"], 1))
           for r in rows]
    assert got == [(16193, 26.1, 38.0), (222, 55.8, 71.7), (366, 49.9, 66.2),
                   (1388, 37.5, 52.9)]
    fig6 = _text("sala2011_fig6")
    assert "--honest-cells web_notredame" in fig6
    for quoted in ("222 / 366 / 1,388 of the original's 16,193 cells",
                   "55.8% / 49.9% / 37.5%", "(original 26.1%)", "71.7% / 66.2% / 52.9%",
                   "(original 38.0%)"):
        assert quoted in fig6, quoted


@pytest.mark.parametrize("model", ["ic", "wc", "lt"])
def test_cascades_agree_with_cynetdiff(model):
    """cynetdiff (a Cython diffusion library) on the same CSR arrays, simulating the literal
    processes (LT with thresholds): our live-edge draws agree within the Monte Carlo
    error."""
    pytest.importorskip("cynetdiff")
    from privpub.metrics.applications import degree_discount_seeds, spread

    bench = load_benchmark("bench_sala2011")
    g = Graph.from_networkx(nx.barabasi_albert_graph(600, 3, seed=2))
    seeds = degree_discount_seeds(g, 10)
    ours = spread(g, seeds, model=model, rng=np.random.default_rng(0), runs=2000)
    theirs, se = bench._cynetdiff_spread(g, seeds, model, 2000)
    assert abs(ours - theirs) < 4 * se * np.sqrt(2)
