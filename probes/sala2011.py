"""Probes behind the causes sala2011's Figs 7-9 and Table 1 notes state: the
structure of the Pygmalion graphs on AS, with the noise switched off as the ablation.

    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.sala2011 [--seeds 3] [--re-seeds 10]
    python -m privpub.probes.sala2011 --honest-cells web_notredame   # Fig. 6's honest DRC
    python -m privpub.probes.sala2011 --ldrc-apl [--seeds 3]   # Fig. 7: LDRC's APL, eps 5 / 10
    python -m privpub.probes.sala2011 --re-variance            # Fig. 8: one node's reach

On AS (``as_caida``, no LCC restriction, as the experiments load it), for the original
graph, the dK-synthetic graph (:func:`privpub.baselines.dk_reference.dk_synthetic`) and the
Pygmalion graphs (:func:`privpub.mechanisms.pygmalion.pygmalion`) at epsilon 5 / 10 / 100 of

- LDRC in the beta order (the paper's Pygmalion), and its ablations: the same graph with
  the noise off (:func:`privpub.noise.noise_off`: the beta-order isotonic fit of the
  *true* counts alone; epsilon plays no role) and DRC (the same noise, no fit);
- the honest DRC (``method="drc_honest"``), and its ablation with the noise off (the
  threshold ``tau_c`` of :func:`privpub.mechanisms.pygmalion.honest_thresholds` applied to the true
  counts alone; epsilon still sets the threshold),

it prints nodes, edges, density 2m / (n (n - 1)), mean degree, maximum degree, the maximum
k-core number (networkx ``core_number`` on :meth:`privpub.types.Graph.to_networkx`), the
size, edges and density of that top k-core, the number of nodes in the k-core of the
original's top k (19 on AS), the mean degree of the largest hub's neighbours, the APL
(:func:`privpub.metrics.graph_structure.path_statistics`, 1,000 sampled sources) and the IC spread
at p = 0.01 (:func:`privpub.metrics.applications.influence_curve`, Degree Discount seeds, 500
Monte Carlo runs) with 1 and 50 seeds and its largest relative gap to the original's curve
(the ``influence_deviation_ic`` metric). Across the Pygmalion graphs it gives the Pearson
correlation of that IC gap with the core measures and with the hub's neighbour degree.

LDRC's short paths at eps 5 / 10 (Fig. 7, ``--ldrc-apl``): LDRC rebuilt step by step
(:func:`ldrc_rebuilt`) with DRC's noise kept in every cell, in the hub rows (larger degree
>= 100) only, below them only, or nowhere (the fit alone), and per graph
(:func:`path_anatomy`) its leaves, hubs, largest component, APL and the APL of its skeleton
(the graph without its leaves).

Reliable Email (Fig. 8): the spread over seeds of the 200-draw mean share at each k (the
largest relative gap of seeds 1 .. re_seeds-1 to seed 0, as the deviation metric compares
an original curve with the truth's seed-0 curve), and, exactly, the share of the graph one
compromised node reaches within two hops, split by whether it is a neighbour of the
largest hub, and (``--re-variance``, :func:`re_reach_variance`) the share of its variance
that adjacency to the largest hubs, the node's degree and its neighbours' degrees explain.
Table 1: the counts in the raw SNAP file.

Seeds are 0 .. seeds-1 (``numpy.random.default_rng(seed)`` for the mechanism and the
generator; the APL, IC and RE streams use seed 0), not the runner's, so numbers differ from
the experiments' within their run-to-run spread.
``probes/tests/test_sala2011.py`` reruns the seed-0 rows that the notes quote.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import networkx as nx
import numpy as np
from scipy.sparse.csgraph import connected_components
from scipy.stats import spearmanr

import privpub.baselines  # noqa: F401 - registers the reference mechanisms
import privpub.mechanisms  # noqa: F401
from privpub.algorithms.dk import joint_degree, synthesize
from privpub.baselines.dk_reference import dk_synthetic
from privpub.data import load_dataset
from privpub.isotonic import isotonic_regression
from privpub.mechanisms.drc import drc, drc_honest
from privpub.mechanisms.pygmalion import pygmalion
from privpub.metrics.applications import (
    RE_COMPROMISED,
    SEEDS,
    influence_curve,
    reliable_email_curve,
)
from privpub.metrics.graph_structure import path_statistics
from privpub.noise import noise_off
from privpub.types import Graph, JointDegree

GRAPH = "as_caida"
EPSILONS = (5, 10, 100)
#: (label, pygmalion method, noise off?, epsilons). LDRC with the noise off does not depend
#: on epsilon; DRC at eps 5 and 10 gives graphs of 320,000-600,000 edges (minutes to
#: measure), so it is run at eps 100 only (``--drc-epsilons`` for more).
SERIES = (
    ("LDRC", "ldrc", False, EPSILONS),
    ("LDRC noise off (fit alone)", "ldrc", True, (100,)),
    ("DRC (no fit)", "drc", False, (100,)),
    ("honest DRC", "drc_honest", False, EPSILONS),
    ("honest DRC noise off (threshold alone)", "drc_honest", True, EPSILONS),
)
CORE_MEASURES = ("kmax", "top_core_edges", "in_truth_core", "hub_neighbour_degree",
                 "mean_degree")


def structure(graph: Graph, *, truth_kmax: int | None = None) -> dict:
    """Size, density and k-core structure of ``graph`` (see the module docstring)."""
    n, m = graph.n_nodes, graph.n_edges
    deg = graph.degrees()
    g = graph.to_networkx()
    core = nx.core_number(g)
    kmax = max(core.values()) if core else 0
    top = [v for v, c in core.items() if c == kmax]
    top_m = g.subgraph(top).number_of_edges()
    hub = int(np.argmax(deg))
    nbrs = graph.adjacency[[hub]].indices
    return {
        "nodes": n,
        "edges": m,
        "density": 2 * m / (n * (n - 1)) if n > 1 else 0.0,
        "mean_degree": 2 * m / max(int((deg > 0).sum()), 1),
        "max_degree": int(deg.max()) if n else 0,
        "kmax": kmax,
        "top_core_nodes": len(top),
        "top_core_edges": top_m,
        "top_core_density": 2 * top_m / (len(top) * (len(top) - 1)) if len(top) > 1 else 0.0,
        "in_truth_core": sum(1 for c in core.values() if c >= (truth_kmax or kmax)),
        "hub_neighbour_degree": float(deg[nbrs].mean()) if nbrs.size else 0.0,
    }


def ic_curve(graph: Graph) -> np.ndarray:
    """IC spread (p = 0.01) of the first k Degree Discount seeds, k in SEEDS (seed 0)."""
    return influence_curve(graph, model="ic", rng=np.random.default_rng(0))


def ic_gap(curve: np.ndarray, truth_curve: np.ndarray, n_nodes: int, truth_nodes: int) -> float:
    """``influence_deviation_ic``: largest |ours(k) / truth(k) - 1| over seeds below both
    graphs' node counts."""
    keep = np.asarray(SEEDS) < min(n_nodes, truth_nodes)
    return float(np.max(np.abs(curve[keep] / truth_curve[keep] - 1.0)))


