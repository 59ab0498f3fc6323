"""Probes behind day2016's Table 1 and Table 2 notes (issue 13).

    PRIVPUB_DATA_DIR=/path/to/data python benchmarks/probe_day2016.py

Table 1: the self-loops of each raw file, all and inside the largest component, beside the
paper's edge count minus ours.

Table 2: which published L1 errors no projection can produce, given the fraction of edges
the paper says that projection keeps.
For every published cell: the paper's L1 and |E'|/|E|, and the largest raw-count L1 between
the degree histograms of the graph (largest connected component, as Table 1) and any
subgraph keeping that fraction of its edges (:func:`mechanisms.degree_probes.l1_upper_bound`,
two-decimal rounding allowed for). A published L1 above it cannot be the L1 Sec 4.2 defines,
whatever the projection's details.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from mechanisms.degree_probes import raw_edges, self_loops_in_lcc, table2_bound_cells
from privpub.data import load_dataset

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


def main() -> None:
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
