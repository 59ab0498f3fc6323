"""Speed of Pygmalion (sala2011) on AS and web-NotreDame, against the issue's targets.

Timed (one core; the first call of every step is a warm-up for numba and is not counted;
wall-clock seconds, median of ``--repeats`` calls):

1. **LDRC + generation**: ``ldrc`` (dK-2 extraction, DRC noise, isotonic regression) then
   ``synthesize`` (realizability repair and graph generation), at each epsilon, with the
   ``auto`` generator (networkx's ``joint_degree_graph`` up to 2M edges, the compiled stub
   matcher beyond) and with the stub matcher alone. Targets: AS < 30 s, web-NotreDame
   < 10 min. The generated graph's L1 distance to its target JDM is printed (0 = exact).
2. **dK-synthetic**: generation from the exact dK-2 series, networkx vs stub matching.
3. **Sampled average path length** on web-NotreDame: 1,000 BFS sources (the metric's
   default). Target < 60 s. The estimate and its standard error are printed next to a
   4,096-source estimate.
4. **Diffusion** (``--parts diffusion``): our compiled IC / WC / LT spread
   (``privpub.metrics.applications.spread``, numba) against cynetdiff's Cython models (the
   diffusion library the issue names; ``pip install cynetdiff``, not a dependency), both on
   the same CSR arrays, the 50 Degree Discount seeds, :data:`MC_RUNS` runs each; the means
   are printed with their standard errors so that agreement can be read off.

    python benchmarks/bench_sala2011.py [--data-dir DIR] [--repeats 1] \
        [--datasets as_caida web_notredame] [--epsilons 5 10 100] \
        [--parts pipeline dk_synthetic apl]

Measured (idle 2-core machine, commit 828c73c, median of 1 call after a warm-up; "AS" 32,955
edges, "WWW" web-NotreDame 1,090,108 edges). Before the compiled port of networkx's
generator and the multi-source BFS (same graphs, same distances), WWW took 18-22 s per
``auto`` generation, 40 s for dK-synthetic and 8.2 s for the sampled APL.

- LDRC + generation, ``auto``, eps 5 / 10 / 100: AS 0.08 / 0.02 / 0.04 s (target 30 s);
  WWW 1.52 / 1.46 / 1.47 s (target 600 s).
- LDRC + generation, ``stub_matching``: AS 0.36 / 0.05 / 0.08 s; WWW 8.1 / 9.2 / 6.1 s.
- dK-synthetic, networkx (the compiled port) / stub matching: AS 0.04 / 0.05 s; WWW 1.63 /
  5.98 s.
- Sampled APL on WWW, 1,000 sources: 1.89 s (target 60 s), 7.25 +- 0.06 (se); its BFS
  from 1,000 sources 1.66 s multi-source against 6.33 s one per source (3.8x, the same
  distances); 4,096 sources: 7.19 +- 0.03 (6.5 s).

Diffusion (``--parts diffusion --datasets as_caida facebook --repeats 3``, load about 2;
cynetdiff 0.1.18), seconds for 500 runs of the 50 Degree Discount seeds, ours / cynetdiff:
AS IC 0.087 / 0.094, WC 0.287 / 0.516, LT 0.453 / 2.048; facebook_combined IC 0.225 /
0.197, WC 0.282 / 0.288, LT 0.385 / 1.967. Ours is as fast on IC and WC and 4.5-5x faster
on LT, so the metrics keep it; the means agree (LT exactly: cynetdiff draws its thresholds
from the same PCG64 stream in the same order, which ``metrics/tests`` checks).

Every generated graph met its target JDM exactly (L1 0). The whole default run (both graphs,
diffusion included) took 3.0 min; before, 57 s on AS and 423 s on WWW without diffusion.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from privpub.algorithms.dk import generate_graph, joint_degree, synthesize
from privpub.data import load_dataset
from privpub.errors import DataError
from privpub.mechanisms.drc import ldrc
from privpub.metrics.applications import IC_PROBABILITY, MC_RUNS, degree_discount_seeds, spread
from privpub.metrics.graph_structure import (
    APL_SOURCES,
    bfs_statistics,
    distance_statistics,
    path_statistics,
)

TARGETS = {"as_caida": 30.0, "web_notredame": 600.0}
#: Steps ``--parts`` can select.
PARTS = ("pipeline", "dk_synthetic", "apl", "diffusion")


def timed(func, repeats: int):
    func()  # warm-up
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def bench_pipeline(graph, name: str, repeats: int, epsilons):
    target = TARGETS.get(name)
    for generator in ("auto", "stub_matching"):
        for eps in epsilons:
            rng = np.random.default_rng(0)

            def run(eps=eps, generator=generator, rng=rng):
                noisy = ldrc(graph, epsilon=eps, rng=rng)
                return synthesize(noisy, rng=rng, generator=generator)

            seconds, out = timed(run, repeats)
            ok = "" if target is None else ("  OK" if seconds < target else "  SLOW")
            print(
                f"{name:14s} LDRC+generation eps={eps:<5g} {generator:13s} {seconds:8.2f} s"
                f"  (target {target:.0f} s){ok}  -> {out.info['nodes']:.0f} nodes, "
                f"{out.info['edges']:.0f} edges, L1 to target {out.info['generation_l1']:.0f}",
                flush=True,
            )


def bench_dk_synthetic(graph, name: str, repeats: int):
    jd = joint_degree(graph)
    for generator in ("networkx", "stub_matching"):
        seconds, (g, report) = timed(
            lambda generator=generator: generate_graph(
                jd, rng=np.random.default_rng(0), generator=generator
            ),
            repeats,
        )
        print(
            f"{name:14s} dK-synthetic {generator:13s} {seconds:8.2f} s  "
            f"({g.n_edges} edges, L1 to target {report.l1_to_target:.0f})",
            flush=True,
        )


def bench_apl(graph, name: str, repeats: int):
    seconds, stats = timed(lambda: path_statistics(graph, rng=np.random.default_rng(1)), repeats)
    ok = "  OK" if seconds < 60 else "  SLOW"
    print(
        f"{name:14s} sampled APL (1000 sources) {seconds:8.2f} s (target 60 s){ok}: "
        f"{stats['apl']:.4f} +- {stats['apl_se']:.4f} (se), diameter >= {stats['diameter']:.0f}",
        flush=True,
    )
    sources = np.random.default_rng(1).integers(0, graph.n_nodes, APL_SOURCES)
    multi, many = timed(lambda: distance_statistics(graph, sources), repeats)
    single, one = timed(lambda: bfs_statistics(graph, sources), repeats)
    same = all(np.array_equal(a, b) for a, b in zip(many, one[:3], strict=True))
    print(
        f"{name:14s} BFS from {APL_SOURCES} sources: multi-source {multi:.2f} s, one per "
        f"source {single:.2f} s ({single / multi:.1f}x); same distances: {same}",
        flush=True,
    )
    start = time.perf_counter()
    ref = path_statistics(graph, rng=np.random.default_rng(2), n_sources=4096)
    print(
        f"{name:14s} reference APL (4096 sources, {time.perf_counter() - start:.1f} s): "
        f"{ref['apl']:.4f} +- {ref['apl_se']:.4f}; difference {stats['apl'] - ref['apl']:+.4f}",
        flush=True,
    )


def _cynetdiff_spread(graph, seeds, model: str, runs: int) -> tuple[float, float]:
    """(mean, standard error) of cynetdiff's spread, on our graph's CSR arrays."""
    import array

    from cynetdiff.models import IndependentCascadeModel, LinearThresholdModel

    adj = graph.adjacency
    starts = array.array("I", adj.indptr[:-1].astype(np.uint32).tolist())
    edges = array.array("I", adj.indices.astype(np.uint32).tolist())
    in_weight = (1.0 / np.maximum(np.diff(adj.indptr), 1))[adj.indices]  # 1 / deg(v)
    if model == "lt":
        sim = LinearThresholdModel(starts, edges, influence=array.array("f", in_weight),
                                   rng=0)
    else:
        probs = in_weight if model == "wc" else np.full(adj.indices.size, IC_PROBABILITY)
        sim = IndependentCascadeModel(starts, edges, activation_probs=array.array("f", probs),
                                      rng=0)
    counts = np.empty(runs)
    for r in range(runs):
        sim.reset_model()
        sim.set_seeds([int(s) for s in seeds])
        sim.advance_until_completion()
        counts[r] = sim.get_num_activated_nodes()
    return counts.mean(), counts.std(ddof=1) / np.sqrt(runs)


def bench_diffusion(graph, name: str, repeats: int):
    try:
        import cynetdiff  # noqa: F401
    except ImportError:
        print(f"{name:14s} diffusion: skipped (pip install cynetdiff to compare)")
        return
    seeds = degree_discount_seeds(graph, 50)
    for model in ("ic", "wc", "lt"):
        ours_s, ours = timed(lambda model=model: spread(
            graph, seeds, model=model, rng=np.random.default_rng(0)), repeats)
        cy_s, (cy, cy_se) = timed(
            lambda model=model: _cynetdiff_spread(graph, seeds, model, MC_RUNS), repeats)
        print(
            f"{name:14s} {model.upper()} spread, 50 seeds, {MC_RUNS} runs: ours (numba) "
            f"{ours_s:.3f} s -> {ours:.1f}; cynetdiff {cy_s:.3f} s -> {cy:.1f} +- {cy_se:.1f}"
            f" (se); cynetdiff / ours time {cy_s / ours_s:.2f}",
            flush=True,
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("PRIVPUB_DATA_DIR"))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--datasets", nargs="*", default=["as_caida", "web_notredame"])
    parser.add_argument("--epsilons", nargs="*", type=float, default=[5.0, 10.0, 100.0])
    parser.add_argument("--parts", nargs="*", choices=PARTS, default=list(PARTS),
                        help="steps to time (apl runs on web_notredame only)")
    args = parser.parse_args(argv)
    for name in args.datasets:
        try:
            graph = load_dataset(name, data_dir=args.data_dir)
        except DataError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        print(f"{name}: {graph.n_nodes} nodes, {graph.n_edges} edges", flush=True)
        if "pipeline" in args.parts:
            bench_pipeline(graph, name, args.repeats, args.epsilons)
        if "dk_synthetic" in args.parts:
            bench_dk_synthetic(graph, name, args.repeats)
        if "apl" in args.parts and name == "web_notredame":
            bench_apl(graph, name, args.repeats)
        if "diffusion" in args.parts:
            bench_diffusion(graph, name, args.repeats)


if __name__ == "__main__":
    main()