def _measure(graph: Graph, truth: dict | None, *, apl: bool, ic: bool) -> dict:
    row = structure(graph, truth_kmax=truth["kmax"] if truth else None)
    if apl:
        row["apl"] = path_statistics(graph, rng=np.random.default_rng(0))["apl"]
    if ic:
        curve = ic_curve(graph)
        row["ic_curve"] = curve
        row["ic_1"], row["ic_50"] = float(curve[0]), float(curve[-1])
        if truth is not None:
            row["ic_gap"] = ic_gap(curve, truth["ic_curve"], graph.n_nodes, truth["nodes"])
    return row


def structure_rows(graph: Graph, *, epsilons=EPSILONS, seeds=(0, 1, 2), series=SERIES,
                   apl: bool = True, ic: bool = True) -> list[dict]:
    """One row per graph: the original, the dK-synthetic graph per seed, and each series of
    :data:`SERIES` per epsilon and seed (labels ``series``, ``epsilon``, ``seed``)."""
    truth = _measure(graph, None, apl=apl, ic=ic)
    rows = [{"series": "original", "epsilon": None, "seed": None, **truth}]
    for seed in seeds:
        synthetic = dk_synthetic(graph, rng=np.random.default_rng(seed)).value
        rows.append({"series": "dK-synthetic", "epsilon": None, "seed": seed,
                     **_measure(synthetic, truth, apl=apl, ic=ic)})
    for label, method, off, series_epsilons in series:
        for eps in (e for e in series_epsilons if e in epsilons):
            for seed in seeds:
                if off:
                    with noise_off():
                        out = pygmalion(graph, epsilon=eps, method=method,
                                        rng=np.random.default_rng(seed))
                else:
                    out = pygmalion(graph, epsilon=eps, method=method,
                                    rng=np.random.default_rng(seed))
                rows.append({"series": label, "epsilon": eps, "seed": seed,
                             **_measure(out.value, truth, apl=apl, ic=ic)})
    return rows


