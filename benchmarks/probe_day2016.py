"""Probes behind day2016's Table 1 and Table 2 notes.

    PRIVPUB_DATA_DIR=/path/to/data python benchmarks/probe_day2016.py
    PRIVPUB_DATA_DIR=/path/to/data python benchmarks/probe_day2016.py --theta-bin

Table 1: the self-loops of each raw file, all and inside the largest component, beside the
paper's edge count minus ours.

Table 2: which published L1 errors no projection can produce, given the fraction of edges
the paper says that projection keeps.
For every published cell: the paper's L1 and |E'|/|E|, and the largest raw-count L1 between
the degree histograms of the graph (largest connected component, as Table 1) and any
subgraph keeping that fraction of its edges (:func:`privpub.probes.day2016.l1_upper_bound`,
two-decimal rounding allowed for). A published L1 above it cannot be the L1 Sec 4.2 defines,
whatever the projection's details.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from privpub.data import load_dataset
from privpub.probes.day2016 import raw_edges, self_loops_in_lcc, table2_bound_cells

CONF = Path(__file__).resolve().parents[1] / "conf" / "experiment"
CONFIG = CONF / "day2016_table2.yaml"


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
