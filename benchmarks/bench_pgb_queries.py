"""Speed of PGB's fifteen queries (metrics/pgb_queries.py) on a ~1M-edge graph.

Target: all fifteen for one (truth, release) pair in under 60 s on one core, memory linear
in the edges. The truth is a Chung-Lu graph (privpub.data.synthetic.chung_lu, 200,000
nodes, mean degree 10) or a dataset; the release is a copy with a fraction of its edges
removed at random. Prints the seconds of each query in PGB's order (the first query to need
a statistic pays for it on both graphs: the truth's triangles, BFS, Louvain partition and
eigenvector centrality are computed once), the total, and the peak resident memory.
Times are CPU seconds of this process (single-threaded code: wall time on an idle core);
the wall time is printed too.

    python benchmarks/bench_pgb_queries.py
    python benchmarks/bench_pgb_queries.py --dataset ca_hepph --drop 0.1
    python benchmarks/bench_pgb_queries.py --sampling-error ca_hepph --repeats 10
"""

from __future__ import annotations

import argparse
import resource
import time
import zlib

import numpy as np

from privpub.metrics import pgb_queries as q
from privpub.registry import get_metric
from privpub.types import Graph

TARGET_S = 60.0


def perturbed(graph: Graph, drop: float, rng: np.random.Generator) -> Graph:
    """``graph`` with each edge removed independently with probability ``drop``."""
    e = graph.edges()
    keep = rng.random(len(e)) >= drop
    return Graph.from_edges(e[keep], n_nodes=graph.n_nodes)


def load(dataset: str | None, n: int, degree: float, seed: int) -> Graph:
    if dataset:
        from privpub.data import load_dataset

        return load_dataset(dataset)
    from privpub.data.synthetic import chung_lu

    return chung_lu(n=n, average_degree=degree, rng=np.random.default_rng(seed))


def time_queries(truth: Graph, release: Graph, seed: int) -> dict[str, float]:
    seconds = {}
    for name in q.PGB_QUERIES:
        info = get_metric(name)
        kw = {"rng": np.random.default_rng([seed, zlib.crc32(info.stream.encode())])} \
            if info.takes_rng else {}
        t0, c0 = time.perf_counter(), time.process_time()
        value = info.func(truth, release, **kw)
        seconds[name] = time.process_time() - c0
        print(f"  {name:22s} {seconds[name]:7.2f} s CPU ({time.perf_counter() - t0:7.2f} s "
              f"wall)   value {value:.6g}", flush=True)
    return seconds


def sampling_error(dataset: str, repeats: int, drop: float) -> None:
    """Path queries from ``PATH_SOURCES`` sources shared by truth and release (as the metrics
    sample) against the exact values on ``dataset``, over ``repeats`` source draws."""
    truth = load(dataset, 0, 0, 0)
    release = perturbed(truth, drop, np.random.default_rng(1))
    ex = [q.path_summary(g, rng=0, exact_max_nodes=g.n_nodes) for g in (truth, release)]
    exact = {"diameter_re": q.relative_error(ex[0]["diameter"], ex[1]["diameter"]),
             "avg_shortest_path_re": q.relative_error(ex[0]["apl"], ex[1]["apl"]),
             "distance_kl": q.kl_divergence(ex[0]["hist"], ex[1]["hist"])}
    found = {k: [] for k in exact}
    apl = []
    for s in range(repeats):
        st, sr = (q.path_summary(g, rng=np.random.default_rng(s), exact_max_nodes=0)
                  for g in (truth, release))
        found["diameter_re"].append(q.relative_error(st["diameter"], sr["diameter"]))
        found["avg_shortest_path_re"].append(q.relative_error(st["apl"], sr["apl"]))
        found["distance_kl"].append(q.kl_divergence(st["hist"], sr["hist"]))
        apl.append(st["apl"])
    print(f"{dataset}: n={truth.n_nodes} m={truth.n_edges}, release m={release.n_edges}; "
          f"{q.PATH_SOURCES} paired sources, {repeats} draws")
    print(f"  truth APL exact {ex[0]['apl']:.5f}, sampled {np.mean(apl):.5f} "
          f"(sd {np.std(apl, ddof=1):.5f}); diameter exact {ex[0]['diameter']:.0f}")
    for k, v in found.items():
        v = np.array(v)
        print(f"  {k:22s} exact {exact[k]:.5g}  sampled mean {v.mean():.5g} sd "
              f"{v.std(ddof=1):.3g}  max |error| {np.max(np.abs(v - exact[k])):.3g}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=None, help="a privpub dataset instead of Chung-Lu")
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--degree", type=float, default=10.0)
    ap.add_argument("--drop", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sampling-error", metavar="DATASET", default=None)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    if args.sampling_error:
        sampling_error(args.sampling_error, args.repeats, args.drop)
        return
    t0 = time.perf_counter()
    truth = load(args.dataset, args.n, args.degree, args.seed)
    release = perturbed(truth, args.drop, np.random.default_rng(args.seed + 1))
    print(f"truth n={truth.n_nodes} m={truth.n_edges}; release m={release.n_edges} "
          f"(built in {time.perf_counter() - t0:.1f} s)")
    seconds = time_queries(truth, release, args.seed)
    total = sum(seconds.values())  # CPU seconds: wall time depends on the machine's load
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"total {total:.1f} s CPU (target {TARGET_S:.0f} s: {total / TARGET_S:.2f}x); "
          f"peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
