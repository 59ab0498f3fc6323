"""dp_synthetic_graph at today's size: one release per generator, and each metric on the truth,
on fractions of a SNAP-shaped graph, with the fitted exponent and the extrapolation to full size.

Each (generator or metric, fraction) runs in a fresh process: ``load_dataset(<graph>,
fraction=f)`` (built once, then memory-mapped from the compute cache), a warm-up on karate
(numba compiles), then one timed release at epsilon 1 (or the metric's statistic on the
truth: ``metric(truth, truth)``, each statistic computed once per graph). It prints wall and
CPU seconds and the process's peak resident memory (VmHWM, the graph and imports included:
the graph alone is printed as the baseline) and, for a generator, the edges it released. The
exponent ``b`` of ``cost ~ edges^b`` is the least-squares slope of log CPU seconds on log
edges over the fractions that ran; the extrapolation is the largest fraction's CPU seconds
times ``(1 / f) ** b`` (edges are proportional to the fraction); the peak memory likewise,
with its own exponent. A run past ``--timeout`` seconds is stopped and shown as such.

    python benchmarks/bench_large_generators.py --fractions 0.015625 0.0625 0.25
    python benchmarks/bench_large_generators.py --only metrics --fractions 0.0625
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time

GENERATORS = ["dgg", "dk_pa", "dp_dk", "drc", "drc_honest", "ldpgen", "ldrc",
              "ldrc_true_count_order", "priv_hrg", "priv_skg", "privgraph", "pygmalion",
              "pygmalion_true_count_order", "tmf"]
#: One metric per statistic (the others share it through the per-graph memo): degrees (Q1-Q6),
#: triangles and clustering (Q3, Q10, Q11), distances (Q7-Q9), Louvain (Q12-Q13),
#: assortativity (Q14), eigenvector centrality (Q15), and the dK-2 series.
METRICS = ["degree_kl", "triangles_re", "avg_shortest_path_re", "modularity_re",
           "assortativity_re", "eigenvector_mae", "dk2_distance"]
#: The task's large block lifts the generators' 10M-edge guard (conf/task/dp_synthetic_graph).
UNCAPPED = {"dp_dk", "priv_skg", "pygmalion", "pygmalion_true_count_order"}


def _hwm_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(kind: str, name: str, dataset: str, fraction: float) -> dict:
    """Run in the child: one release (or one metric on the truth), timed."""
    import numpy as np

    from privpub.data import load_dataset
    from privpub.registry import get_mechanism, get_metric

    karate = load_dataset("karate")
    graph = load_dataset(dataset, fraction=fraction)
    base = _hwm_mb()
    if kind in ("generator", "release"):
        func = get_mechanism(name).func
        kw = {"max_edges": 10**9} if name in UNCAPPED else {}
        func(karate, epsilon=1.0, rng=np.random.default_rng(0), **kw)
        w, c = time.perf_counter(), time.process_time()
        out = func(graph, epsilon=1.0, rng=np.random.default_rng(1), **kw)
        value = getattr(out, "value", out)
        size = getattr(value, "n_edges", getattr(value, "size", float("nan")))
    else:
        info = get_metric(name)
        kw = {"rng": np.random.default_rng(1)} if info.takes_rng else {}
        info.func(karate, karate, **kw)
        w, c = time.perf_counter(), time.process_time()
        size = info.func(graph, graph, **kw)
    if kind == "release":  # each metric's statistic on the release of generator ``name``
        from privpub.types import Graph

        if not isinstance(value, Graph):
            return {"size": float(size), "metrics": {}, "peak_mb": _hwm_mb()}
        seconds = {}
        for metric in METRICS:
            info = get_metric(metric)
            kw = {"rng": np.random.default_rng(1)} if info.takes_rng else {}
            c = time.process_time()
            info.func(value, value, **kw)
            seconds[metric] = time.process_time() - c
        return {"size": float(size), "metrics": seconds, "peak_mb": _hwm_mb()}
    return {"wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c,
            "size": float(size), "graph_mb": base, "peak_mb": _hwm_mb(),
            "edges": graph.n_edges}


def fit(edges: list[float], cpu: list[float]) -> float:
    """Least-squares slope of log cpu on log edges (NaN below two points)."""
    pts = [(math.log(e), math.log(max(c, 1e-3))) for e, c in zip(edges, cpu, strict=True)]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx else float("nan")


def releases(args) -> int:
    """``--only releases``: per generator, the CPU seconds of each metric's statistic on one
    release (``metric(release, release)``; modularity_re runs Louvain twice there), at the
    first fraction."""
    names = args.names or GENERATORS
    f = args.fractions[0]
    print(f"{args.dataset} at fraction {f:g}: each metric on one release at epsilon 1 "
          "(CPU s; modularity_re: two Louvain runs)")
    print("| generator | edges released | " + " | ".join(METRICS) + " | peak MB |")
    print("|---|---|" + "---|" * len(METRICS) + "---|")
    for name in names:
        cmd = [sys.executable, __file__, "--child", "release", name, "--dataset", args.dataset,
               "--fractions", repr(f)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"| {name} | > {args.timeout:.0f} s wall |", flush=True)
            continue
        if proc.returncode:
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"| {name} | failed: {last[:80]} |", flush=True)
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        if not r["metrics"]:
            continue  # a dK-2 series: dk2_distance only, measured on the truth's series
        print(f"| {name} | {r['size']:,.0f} | "
              + " | ".join(f"{r['metrics'][m]:.1f}" for m in METRICS)
              + f" | {r['peak_mb']:.0f} |", flush=True)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="livejournal_like")
    parser.add_argument("--fractions", nargs="+", type=float,
                        default=[1 / 64, 1 / 16, 1 / 4])
    parser.add_argument("--only", choices=["generators", "metrics", "releases"], default=None)
    parser.add_argument("--names", nargs="+", default=None)
    parser.add_argument("--timeout", type=float, default=1200.0)
    parser.add_argument("--skip-after", type=float, default=600.0,
                        help="skip larger fractions once a run takes this many CPU seconds")
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, name = args.child
        print(json.dumps(child(kind, name, args.dataset, args.fractions[0])))
        return 0
    if args.only == "releases":
        return releases(args)
    jobs = [("generator", g) for g in GENERATORS] + [("metric", m) for m in METRICS]
    if args.only:
        jobs = [j for j in jobs if j[0] == args.only[:-1]]
    if args.names:
        jobs = [j for j in jobs if j[1] in args.names]
    fr = sorted(args.fractions)
    print(f"{args.dataset}, epsilon 1, one release (or the metric on the truth) per fresh "
          f"process; fractions {', '.join(f'{f:g}' for f in fr)}")
    print("| kind | name | " + " | ".join(f"f={f:g}: CPU s / peak MB (graph MB)" for f in fr)
          + " | exponent b | full size (extrapolated CPU s, peak MB) |")
    print("|---|---|" + "---|" * len(fr) + "---|---|")
    for kind, name in jobs:
        edges, cpu, peak, cells, stop = [], [], [], [], None
        for f in fr:
            if stop:
                cells.append(stop)
                continue
            cmd = [sys.executable, __file__, "--child", kind, name, "--dataset", args.dataset,
                   "--fractions", repr(f)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True,
                                      timeout=args.timeout)
            except subprocess.TimeoutExpired:
                cells.append(f"> {args.timeout:.0f} s wall")
                stop = "not run"
                continue
            if proc.returncode:
                last = (proc.stderr.strip().splitlines() or ["?"])[-1]
                cells.append(f"failed: {last[:80]}")
                stop = "not run"
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            edges.append(r["edges"])
            cpu.append(r["cpu_s"])
            cells.append(f"{r['cpu_s']:.1f} / {r['peak_mb']:.0f} ({r['graph_mb']:.0f})"
                         + (f", {r['size']:,.0f} edges" if kind == "generator" else ""))
            peak.append(r["peak_mb"])
            if r["cpu_s"] > args.skip_after:
                stop = "not run"
        b, bm = fit(edges, cpu), fit(edges, peak)
        scale = 1 / fr[len(cpu) - 1] if cpu else float("nan")
        full = cpu[-1] * scale ** b if cpu and not math.isnan(b) else float("nan")
        full_mb = peak[-1] * scale ** bm if peak and not math.isnan(bm) else float("nan")
        print(f"| {kind} | {name} | " + " | ".join(cells) + f" | {b:.2f} | {full:,.0f} s, "
              f"{full_mb:,.0f} MB (memory exponent {bm:.2f}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
