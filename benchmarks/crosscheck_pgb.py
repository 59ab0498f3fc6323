"""Side by side with the authors' code: PGB's generators (github dooohow/PGB) against privpub's.

Their code is not part of privpub. Pass the path of a checkout of PGB (``--pgb``) and an
interpreter that runs it (``--their-python``: PGB's code needs ``pandas<2``, ``numpy<2``,
``networkx``, ``python-louvain`` and ``scikit-learn``). Their generators run in a subprocess,
on PGB's own copy of each graph (``data/<name>.txt``, loaded with PGB's ``utils.get_mat``),
once per (epsilon, repetition) with a seeded ``np.random`` / ``random``; each release is
saved as an edge list. privpub's fifteen query metrics then score both sides against the
same original, so the comparison measures the generators and not two implementations of the
queries (``metrics/pgb_queries.py`` is checked against PGB's formulas in its own tests).

For each generator, graph, epsilon and query it prints both means with 95% confidence
intervals and flags a difference beyond Monte Carlo error (Welch's t, |t| > 3).

    python benchmarks/crosscheck_pgb.py --pgb PATH/TO/PGB --their-python PATH/TO/python \\
        --datasets facebook ca_hepph --epsilons 0.5 1 2 --repetitions 10 --out crosscheck.md

(PGB has no PrivHRG code; its PrivGraph is a copy of the official code's main loop.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

#: privpub's generator name -> (PGB's file, how its generator is called on ``mat0``).
THEIR_GENERATORS = {
    "tmf_as_published": ("Tmf.py", "utils_top_m_filter"),
    "dp_dk": ("DP-1K.py", "generate_private_graph"),
    "priv_skg": ("SKG.py", "DP_SKG"),  # 1000 optimiser restarts: about an hour a release
    "dgg": ("DGG.py", "create_bter_graph_from_adjacency_matrix"),
    "privgraph": ("PrivGraph.py", "priv_graph"),
}

#: privpub's dataset name -> PGB's file under its data/ folder.
THEIR_DATASETS = {
    "facebook": "Facebook.txt",
    "ca_hepph": "CA-HepPh.txt",
    "wiki_vote": "Wiki-Vote.txt",
    "road_minnesota": "road-minnesota.txt",
    "p2p_gnutella25": "p2p-Gnutella25.txt",
    "econ_poli_large": "econ-poli-large-no-weights.txt",
    "pgb_er": "er_graph.txt",
    "pgb_ba": "ba_graph.txt",
}


# --------------------------------------------------------------------------- their side
def their_side(job: dict) -> None:
    """Run under the authors' interpreter: release with their code, save edge lists."""
    import importlib.util
    import random

    import networkx as nx

    os.chdir(job["pgb"])
    sys.path.insert(0, job["pgb"])
    from utils import get_mat  # noqa: PLC0415  (their module)

    file, func = THEIR_GENERATORS[job["generator"]]
    spec = importlib.util.spec_from_file_location("their_" + job["generator"],
                                                  os.path.join(job["pgb"], file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    mat0, _ = get_mat(os.path.join(job["pgb"], "data", THEIR_DATASETS[job["dataset"]]))
    mat0 = (mat0 > 0).astype(np.uint8)
    np.fill_diagonal(mat0, 0)
    out = Path(job["out"])
    out.mkdir(parents=True, exist_ok=True)
    u, v = np.nonzero(np.triu(mat0, 1))
    np.savez_compressed(out / "original.npz", edges=np.column_stack([u, v]), n=len(mat0))
    graph0 = nx.from_numpy_array(mat0) if job["generator"] == "priv_skg" else None
    extra = module.cal_local_sensitivity(graph0) if graph0 is not None else None
    for i, eps in enumerate(job["epsilons"]):
        for rep in range(job["repetitions"]):
            target = out / f"eps{eps}_rep{rep}.npz"
            if target.exists():
                continue
            np.random.seed(10_000 * i + rep)  # noqa: NPY002  (their code draws from it)
            random.seed(10_000 * i + rep)
            if func == "utils_top_m_filter":
                release = module.top_m_filter(mat0, eps)
            elif graph0 is not None:
                release = nx.to_numpy_array(getattr(module, func)(graph0, eps, extra))
            else:
                release = getattr(module, func)(mat0, eps)
            if isinstance(release, nx.Graph):
                release = nx.to_numpy_array(release)
            release = np.asarray(release)
            ru, rv = np.nonzero(np.triu(release + release.T, 1))
            np.savez_compressed(target, edges=np.column_stack([ru, rv]), n=len(release))
            print(f"{job['generator']} {job['dataset']} eps={eps} rep={rep}: "
                  f"{len(ru)} edges", flush=True)


# --------------------------------------------------------------------------- our side
def _graph(path: Path, name: str):
    from privpub.types import Graph

    z = np.load(path)
    return Graph.from_edges(z["edges"], int(z["n"]), name=name)


def _scores(truth, release, queries, seed: int) -> dict[str, float]:
    from privpub.errors import PrivpubError
    from privpub.registry import get_metric

    out = {}
    for q in queries:  # metrics of one stream (a Louvain partition) draw the same numbers
        info = get_metric(q)
        stream = zlib.crc32((info.stream or q).encode())
        kw = {"rng": np.random.default_rng([seed, stream])} if info.takes_rng else {}
        try:
            out[q] = float(info.func(truth, release, **kw))
        except PrivpubError:  # e.g. NMI of partitions of different node sets (PGB's DP-1K)
            out[q] = float("nan")
    return out


def _ci(values: np.ndarray) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    half = 1.96 * values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else float("nan")
    return float(values.mean()), float(half)


def _welch(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if a.size < 2 or b.size < 2:
        return float("nan")
    se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    if se == 0:
        return 0.0 if a.mean() == b.mean() else float("inf")
    return float((a.mean() - b.mean()) / se)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pgb", required=False, help="a checkout of github dooohow/PGB")
    parser.add_argument("--their-python", default=sys.executable,
                        help="an interpreter that runs PGB's code (pandas<2, numpy<2)")
    parser.add_argument("--generators", nargs="+",
                        default=["dp_dk", "tmf_as_published", "dgg", "privgraph"])
    parser.add_argument("--datasets", nargs="+", default=["facebook", "ca_hepph"])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--work", default=None, help="where releases are kept (resumes)")
    parser.add_argument("--out", default=None, help="write the markdown table here too")
    parser.add_argument("--their-side", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.their_side:
        their_side(json.loads(args.their_side))
        return 0
    if not args.pgb or not (Path(args.pgb) / "utils.py").exists():
        print("crosscheck_pgb: --pgb must name a checkout of github dooohow/PGB "
              "(with utils.py and data/)", file=sys.stderr)
        return 2
    unknown = sorted(set(args.generators) - set(THEIR_GENERATORS))
    if unknown:
        print(f"crosscheck_pgb: PGB has no code for {unknown}; "
              f"known: {sorted(THEIR_GENERATORS)}", file=sys.stderr)
        return 2

    from privpub.data import load_dataset
    from privpub.metrics.pgb_queries import PGB_QUERIES
    from privpub.registry import get_mechanism

    work = Path(args.work or tempfile.mkdtemp(prefix="crosscheck_pgb_"))
    lines = ["| generator | graph | eps | query | PGB's code (mean ± 95% CI) | privpub "
             "| Welch t | beyond MC error |", "|---|---|---|---|---|---|---|---|"]
    for dataset in args.datasets:
        ours_truth = load_dataset(dataset, loop_nodes=True)  # every id a node, as get_mat
        for generator in args.generators:
            where = work / generator / dataset
            job = {"pgb": str(Path(args.pgb).resolve()), "generator": generator,
                   "dataset": dataset, "epsilons": args.epsilons,
                   "repetitions": args.repetitions, "out": str(where.resolve())}
            subprocess.run([args.their_python, os.path.abspath(__file__),
                            "--their-side", json.dumps(job)], check=True)
            their_truth = _graph(where / "original.npz", dataset)
            if (their_truth.n_nodes, their_truth.n_edges) != (ours_truth.n_nodes,
                                                               ours_truth.n_edges):
                print(f"note: PGB's {dataset} has {their_truth.n_nodes} nodes / "
                      f"{their_truth.n_edges} edges, privpub's {ours_truth.n_nodes} / "
                      f"{ours_truth.n_edges}", flush=True)
            mechanism = get_mechanism(generator)
            for i, eps in enumerate(args.epsilons):
                theirs, ours = [], []
                for rep in range(args.repetitions):
                    release = _graph(where / f"eps{eps}_rep{rep}.npz", "theirs")
                    theirs.append(_scores(their_truth, release, PGB_QUERIES, rep))
                    rng = np.random.default_rng([i, rep, 31])
                    mine = mechanism.func(ours_truth, epsilon=eps, rng=rng).value
                    ours.append(_scores(ours_truth, mine, PGB_QUERIES, rep))
                for q in PGB_QUERIES:
                    a = np.array([r[q] for r in theirs])
                    b = np.array([r[q] for r in ours])
                    (ma, ha), (mb, hb), t = _ci(a), _ci(b), _welch(a, b)
                    flag = "yes" if abs(t) > 3 else ""
                    lines.append(f"| {generator} | {dataset} | {eps:g} | {q} | {ma:.4g} ± "
                                 f"{ha:.2g} | {mb:.4g} ± {hb:.2g} | {t:.1f} | {flag} |")
                print("\n".join(lines[-len(PGB_QUERIES):]), flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