CORRELATED = ("LDRC", "LDRC noise off (fit alone)", "DRC (no fit)", "dK-synthetic")


def ic_correlations(rows: list[dict], *, series=CORRELATED) -> tuple[int, dict]:
    """Spearman rank correlation of the IC gap with each of :data:`CORE_MEASURES` over the
    rows of the given series: ``(number of graphs, {measure: rho})``."""
    pick = [r for r in rows if r["series"] in series and "ic_gap" in r]
    gap = [r["ic_gap"] for r in pick]
    return len(pick), {key: float(spearmanr(gap, [r[key] for r in pick])[0])
                       for key in CORE_MEASURES}


def summarise(rows: list[dict], key: str, *, by: str = "series") -> dict:
    """``{(series, epsilon): (mean, min, max)}`` of ``key`` over seeds (``by``: the label
    in place of ``series``)."""
    out: dict = {}
    for r in rows:
        out.setdefault((r[by], r["epsilon"]), []).append(r[key])
    return {k: (float(np.mean(v)), float(np.min(v)), float(np.max(v))) for k, v in out.items()}


# --------------------------------------------------------------------------- Fig. 7: LDRC's APL
#: Rows of larger degree >= HUB_ROW are the hub rows: on AS they hold the original's 51 nodes
#: of degree >= 100 and 18,861 of its 32,955 edges; their DRC noise scale (4 k + 1) / eps is
#: 80-1,865 at eps = 5.
HUB_ROW = 100
#: Where :func:`ldrc_rebuilt` keeps DRC's noise: every cell (LDRC itself), the hub rows
#: only, the rows below them only, or nowhere (the fit alone, as under
#: :func:`privpub.noise.noise_off`).
NOISE_ROWS = ("all", "hub rows", "below", "none")


def ldrc_rebuilt(graph: Graph, *, epsilon: float, seed: int, noise_rows: str = "all",
                 generator: str = "auto") -> tuple[Graph, dict]:
    """Pygmalion's LDRC graph rebuilt step by step, with DRC's noise kept only in
    ``noise_rows`` (:data:`NOISE_ROWS`, split at :data:`HUB_ROW`).

    The steps and the random stream are :func:`~privpub.mechanisms.pygmalion.pygmalion`'s
    (``numpy.random.default_rng(seed)``): DRC's noisy counts
    (:func:`privpub.mechanisms.drc.drc`), the beta-order L2 isotonic fit (sala2011 Sec 4.3),
    the graph step (:func:`privpub.algorithms.dk.synthesize`). ``noise_rows="all"`` is
    pygmalion's graph; the others put the true count back in the other rows' cells before
    the fit. Returns the graph and, of the series: the fitted edges (rounded, clipped at 0)
    in rows below :data:`HUB_ROW` (``edges_below``), the smallest row with a fitted edge
    (``first_row``), the most negative noise draw kept and its row (``min_noise``,
    ``min_noise_row``).
    """
    if noise_rows not in NOISE_ROWS:
        raise ValueError(f"noise_rows must be one of {NOISE_ROWS}, got {noise_rows!r}")
    rng = np.random.default_rng(seed)
    jd = joint_degree(graph)
    noisy = drc(graph, epsilon=epsilon, rng=rng).counts
    if noise_rows != "all":
        keep = {"hub rows": jd.high >= HUB_ROW, "below": jd.high < HUB_ROW,
                "none": np.zeros(jd.size, bool)}[noise_rows]
        noisy = np.where(keep, noisy, jd.counts)
    fitted = isotonic_regression(noisy, increasing=True)  # JointDegree is beta-ordered
    out = synthesize(JointDegree(jd.low, jd.high, fitted), rng=rng, generator=generator,
                     name=f"pygmalion({graph.name})")
    edges = np.clip(np.rint(fitted), 0, None)
    noise = noisy - jd.counts
    return out.value, {
        "edges_below": int(edges[jd.high < HUB_ROW].sum()),
        "first_row": int(jd.high[edges > 0].min()) if edges.any() else 0,
        "min_noise": float(noise.min()),
        "min_noise_row": int(jd.high[np.argmin(noise)]),
    }


