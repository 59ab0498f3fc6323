"""Time and memory per release of the synthetic-graph generators (PGB's and privpub's).

Each generator runs in a fresh process on one graph: one warm-up release (numba compiles),
then ``--repeats`` timed releases; it reports the median wall and CPU seconds per release
and the process's peak resident memory (which includes the loaded graph and the imports:
the graph alone is printed as the baseline).

    python benchmarks/bench_pgb_generators.py --dataset ca_hepph --epsilon 1 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

DEFAULT = ["dp_dk", "tmf", "tmf_as_published", "priv_skg", "priv_hrg", "privgraph", "dgg",
           "ldpgen", "pygmalion", "drc_honest"]


def one(name: str, dataset: str, epsilon: float, repeats: int) -> dict:
    """Run in the child: the medians of ``repeats`` releases after a warm-up."""
    import numpy as np

    from privpub.data import load_dataset
    from privpub.registry import get_mechanism

    graph = load_dataset(dataset, loop_nodes=True)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    func = get_mechanism(name).func
    func(graph, epsilon=epsilon, rng=np.random.default_rng(0))  # numba compiles here
    walls, cpus, edges = [], [], []
    for rep in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        out = func(graph, epsilon=epsilon, rng=np.random.default_rng(rep + 1))
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
        value = getattr(out, "value", out)
        edges.append(getattr(value, "n_edges", float("nan")))
    return {"mechanism": name, "wall_s": statistics.median(walls),
            "cpu_s": statistics.median(cpus), "edges": statistics.median(edges),
            "graph_rss_mb": base,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="ca_hepph")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mechanisms", nargs="+", default=DEFAULT)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(one(args.child, args.dataset, args.epsilon, args.repeats)))
        return 0
    print(f"{args.dataset}, epsilon {args.epsilon:g}, median of {args.repeats} releases "
          f"after a warm-up, one process each")
    print("| generator | wall s | CPU s | edges released | peak RSS MB (graph loaded: MB) |")
    print("|---|---|---|---|---|")
    for name in args.mechanisms:
        proc = subprocess.run([sys.executable, __file__, "--child", name, "--dataset",
                               args.dataset, "--epsilon", str(args.epsilon), "--repeats",
                               str(args.repeats)], capture_output=True, text=True)
        if proc.returncode:
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"| {name} | failed: {last} | | | |", flush=True)
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"| {name} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['edges']:,.0f} | "
              f"{r['peak_rss_mb']:.0f} ({r['graph_rss_mb']:.0f}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
