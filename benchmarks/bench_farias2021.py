"""Speed of farias2021's building blocks, and the budget ratio behind Fig. 5's headline.

Parts (``--parts``, default all):

``ebc``     egocentric betweenness of every node of Github (musae_git), DBLP and Enron
            (target: Github and DBLP under 60 s each on one core), with the maximum degree
            and Lemma 5.2's global sensitivity of each graph. The first call compiles the
            numba kernel (a warm-up on karate, not counted).
``topk``    one PrivTopk run (k = 20) of each variant once EBC and the dampened scores are
            cached (target: under 1 s), median of ``--repeats``; and the one-off cost of the
            dampened scores per graph.
``tree``    one DiffPID3 tree of depth 5 on ACS (target: under 5 s per tree) per variant and
            criterion, median of ``--repeats`` after a warm-up.
``ratio``   the budget ratio at equal accuracy: on a log grid of B (4 points per decade),
            the smallest B at which GlobalPrivTopk and ShiftedLocalPrivTopk reach a mean
            top-k accuracy of 0.5 and 0.8 (``--sims`` simulations), and their ratio.

Everything runs on one core (the numba kernels are serial).

    python benchmarks/bench_farias2021.py [--data-dir DIR] [--parts ebc topk tree ratio]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from privpub.algorithms.centrality import (
    ebc_global_sensitivity,
    ebc_ranking,
    egocentric_betweenness,
)
from privpub.data import load_dataset
from privpub.errors import DataError
from privpub.mechanisms.diffpid3 import diffpid3
from privpub.mechanisms.priv_topk import priv_topk, priv_topk_scores
from privpub.metrics.ranking import topk_overlap

GRAPHS = ("musae_git", "dblp", "email_enron")
#: Sec 6.1 as printed (Enron's and DBLP's are swapped there, see farias2021_fig5's notes).
PAPER_DELTA = {"musae_git": 22_361_076.5, "dblp": 477_826.5, "email_enron": 29_326.5}


def _load(name, data_dir):
    try:
        return load_dataset(name, data_dir=data_dir)
    except DataError as exc:
        print(f"{name}: skipped ({str(exc).splitlines()[0]})")
        return None


def bench_ebc(data_dir):
    egocentric_betweenness(load_dataset("karate"))  # compile
    print("\n## EBC of every node (one core)\n")
    print(f"{'graph':<12} {'nodes':>8} {'edges':>9} {'max deg':>8} {'seconds':>8} "
          f"{'Delta EBC (Lemma 5.2)':>22} {'printed in Sec 6.1':>19}")
    for name in GRAPHS:
        g = _load(name, data_dir)
        if g is None:
            continue
        start = time.perf_counter()
        egocentric_betweenness(g)
        sec = time.perf_counter() - start
        d = int(g.degrees().max())
        print(f"{name:<12} {g.n_nodes:>8,} {g.n_edges:>9,} {d:>8,} {sec:>8.2f} "
              f"{ebc_global_sensitivity(d):>22,.1f} {PAPER_DELTA[name]:>19,.1f}")


def bench_topk(data_dir, repeats):
    print("\n## PrivTopk, k = 20, after EBC is cached\n")
    print(f"{'graph':<12} {'variant':<8} {'scores once (s)':>16} {'one run (s)':>12}")
    for name in GRAPHS:
        g = _load(name, data_dir)
        if g is None:
            continue
        ebc_ranking(g)  # computes and caches EBC
        for variant in ("global", "local", "shifted"):
            start = time.perf_counter()
            priv_topk_scores(g, variant=variant)
            once = time.perf_counter() - start
            rng = np.random.default_rng(0)
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                priv_topk(g, epsilon=1.0, k=20, variant=variant, rng=rng)
                times.append(time.perf_counter() - start)
            print(f"{name:<12} {variant:<8} {once:>16.3f} {statistics.median(times):>12.4f}")


def bench_tree(data_dir, repeats):
    print("\n## DiffPID3, depth 5, ACS (47,461 rows, 23 binary attributes)\n")
    try:
        table = load_dataset("acs", data_dir=data_dir)
    except DataError as exc:
        print(f"acs: skipped ({str(exc).splitlines()[0]})")
        return
    print(f"{'variant':<8} {'criterion':<9} {'seconds per tree':>17} {'nodes':>6}")
    for criterion in ("ig", "gini"):
        for variant in ("global", "local", "shifted"):
            diffpid3(table, epsilon=1.0, depth=2, criterion=criterion, variant=variant,
                     rng=np.random.default_rng(0))  # warm-up (numba)
            times, nodes = [], 0
            for r in range(repeats):
                start = time.perf_counter()
                tree = diffpid3(table, epsilon=1.0, depth=5, criterion=criterion,
                                variant=variant, rng=np.random.default_rng(r))
                times.append(time.perf_counter() - start)
                nodes = tree.n_nodes
            print(f"{variant:<8} {criterion:<9} {statistics.median(times):>17.3f} {nodes:>6}")


def bench_ratio(data_dir, sims):
    print(f"\n## Budget at equal accuracy (mean of {sims} simulations; B = 10^(i/4))\n")
    grid = 10.0 ** (np.arange(-12, 17) / 4)
    print(f"{'graph':<12} {'k':>3} {'level':>6} {'B global':>10} {'B shifted':>10} "
          f"{'ratio':>9}")
    for name in GRAPHS:
        g = _load(name, data_dir)
        if g is None:
            continue
        truth = ebc_ranking(g)
        for k in (5, 10, 20):
            acc = {}
            for variant in ("global", "shifted"):
                rng = np.random.default_rng(1)
                acc[variant] = np.array([
                    np.mean([topk_overlap(truth, priv_topk(g, epsilon=b, k=k, variant=variant,
                                                           rng=rng).value, k=k)
                             for _ in range(sims)])
                    for b in grid
                ])
            for level in (0.5, 0.8):
                first = {}
                for v, a in acc.items():
                    hit = np.flatnonzero(a >= level)
                    first[v] = grid[hit[0]] if hit.size else np.nan
                ratio = first["global"] / first["shifted"]
                print(f"{name:<12} {k:>3} {level:>6} {first['global']:>10.3g} "
                      f"{first['shifted']:>10.3g} {ratio:>9.3g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("PRIVPUB_DATA_DIR"))
    parser.add_argument("--parts", nargs="+", default=["ebc", "topk", "tree", "ratio"],
                        choices=["ebc", "topk", "tree", "ratio"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sims", type=int, default=30)
    args = parser.parse_args()
    if "ebc" in args.parts:
        bench_ebc(args.data_dir)
    if "topk" in args.parts:
        bench_topk(args.data_dir, args.repeats)
    if "tree" in args.parts:
        bench_tree(args.data_dir, args.repeats)
    if "ratio" in args.parts:
        bench_ratio(args.data_dir, args.sims)


if __name__ == "__main__":
    main()
