"""Probes behind day2016's Table 1 and Table 2 notes.

    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.day2016
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.day2016 --theta-bin

- Table 2: can any projection produce the L1 the paper prints, given the fraction of edges
  the paper says it keeps? :func:`l1_upper_bound` bounds every raw-count L1 a projection
  keeping that fraction can reach; :func:`table2_bound_cells` checks every published cell.
  Run as a module it prints, for every published cell, the paper's L1 and |E'|/|E| beside
  that bound on the graph's largest connected component (as Table 1): a published L1 above
  it cannot be the L1 Sec 4.2 defines, whatever the projection's details. ``--theta-bin``:
  pi_theta's L1 on Facebook under the three readings of "removing the bin of theta"
  (:func:`theta_bin_readings`).
- Table 1: how many self-loops day2016 counted as edges (:func:`self_loops_in_lcc`); run as
  a module, the self-loops of each raw file, all and inside the largest component, beside
  the paper's edge count minus ours.

``probes/tests/test_day2016.py`` pins the numbers the notes quote.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import yaml
from scipy.sparse.csgraph import connected_components

from privpub.data import load_dataset
from privpub.experiments.catalog import CONF_DIR

__all__ = ["l1_upper_bound", "table2_bound_cells", "self_loops_in_lcc", "raw_edges",
           "theta_bin_readings", "THETA_BIN_READINGS", "main"]

CONF = CONF_DIR / "experiment"
CONFIG = CONF / "day2016_table2.yaml"


def l1_upper_bound(n_nodes: int, n_edges: int, edge_fraction: float, *,
                   rounding: float = 0.005, truncated_at: int | None = None) -> float:
    """The largest raw-count L1 between the degree histograms of a graph and of a subgraph
    keeping ``edge_fraction`` of its edges (printed with ``rounding`` slack);
    ``truncated_at``: Truncation at that theta, which also drops nodes.

    A projection deletes edges (``pi_theta``, Flowgraph, Edge-Removal) or nodes with their
    edges (Truncation) and never adds any. Deleting ``r`` edges changes the degrees of at
    most ``min(2r, |V|)`` nodes, and each changed degree moves one node from one bin to
    another, which changes the raw-count L1 distance of the two degree histograms by at
    most 2. So ``L1(hist(G), hist(G')) <= 2 min(2 r, |V|)`` with
    ``r = |E| - |E'| = (1 - |E'|/|E|) |E|``. With the paper's own ``|E'|/|E|`` (printed to
    two decimals, so ``r <= (1 - f + 0.005) |E|``) this bounds every L1 the paper could
    have measured on the same graph, whatever the projection's details (edge order, ties,
    how bin theta is treated): a published L1 above it cannot be the raw-count L1 of Sec
    4.2 on that graph. Truncation at ``theta`` also removes the nodes of degree ``> theta``
    from the histogram (one count each); each has at least ``theta + 1`` of the ``r``
    removed edges, so at most ``2 r / (theta + 1)`` of them: its bound is
    ``2 min(2 r, |V|) + 2 r / (theta + 1)``.
    """
    removed = min(1.0, max(0.0, 1.0 - edge_fraction + rounding)) * n_edges
    bound = 2.0 * min(2.0 * removed, float(n_nodes))
    if truncated_at is not None:
        bound += 2.0 * removed / (truncated_at + 1)
    return bound


def table2_bound_cells(paper: dict, sizes: dict, *, labels=("T", "FG", "ER", "pi_theta"),
                       thetas=(16, 64, 128)) -> list[dict]:
    """Every published Table 2 cell with its L1 bound.

    ``paper``: ``{dataset: {"l1_counts": [...], "diag/edge_fraction": [...]}}`` in the
    table's order (theta-major, then the labels), as ``conf/experiment/day2016_table2.yaml``
    stores them; ``sizes``: ``{dataset: (|V|, |E|)}``. Returns one dict per cell with
    ``dataset``, ``theta``, ``label``, ``paper_l1``, ``edge_fraction``, ``bound`` and
    ``exceeds`` (the published L1 is above the bound).
    """
    out = []
    for name, rows in paper.items():
        if name not in sizes:
            continue
        n, m = sizes[name]
        cells = [(t, lab) for t in thetas for lab in labels]
        for (theta, label), l1, frac in zip(cells, rows["l1_counts"],
                                            rows["diag/edge_fraction"], strict=True):
            bound = l1_upper_bound(n, m, frac, truncated_at=theta if label == "T" else None)
            out.append({"dataset": name, "theta": theta, "label": label, "paper_l1": l1,
                        "edge_fraction": frac, "bound": bound, "exceeds": l1 > bound})
    return out


# --------------------------------------------------------------------------- Table 1
def raw_edges(name: str) -> np.ndarray:
    """A real graph's edges as stored in its file, self-loops included, in the ids the
    loader starts from (SNAP ids for edge lists, vertex indices for LG files)."""
    from privpub.data import dataset_files, get_dataset_spec
    from privpub.data.readers import read_edge_list, read_lg

    paths = dataset_files(get_dataset_spec(name).name)
    if str(paths[0]).endswith(".jlg"):
        return read_lg(paths[0])[2]
    return read_edge_list(paths[0])[:, :2]


def self_loops_in_lcc(edges) -> tuple[int, int]:
    """``(loops, loops in the largest component)``: the distinct nodes with a self-loop, all
    of them and those inside the largest connected component of the loop-free graph (the
    one day2016's Table 1 describes). day2016 counts these loops as edges; a simple graph
    has none (Table 1's notes)."""
    edges = np.asarray(edges, dtype=np.int64)[:, :2]
    loop = edges[:, 0] == edges[:, 1]
    ids, inverse = np.unique(edges[~loop], return_inverse=True)
    inverse = inverse.reshape(-1, 2)
    k = ids.size
    adjacency = sp.coo_matrix((np.ones(len(inverse)), (inverse[:, 0], inverse[:, 1])),
                              shape=(k, k))
    _, labels = connected_components(adjacency, directed=False)
    lcc_ids = ids[labels == np.argmax(np.bincount(labels))]
    loop_nodes = np.unique(edges[loop, 0])
    return int(loop_nodes.size), int(np.isin(loop_nodes, lcc_ids).sum())


# --------------------------------------------------------------------------- output
def table1() -> None:
    spec = yaml.safe_load((CONF / "day2016_table1.yaml").read_text())
    paper = next(p for p in spec["plots"] if p.get("kind") == "table")["paper"]
    print("| graph | self-loops | inside the LCC | paper |E| | ours (LCC, simple) | paper - ours |")
    print("|---|---|---|---|---|---|")
    for ds in spec["datasets"]:
        name = ds["name"]
        loops, inside = self_loops_in_lcc(raw_edges(name))
        ours = load_dataset(name, lcc=True).n_edges
        print(f"| {name} | {loops} | {inside} | {paper[name][1]:,} | {ours:,} | "
              f"{paper[name][1] - ours:,} |")
    print()

# --------------------------------------------------------------------------- theta bin
# Table 2's pi_theta "after removing the bin of theta": the three readings of the notes on
# Facebook (LCC, lexicographic order, as the experiment): ``--theta-bin``;
# probes/tests/test_day2016.py reruns it.

THETA_BIN_READINGS = ("drop", "zero", "keep")


def theta_bin_readings(graph, thetas=(16, 64, 128)) -> list[dict]:
    """Per theta, the raw-count L1 of pi_theta's histogram under each reading of "removing
    the bin of theta": ``drop`` (bin theta left out of the L1: ``drop_theta_bin=True``),
    ``zero`` (the released bin set to 0, so the true nodes of degree theta count as errors)
    and ``keep`` (the projected bin kept), and |E'|/|E|."""
    import privpub.mechanisms  # noqa: F401 - registers the projections
    from privpub.mechanisms.degree_projection import projection_edge_addition
    from privpub.metrics.distributions import l1_counts
    from privpub.types import DegreeHistogram

    truth = DegreeHistogram(np.bincount(graph.degrees()).astype(float))
    rows = []
    for theta in thetas:
        keep = projection_edge_addition(graph, theta=theta, rng=None)
        drop = projection_edge_addition(graph, theta=theta, drop_theta_bin=True, rng=None)
        zero = np.asarray(keep.value.counts, dtype=float).copy()
        zero[theta] = 0.0
        rows.append({
            "theta": theta,
            "drop": l1_counts(truth, drop.value),
            "zero": l1_counts(truth, DegreeHistogram(zero)),
            "keep": l1_counts(truth, keep.value),
            "edge_fraction": keep.diagnostics["edge_fraction"],
        })
    return rows


def theta_bin_main(name: str = "facebook") -> None:
    spec = yaml.safe_load(CONFIG.read_text())
    paper = next(p for p in spec["plots"] if p.get("kind") == "table")["paper"][name]
    graph = load_dataset(name, lcc=True)
    print(f"{name} (LCC): pi_theta's L1 under three readings of 'removing the bin of theta'")
    print("| theta | paper L1 | drop (ours) | bin set to 0 | bin kept | paper |E'|/|E| | ours |")
    print("|---|---|---|---|---|---|---|")
    for i, r in enumerate(theta_bin_readings(graph)):
        p_l1 = paper["l1_counts"][4 * i + 3]  # pi_theta is the 4th column of each theta
        p_f = paper["diag/edge_fraction"][4 * i + 3]
        print(f"| {r['theta']} | {p_l1:,} | " + " | ".join(
            f"{r[k]:,.0f} ({r[k] - p_l1:+,.0f})" for k in THETA_BIN_READINGS)
            + f" | {p_f:.2f} | {r['edge_fraction']:.3f} |")


def main() -> None:
    import sys

    if "--theta-bin" in sys.argv[1:]:
        theta_bin_main()
        return
    table1()
    spec = yaml.safe_load(CONFIG.read_text())
    paper = next(p for p in spec["plots"] if p.get("kind") == "table")["paper"]
    sizes = {}
    for ds in spec["datasets"]:
        graph = load_dataset(ds["name"], lcc=True)
        sizes[ds["name"]] = (graph.n_nodes, graph.n_edges)
    cells = table2_bound_cells(paper, sizes)
    print("| graph | |V| | |E| | theta | projection | paper |E'|/|E| | paper L1 | largest "
          "possible L1 | paper above it |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in cells:
        n, m = sizes[c["dataset"]]
        print(f"| {c['dataset']} | {n:,} | {m:,} | {c['theta']} | {c['label']} | "
              f"{c['edge_fraction']:.2f} | {c['paper_l1']:,} | {c['bound']:,.0f} | "
              f"{'**yes**' if c['exceeds'] else 'no'} |")
    bad = [c for c in cells if c["exceeds"]]
    print(f"\n{len(bad)} of {len(cells)} published L1 values exceed the largest L1 their own "
          "|E'|/|E| allows: " + ", ".join(f"{c['dataset']} theta={c['theta']} {c['label']}"
                                          for c in bad))


if __name__ == "__main__":
    main()