def path_anatomy(graph: Graph) -> dict:
    """What makes ``graph``'s paths short: nodes, edges, the share of leaves (degree 1),
    the median degree of the leaves' neighbours, nodes of degree >= :data:`HUB_ROW`, the
    largest component's share of the nodes, the APL (as :func:`structure_rows`: 1,000
    sampled sources, seed 0) and the APL and size of the skeleton (the graph without its
    leaves)."""
    deg = graph.degrees()
    leaves = np.flatnonzero(deg == 1)
    _, labels = connected_components(graph.adjacency, directed=False)
    skeleton = graph.subgraph(np.flatnonzero(deg > 1))
    return {
        "nodes": graph.n_nodes,
        "edges": graph.n_edges,
        "leaf_share": float(leaves.size / graph.n_nodes),
        "leaf_neighbour_degree": float(np.median(deg[graph.adjacency[leaves].indices]))
        if leaves.size else 0.0,
        "hubs": int((deg >= HUB_ROW).sum()),
        "lcc_share": float(np.bincount(labels).max() / graph.n_nodes),
        "apl": path_statistics(graph, rng=np.random.default_rng(0))["apl"],
        "skeleton_nodes": skeleton.n_nodes,
        "skeleton_apl": path_statistics(skeleton, rng=np.random.default_rng(0))["apl"],
    }


def apl_rows(graph: Graph, *, epsilons=(5, 10), seeds=(0, 1, 2),
             noise_rows=NOISE_ROWS) -> list[dict]:
    """:func:`path_anatomy` of the original (first row) and of :func:`ldrc_rebuilt`'s graph
    per noise placement, epsilon and seed, with the series' numbers (labels
    ``noise_rows``, ``epsilon``, ``seed``)."""
    rows = [{"noise_rows": "original", "epsilon": None, "seed": None, **path_anatomy(graph)}]
    for where in noise_rows:
        for eps in epsilons:
            for seed in seeds:
                synthetic, series = ldrc_rebuilt(graph, epsilon=eps, seed=seed, noise_rows=where)
                rows.append({"noise_rows": where, "epsilon": eps, "seed": seed, **series,
                             **path_anatomy(synthetic)})
    return rows


# --------------------------------------------------------------------------- Reliable Email
def re_seed_spread(graph: Graph, *, seeds: int = 10) -> dict:
    """Per k: the largest relative gap of the 200-draw mean share of seeds 1 .. seeds-1 to
    that of seed 0, and the seeds' std / mean."""
    curves = np.array([reliable_email_curve(graph, rng=np.random.default_rng(s))
                       for s in range(seeds)])
    gap = np.abs(curves[1:] / curves[0] - 1.0).max(axis=0)
    cv = curves.std(axis=0, ddof=1) / curves.mean(axis=0)
    return {k: {"gap": float(g), "cv": float(c), "mean": float(mu)}
            for k, g, c, mu in zip(RE_COMPROMISED, gap, cv, curves.mean(axis=0), strict=True)}


def two_hop_reach(graph: Graph) -> np.ndarray:
    """Per node, exactly, the share of the other n - 1 nodes within two hops of it: what
    one compromised node spams (k = 1)."""
    a = graph.adjacency.astype(np.int32)
    two = (a + a @ a).tocsr()
    two.eliminate_zeros()
    # A @ A holds the diagonal (v reaches itself in two hops) for every non-isolated v
    return (np.diff(two.indptr) - (graph.degrees() > 0)) / (graph.n_nodes - 1)


def re_single_draw(graph: Graph) -> dict:
    """Exactly, the share of the other n - 1 nodes one compromised node reaches within two
    hops (k = 1), over all nodes; split by adjacency to the largest hub."""
    n = graph.n_nodes
    reach = two_hop_reach(graph)
    deg = graph.degrees()
    hub = int(np.argmax(deg))
    nb = np.zeros(n, bool)
    nb[graph.adjacency[[hub]].indices] = True
    f = nb.mean()
    between = f * (1 - f) * (reach[nb].mean() - reach[~nb].mean()) ** 2
    return {
        "mean": float(reach.mean()),
        "sd": float(reach.std()),
        "hub_degree": int(deg[hub]),
        "hub_neighbour_share": float(f),
        "reach_hub_neighbours": float(reach[nb].mean()),
        "reach_hub_neighbours_min": float(reach[nb].min()),
        "reach_others": float(reach[~nb].mean()),
        "variance_share_of_hub_split": float(between / reach.var()),
        "sd_of_200_draw_mean": float(reach.std() / np.sqrt(200) / reach.mean()),
    }


