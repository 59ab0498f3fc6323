"""Running time and memory of day2016's two mechanisms on the paper's eight graphs.

For every graph (largest connected component, as day2016 Table 1) one full
``theta_cumulative_histogram`` and one ``theta_omega_histogram`` run (``Theta = 200``,
``epsilon = 1``) are timed; the first call of each is a warm-up (numba compilation and
caches) and is not counted, the median of ``--repeats`` further calls is reported, with the
tracemalloc peak of one call (as the runner measures memory; numba-internal arrays are not
seen by tracemalloc) and the speed-up over day2016 Table 3 (Intel i7-3770 3.4 GHz; their
"Total" column). Everything runs on one core (the numba kernels are serial). Graphs whose
files are missing are skipped with a message.

    python benchmarks/bench_day2016.py [--data-dir DIR] [--repeats 3] [--datasets dblp ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import tracemalloc

import numpy as np

from privpub.data import load_dataset
from privpub.errors import DataError
from privpub.mechanisms.theta_cumulative import theta_cumulative_histogram
from privpub.mechanisms.theta_histogram import theta_omega_histogram

#: day2016 Table 3: running time in seconds, (theta, Omega)-Histogram and
#: theta-CumulativeHistogram, as (quality computation, total).
PAPER_TABLE3 = {
    "facebook": {"theta_omega_histogram": (78.86, 79.43), "theta_cumulative": (74.38, 74.98)},
    "wiki_vote": {"theta_omega_histogram": (104.28, 104.99), "theta_cumulative": (97.85, 98.58)},
    "ca_hepph": {"theta_omega_histogram": (130.84, 131.70), "theta_cumulative": (119.50, 120.39)},
    "email_enron": {
        "theta_omega_histogram": (287.62, 289.45),
        "theta_cumulative": (263.52, 265.39),
    },
    "cit_hepph": {"theta_omega_histogram": (574.06, 578.13), "theta_cumulative": (548.25, 552.41)},
    "loc_brightkite": {
        "theta_omega_histogram": (407.69, 410.29),
        "theta_cumulative": (367.38, 370.08),
    },
    "twitter": {
        "theta_omega_histogram": (1867.66, 1880.78),
        "theta_cumulative": (1833.84, 1847.35),
    },
    "dblp": {"theta_omega_histogram": (2773.83, 2791.14), "theta_cumulative": (2566.02, 2582.96)},
}

METHODS = {
    "theta_cumulative": theta_cumulative_histogram,
    "theta_omega_histogram": theta_omega_histogram,
}


def measure(graph, method: str, *, repeats: int, theta_max: int, epsilon: float) -> dict:
    func = METHODS[method]

    def run(seed):
        return func(graph, epsilon=epsilon, theta_max=theta_max, rng=np.random.default_rng(seed))

    run(0)  # warm-up: numba compilation / loading the compiled cache
    times = []
    for seed in range(1, repeats + 1):
        t0 = time.perf_counter()
        run(seed)
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    try:
        run(repeats + 1)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    return {"seconds": statistics.median(times), "peak_mb": peak}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", default=os.environ.get("PRIVPUB_DATA_DIR"), help="data directory"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--theta-max", type=int, default=200)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--datasets", nargs="*", default=list(PAPER_TABLE3))
    args = parser.parse_args()

    print(
        f"Theta = {args.theta_max}, epsilon = {args.epsilon}, median of {args.repeats} runs "
        "after one warm-up; paper = day2016 Table 3 'Total'\n"
    )
    print(
        "| graph | nodes | edges | method | seconds | peak MB (tracemalloc) | paper s | speed-up |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for name in args.datasets:
        try:
            graph = load_dataset(name, data_dir=args.data_dir, lcc=True)
        except DataError as exc:
            print(f"| {name} | skipped: {str(exc).splitlines()[0]} |")
            continue
        for method in METHODS:
            r = measure(
                graph, method, repeats=args.repeats, theta_max=args.theta_max, epsilon=args.epsilon
            )
            paper = PAPER_TABLE3.get(name, {}).get(method, (float("nan"),) * 2)[1]
            print(
                f"| {name} | {graph.n_nodes:,} | {graph.n_edges:,} | {method} | "
                f"{r['seconds']:.3f} | {r['peak_mb']:.1f} | {paper:.2f} | "
                f"{paper / r['seconds']:.0f}x |"
            )


if __name__ == "__main__":
    main()
