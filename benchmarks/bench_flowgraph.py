"""Time of the day2016 baselines per graph: FG projections, Flowgraph and Truncation.

For each graph of day2016 Table 1 (largest connected component, ``lcc=True``):

- ``FG proj (all theta)``: cold time of :func:`privpub.baselines.flowgraph.flow_projection` for
every
  candidate ``theta = 1, 2, ..., 2^floor(log2 |V|)`` (what one Flowgraph cell computes once);
- ``FG proj theta=64``: one projection;
- ``flowgraph cold`` / ``warm``: one :func:`privpub.baselines.flowgraph.flowgraph` release at
  ``eps = 1`` with an empty cache, then again with the projections cached (every further
  repetition of the experiment);
- ``truncation``: one :func:`privpub.baselines.truncation.truncation` release (``eps = 1``,
  ``theta = 64``).

    PRIVPUB_DATA_DIR=/path/to/data python benchmarks/bench_flowgraph.py [graph ...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privpub.baselines.flowgraph import (
    clear_cache,
    flow_projection,
    flowgraph,
    flowgraph_candidates,
)
from privpub.baselines.truncation import truncation
from privpub.data import load_dataset

GRAPHS = ("facebook", "wiki_vote", "ca_hepph", "email_enron", "cit_hepph", "loc_brightkite",
          "twitter", "dblp")


def _time(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def measure(name: str, data_dir: str | None) -> dict:
    g = load_dataset(name, data_dir=data_dir, lcc=True)
    candidates = flowgraph_candidates(g.n_nodes)
    t_all, _ = _time(lambda: [flow_projection(g, int(th)) for th in candidates])
    t_64, proj = _time(lambda: flow_projection(g, 64))
    clear_cache()
    t_cold, rel = _time(lambda: flowgraph(g, epsilon=1.0, rng=np.random.default_rng(0)))
    t_warm, _ = _time(lambda: flowgraph(g, epsilon=1.0, rng=np.random.default_rng(1)))
    t_trunc, _ = _time(lambda: truncation(g, epsilon=1.0, theta=64, rng=np.random.default_rng(0)))
    clear_cache()
    return {
        "graph": name, "nodes": g.n_nodes, "edges": g.n_edges, "thetas": candidates.size,
        "all": t_all, "t64": t_64, "frac64": proj.flow_value / (2 * g.n_edges),
        "cold": t_cold, "warm": t_warm, "chosen": rel.info["theta"], "trunc": t_trunc,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="*", default=list(GRAPHS))
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    print("| graph | nodes | edges | thetas | FG proj (all theta) s | FG proj theta=64 s "
          "| F/2E at 64 | flowgraph cold s | flowgraph warm s | theta chosen (eps=1) "
          "| truncation s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.graphs:
        r = measure(name, args.data_dir)
        print(f"| {r['graph']} | {r['nodes']} | {r['edges']} | {r['thetas']} | {r['all']:.1f} "
              f"| {r['t64']:.2f} | {r['frac64']:.3f} | {r['cold']:.1f} | {r['warm']:.3f} "
              f"| {r['chosen']} | {r['trunc']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