#: The regressions of :func:`re_reach_variance`, in the order printed.
REACH_MODELS = ("largest hub", "largest 2 hubs", "largest 3 hubs", "largest 5 hubs",
                "largest 10 hubs", "own degree", "largest hub + own degree",
                "neighbours' degree sum", "largest 10 hubs + neighbours' degree sum")


def re_reach_variance(graph: Graph) -> dict:
    """The share of the variance (R^2 of a least-squares fit with an intercept) of
    :func:`two_hop_reach` over all nodes explained by each of :data:`REACH_MODELS`:
    "largest j hubs" regresses on j indicators (the node is a neighbour of the i-th
    largest hub; "largest hub" is :func:`re_single_draw`'s split), "own degree" on the
    node's degree, "neighbours' degree sum" on the sum of its neighbours' degrees (the
    two-hop count before overlaps). Also ``hub_degrees``: the 10 largest degrees."""
    reach = two_hop_reach(graph)
    deg = graph.degrees()
    adj = graph.adjacency.tocsr()
    hubs = np.argsort(-deg, kind="stable")[:10]
    near = [adj[[h]].toarray().ravel() > 0 for h in hubs]
    fsum = adj @ deg.astype(float)
    columns = {
        "largest hub": near[:1], "largest 2 hubs": near[:2], "largest 3 hubs": near[:3],
        "largest 5 hubs": near[:5], "largest 10 hubs": near, "own degree": [deg],
        "largest hub + own degree": [near[0], deg], "neighbours' degree sum": [fsum],
        "largest 10 hubs + neighbours' degree sum": [*near, fsum],
    }

    def r2(cols) -> float:
        x = np.column_stack([np.ones(reach.size), *cols]).astype(float)
        beta = np.linalg.lstsq(x, reach, rcond=None)[0]
        return float(1.0 - np.var(reach - x @ beta) / np.var(reach))

    return {"r2": {name: r2(columns[name]) for name in REACH_MODELS},
            "hub_degrees": [int(d) for d in deg[hubs]]}


# --------------------------------------------------------------------------- Table 1
def table1_counts(path: Path | None = None) -> dict:
    """Counts in SNAP's as-caida20040105.txt: directed lines, links, nodes, relation codes."""
    if path is None:
        path = (Path(os.environ["PRIVPUB_DATA_DIR"]) / "as-caida20040105"
                / "as-caida20040105.txt")
    data = np.loadtxt(path, dtype=np.int64, comments="#")
    u, v = np.minimum(data[:, 0], data[:, 1]), np.maximum(data[:, 0], data[:, 1])
    links = np.unique(np.column_stack([u, v])[u != v], axis=0)
    codes, counts = np.unique(data[:, 2], return_counts=True)
    return {
        "lines": int(data.shape[0]),
        "links": int(links.shape[0]),
        "nodes": int(np.unique(data[:, :2]).size),
        "codes": {int(c): int(k) for c, k in zip(codes, counts, strict=True)},
    }


# --------------------------------------------------------------------------- output
def honest_cells(graph: Graph, *, epsilons=(5, 10, 100), seed: int = 0) -> list[dict]:
    """What the honest DRC's threshold keeps (Fig. 6's assortative WWW graphs): per epsilon,
    the published cells and the share of the released edge count on equal-degree cells
    (``low == high``) and on cells whose degrees are within a factor 2; first row: the
    original's dK-2 series."""
    def shares(jd) -> dict:
        c = np.clip(jd.counts, 0, None)
        return {"cells": int(jd.low.size),
                "equal": float(c[jd.low == jd.high].sum() / c.sum()),
                "within_2x": float(c[jd.high <= 2 * jd.low].sum() / c.sum())}

    rows = [{"epsilon": None, **shares(joint_degree(graph))}]
    for eps in epsilons:
        release = drc_honest(graph, epsilon=eps, rng=np.random.default_rng(seed))
        rows.append({"epsilon": eps, **shares(release.value)})
    return rows


def _fmt(mean_min_max, digits=0, pct=False) -> str:
    mu, lo, hi = mean_min_max
    f = (lambda x: f"{100 * x:.{digits}f}%") if pct else (lambda x: f"{x:,.{digits}f}")
    return f(mu) if lo == hi else f"{f(mu)} ({f(lo)}-{f(hi)})"


def _print_ldrc_apl(graph: Graph, *, seeds) -> None:
    print(f"LDRC on AS ({GRAPH}) rebuilt with DRC's noise kept in some rows only (rows split "
          f"at degree {HUB_ROW}), seeds {seeds[0]}..{seeds[-1]}; 'all' is pygmalion's graph, "
          "'none' the fit alone\n")
    cols = ("nodes", "edges", "edges_below", "first_row", "min_noise", "min_noise_row",
            "leaf_share", "leaf_neighbour_degree", "hubs", "lcc_share", "apl",
            "skeleton_nodes", "skeleton_apl")
    print("| noise in | eps | seed | " + " | ".join(cols) + " |")
    print("|---|---|---|" + "---|" * len(cols))
    rows = apl_rows(graph, seeds=seeds)
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c, "-")
            cells.append(v if isinstance(v, str) else f"{v:.3f}" if c.endswith(("share", "apl"))
                         else f"{v:,.0f}")
        seed = "" if r["seed"] is None else r["seed"]
        print(f"| {r['noise_rows']} | {r['epsilon'] or ''} | {seed} | " + " | ".join(cells) + " |")
    print("\nmean (min-max) over seeds:")
    stats = {c: summarise(rows[1:], c, by="noise_rows")
             for c in ("nodes", "apl", "leaf_share", "skeleton_nodes", "skeleton_apl")}
    for key in stats["nodes"]:
        print(f"  noise in {key[0]}, eps {key[1]}: nodes {_fmt(stats['nodes'][key])}, APL "
              f"{_fmt(stats['apl'][key], 2)}, leaves {_fmt(stats['leaf_share'][key], pct=True)}"
              f", skeleton {_fmt(stats['skeleton_nodes'][key])} nodes with APL "
              f"{_fmt(stats['skeleton_apl'][key], 2)}")
    swapped, _ = ldrc_rebuilt(graph, epsilon=5, seed=seeds[0], generator="stub_matching")
    print(f"\nthe graph step swapped (stub matching for networkx), eps 5, seed {seeds[0]}: "
          f"{swapped.n_nodes:,} nodes, APL "
          f"{path_statistics(swapped, rng=np.random.default_rng(0))['apl']:.3f}")


def _print_re_variance(graph: Graph) -> None:
    out = re_reach_variance(graph)
    print(f"One compromised node on AS ({GRAPH}): share of the variance of its two-hop reach "
          f"(R^2, all {graph.n_nodes:,} nodes) explained by")
    for name, r2 in out["r2"].items():
        print(f"  {name}: {100 * r2:.1f}%")
    print("the 10 largest degrees: " + ", ".join(f"{d:,}" for d in out["hub_degrees"]))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m privpub.probes.sala2011",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--re-seeds", type=int, default=10)
    parser.add_argument("--drc-epsilons", type=float, nargs="+", default=[100])
    parser.add_argument("--honest-cells", metavar="DATASET",
                        help="only: the cells the honest DRC keeps on DATASET (Fig. 6)")
    parser.add_argument("--ldrc-apl", action="store_true",
                        help="only: why LDRC's paths on AS are short at eps 5 / 10 (Fig. 7)")
    parser.add_argument("--re-variance", action="store_true",
                        help="only: what explains one compromised node's reach on AS (Fig. 8)")
    args = parser.parse_args()
    t0 = time.time()
    if args.ldrc_apl:
        _print_ldrc_apl(load_dataset(GRAPH), seeds=tuple(range(args.seeds)))
        print(f"\n({time.time() - t0:.0f} s)")
        return
    if args.re_variance:
        _print_re_variance(load_dataset(GRAPH))
        return
    if args.honest_cells:
        print(f"honest DRC on {args.honest_cells}, seed 0: published cells, share of the "
              "released edges on cells low == high / high <= 2 low")
        for r in honest_cells(load_dataset(args.honest_cells)):
            who = "original" if r["epsilon"] is None else f"eps {r['epsilon']:g}"
            print(f"  {who}: {r['cells']:,} cells, {100 * r['equal']:.1f}% / "
                  f"{100 * r['within_2x']:.1f}%")
        return
    graph = load_dataset(GRAPH)
    series = tuple((label, method, off, tuple(args.drc_epsilons) if method == "drc" else eps)
                   for label, method, off, eps in SERIES)
    rows = structure_rows(graph, seeds=tuple(range(args.seeds)), series=series,
                          epsilons=tuple(sorted({*EPSILONS, *args.drc_epsilons})))
    print(f"AS ({GRAPH}): structure of the Pygmalion graphs, mean (min-max) over seeds "
          f"0..{args.seeds - 1}\n")
    cols = [("nodes", 0), ("edges", 0), ("density", 6), ("mean_degree", 2), ("max_degree", 0),
            ("kmax", 1), ("top_core_nodes", 0), ("top_core_edges", 0),
            ("top_core_density", 2), ("in_truth_core", 0), ("hub_neighbour_degree", 1),
            ("apl", 2), ("ic_1", 1), ("ic_50", 1), ("ic_gap", 2)]
    print("| series | eps | " + " | ".join(c for c, _ in cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    stats = {c: summarise(rows, c) for c, _ in cols if c != "ic_gap"}
    stats["ic_gap"] = summarise([r for r in rows if "ic_gap" in r], "ic_gap")
    for key in stats["nodes"]:
        cells = [_fmt(stats[c][key], d) if key in stats[c] else "-" for c, d in cols]
        eps = "" if key[1] is None else f"{key[1]:g}"
        print(f"| {key[0]} | {eps} | " + " | ".join(cells) + " |")
    n_graphs, corr = ic_correlations(rows)
    print(f"\nSpearman correlation of the IC gap over {n_graphs} graphs ("
          + ", ".join(CORRELATED) + "): " + ", ".join(f"{k} {v:+.2f}" for k, v in corr.items()))
    n_graphs, corr = ic_correlations(rows, series=("LDRC",))
    print(f"  LDRC only ({n_graphs} graphs): "
          + ", ".join(f"{k} {v:+.2f}" for k, v in corr.items()))
    print("\nSeed 0 (the rows probes/tests/test_sala2011.py reruns):")
    for r in rows:
        if r["seed"] in (None, 0):
            print(f"  {r['series']} eps {r['epsilon']}: "
                  + ", ".join(f"{c} {r[c]:.4g}" for c, _ in cols if c in r))

    print(f"\nReliable Email on {GRAPH}: the 200-draw mean share over seeds 0..{args.re_seeds - 1}"
          " (largest relative gap to seed 0; std / mean)")
    spread = re_seed_spread(graph, seeds=args.re_seeds)
    print("| k | " + " | ".join(str(k) for k in spread) + " |")
    print("|---|" + "---|" * len(spread))
    print("| mean share | " + " | ".join(f"{s['mean']:.3f}" for s in spread.values()) + " |")
    print("| gap to seed 0 | " + " | ".join(f"{100 * s['gap']:.1f}%" for s in spread.values())
          + " |")
    print("| std / mean | " + " | ".join(f"{100 * s['cv']:.1f}%" for s in spread.values())
          + " |")
    one = re_single_draw(graph)
    print(f"\nOne compromised node (k = 1, exact over all nodes): reaches {100 * one['mean']:.1f}%"
          f" of the others on average (sd {100 * one['sd']:.1f}%); the {one['hub_degree']:,} "
          f"neighbours of the largest hub ({100 * one['hub_neighbour_share']:.1f}% of the nodes)"
          f" reach {100 * one['reach_hub_neighbours']:.1f}% (at least "
          f"{100 * one['reach_hub_neighbours_min']:.1f}%), the others "
          f"{100 * one['reach_others']:.1f}%; that split carries "
          f"{100 * one['variance_share_of_hub_split']:.0f}% of the variance; the 200-draw "
          f"mean's sd is {100 * one['sd_of_200_draw_mean']:.1f}% of the mean")

    t1 = table1_counts()
    print(f"\nTable 1: as-caida20040105.txt has {t1['lines']:,} lines, {t1['links']:,} links "
          f"between {t1['nodes']:,} nodes; relation codes {t1['codes']}")
    print(f"\n({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
