"""One release of every node_dp_degree mechanism on a LiveJournal-sized graph.

Each mechanism ranked by the ``node_dp_degree`` task runs once (``epsilon = 1``, its default
parameters; ``truncation`` at ``--truncation-theta``) in a fresh subprocess that loads the
graph's CSR, so every row is a cold process: wall and CPU seconds of the release alone, and
the peak RSS of the whole process (graph included; the bound asked of a release on the
``large`` scale is 2 min and 16 GB). A last subprocess times day2016's edge-addition
projection (Algorithm 1) at ``--theta``: the kernel alone and end to end (edge order
included), lexicographic and ``order="random"``, in edges per second against the
memory-bound limit of about 50M edges/s (two random reads of the degree array per edge).

The graph: ``--graph-dir`` holding ``indptr.npy`` and ``indices.npy`` (a symmetric CSR with
sorted indices and an empty diagonal, as ``Graph.adjacency``), or a Chung-Lu graph drawn
with ``--n``, ``--exponent``, ``--average-degree`` and ``--seed`` (saved to ``--save-dir``
if given, else to a temporary directory). LiveJournal has about 4.0M nodes and 34.7M
edges and maximum degree about 15k: ``--n 4000000 --exponent 2.3 --average-degree 17.3
--max-degree 15000`` (Chung-Lu weights capped at 15k; without the cap the largest degree is
about 370k) takes about 30 s and 3 GB to draw.

A mechanism that exceeds ``--timeout`` is timed again on graphs drawn the same way with the
node counts ``--scaling`` (e.g. ``--scaling 50000 100000 200000``), and its CPU time is
extrapolated to the graph's edge count by the power law through the two largest.

    python benchmarks/bench_node_dp_large.py --graph-dir DIR [--timeout 600]
    python benchmarks/bench_node_dp_large.py --n 4000000 --save-dir DIR
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: day2016's Algorithm 1 is two random reads of a degree array per edge: about this many
#: edges per second on one core when the array does not fit in cache.
MEMORY_BOUND_EDGES_PER_S = 50e6

#: The bound asked of one release at the LiveJournal shape.
BOUND_SECONDS, BOUND_MB = 120.0, 16 * 1024


def load_graph(graph_dir: str):
    import numpy as np
    import scipy.sparse as sp

    from privpub.types import Graph

    indptr = np.load(Path(graph_dir) / "indptr.npy")
    indices = np.load(Path(graph_dir) / "indices.npy")
    n = indptr.size - 1
    adj = sp.csr_array((np.ones(indices.size, dtype=bool), indices, indptr), shape=(n, n))
    adj.has_sorted_indices = True
    return Graph(adj, name=Path(graph_dir).name)


def child_generate(args) -> dict:
    import numpy as np

    from privpub.data import load_dataset
    from privpub.data.synthetic import expected_degree_edges
    from privpub.types import Graph

    t0 = time.perf_counter()
    if args.max_degree is None:
        g = load_dataset("chung_lu", rng=args.seed, n=args.n, exponent=args.exponent,
                         average_degree=args.average_degree)
    else:  # chung_lu's weights capped at max_degree, rescaled to keep the average degree
        w = np.arange(1, args.n + 1, dtype=float) ** (-1.0 / (args.exponent - 1.0))
        for _ in range(50):
            w = np.minimum(w * args.average_degree * args.n / w.sum(), args.max_degree)
        edges = expected_degree_edges(w, rng=np.random.default_rng(args.seed))
        g = Graph.from_edges(edges, args.n)
    out = Path(args.graph_dir)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "indptr.npy", g.adjacency.indptr)
    np.save(out / "indices.npy", g.adjacency.indices)
    return {"seconds": time.perf_counter() - t0}


def child_mechanism(args) -> dict:
    import numpy as np

    import privpub.baselines  # noqa: F401  (registers the baselines)
    import privpub.mechanisms  # noqa: F401
    from privpub.registry import get_mechanism

    t0 = time.perf_counter()
    graph = load_graph(args.graph_dir)
    load = time.perf_counter() - t0
    params = {"theta": args.truncation_theta} if args.child == "truncation" else {}
    func = get_mechanism(args.child).func
    w0, c0 = time.perf_counter(), time.process_time()
    release = func(graph, epsilon=1.0, rng=np.random.default_rng(args.seed), **params)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    info = {k: v for k, v in (release.info or {}).items() if isinstance(v, (int, float, str))}
    return {"load": load, "wall": wall, "cpu": cpu, "info": info}


def child_projection(args) -> dict:
    import numpy as np

    from privpub.mechanisms import degree_projection as dp
    from privpub.types import Graph

    graph = load_graph(args.graph_dir)
    tiny = Graph.from_edges(np.array([[0, 1], [1, 2]]))
    for order in dp.ORDERS:  # load the compiled kernels before timing
        dp.projected_degrees(tiny, 1, order=order, rng=np.random.default_rng(0))
    m, theta = graph.n_edges, args.theta
    out = {"edges": m, "nodes": graph.n_nodes, "theta": theta}
    def timed(func, *a, **kw):
        w0, c0 = time.perf_counter(), time.process_time()
        value = func(*a, **kw)
        return value, (time.perf_counter() - w0, time.process_time() - c0)

    for order in dp.ORDERS:
        # one projection as the mechanisms run it
        _, end_to_end = timed(dp.projected_degrees, graph, theta, order=order,
                              rng=np.random.default_rng(1))
        # the stored order (as a profile keeps it) and the kernel alone on it
        source, build = timed(dp._EdgeSource.of, graph, order, np.random.default_rng(1))
        _, kernel = timed(source.project, theta)
        out[order] = {"end_to_end": end_to_end, "order": build, "kernel": kernel}
    return out


def run_child(argv: list[str], timeout: float) -> tuple[dict | None, float, str]:
    """Run this script as a child; ``(its JSON answer or None, peak RSS in MB, error)``."""
    cmd = [sys.executable, __file__, *argv]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        deadline = time.monotonic() + timeout
        status = rusage = None
        while True:
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                _, status, rusage = os.wait4(proc.pid, 0)
                proc.returncode = -9
                return None, rusage.ru_maxrss / 1024, f"timeout after {timeout:.0f} s"
            time.sleep(0.2)
        proc.returncode = os.waitstatus_to_exitcode(status)
        peak = rusage.ru_maxrss / 1024
        out.seek(0)
        err.seek(0)
        lines = out.read().decode().strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = err.read().decode().strip().splitlines()
            return None, peak, tail[-1] if tail else f"exit code {proc.returncode}"
        return json.loads(lines[-1]), peak, ""


def task_mechanisms() -> list[str]:
    import privpub.baselines  # noqa: F401
    import privpub.mechanisms  # noqa: F401
    from privpub.experiments.leaderboard import load_task, qualifying

    return qualifying(load_task("node_dp_degree"))[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph-dir", help="directory with indptr.npy and indices.npy")
    parser.add_argument("--n", type=int, default=4_000_000)
    parser.add_argument("--exponent", type=float, default=2.3)
    parser.add_argument("--average-degree", type=float, default=17.3)
    parser.add_argument("--max-degree", type=float, default=None,
                        help="cap on the Chung-Lu expected degrees (LiveJournal: 15000)")
    parser.add_argument("--scaling", type=int, nargs="*", default=[],
                        help="node counts to extrapolate a timed-out mechanism from")
    parser.add_argument("--seed", type=int, default=0, help="graph and release seed")
    parser.add_argument("--save-dir", help="where a drawn Chung-Lu graph is kept")
    parser.add_argument("--mechanisms", nargs="*", help="default: every one the task ranks")
    parser.add_argument("--projection-only", action="store_true",
                        help="time the projection, no mechanism")
    parser.add_argument("--truncation-theta", type=int, default=64)
    parser.add_argument("--theta", type=int, default=200, help="of the projection timing")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per mechanism")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        job = {"generate": child_generate, "projection": child_projection}
        print(json.dumps(job.get(args.child, child_mechanism)(args)))
        return

    keep = tempfile.TemporaryDirectory() if not (args.graph_dir or args.save_dir) else None
    common = ["--seed", str(args.seed)]
    if not args.graph_dir:
        args.graph_dir = args.save_dir or keep.name
        print(f"drawing chung_lu(n={args.n}, exponent={args.exponent}, "
              f"average_degree={args.average_degree}, rng={args.seed}) into {args.graph_dir}")
        done, peak = draw(args, args.n, args.graph_dir)
        print(f"  {done['seconds']:.0f} s, peak {peak:.0f} MB")
    common += ["--graph-dir", args.graph_dir]

    proj, peak, error = run_child(["--child", "projection", "--theta", str(args.theta),
                                   *common], timeout=args.timeout)
    if proj is None:
        sys.exit(f"projection timing failed: {error}")
    m = proj["edges"]
    print(f"\ngraph {args.graph_dir}: {proj['nodes']:,} nodes, {m:,} edges\n")
    print(f"Edge-addition projection (day2016 Algorithm 1), theta = {proj['theta']}; "
          f"limit ~{MEMORY_BOUND_EDGES_PER_S / 1e6:.0f}M edges/s\n")
    print("Wall / CPU seconds; M edges/s from the wall (from the CPU) time. 'stored order': "
          "building the order a profile keeps; 'kernel': Algorithm 1 on it; 'end to end': "
          "projected_degrees, the order included.\n")
    print("| order | stored order s | kernel s | kernel M edges/s | end to end s "
          "| end to end M edges/s |")
    print("|---|---:|---:|---:|---:|---:|")

    def rate(seconds):
        return f"{m / seconds[0] / 1e6:.1f} ({m / max(seconds[1], 1e-9) / 1e6:.1f})"

    for order in ("lexicographic", "random"):
        r = proj[order]
        print(f"| {order} | {r['order'][0]:.2f} / {r['order'][1]:.2f} | {r['kernel'][0]:.2f} / "
              f"{r['kernel'][1]:.2f} | {rate(r['kernel'])} | {r['end_to_end'][0]:.2f} / "
              f"{r['end_to_end'][1]:.2f} | {rate(r['end_to_end'])} |")

    if args.projection_only:
        return
    names = args.mechanisms or task_mechanisms()
    print(f"\nOne release each (epsilon = 1, defaults; truncation theta = "
          f"{args.truncation_theta}), fresh process; bound {BOUND_SECONDS:.0f} s and "
          f"{BOUND_MB / 1024:.0f} GB\n")
    print("| mechanism | load s | wall s | CPU s | peak MB | within bound | info |")
    print("|---|---:|---:|---:|---:|---|---|")
    timed_out = []
    for name in names:
        r, peak, error = run_child(["--child", name, "--truncation-theta",
                                    str(args.truncation_theta), *common],
                                   timeout=args.timeout)
        if r is None:
            print(f"| {name} | | | | {peak:.0f} | no: {error[:200]} | |", flush=True)
            if error.startswith("timeout"):
                timed_out.append(name)
            continue
        ok = r["wall"] <= BOUND_SECONDS and peak <= BOUND_MB
        info = ", ".join(f"{k}={v}" for k, v in r["info"].items())
        print(f"| {name} | {r['load']:.1f} | {r['wall']:.1f} | {r['cpu']:.1f} | {peak:.0f} | "
              f"{'yes' if ok else 'no'} | {info} |", flush=True)
    if timed_out and args.scaling:
        extrapolate(args, timed_out, m)
    if keep is not None:
        keep.cleanup()


def draw(args, n: int, graph_dir: str) -> tuple[dict, float]:
    """Draw the Chung-Lu graph of ``args`` with ``n`` nodes into ``graph_dir`` (a child)."""
    argv = ["--child", "generate", "--graph-dir", graph_dir, "--n", str(n), "--exponent",
            str(args.exponent), "--average-degree", str(args.average_degree), "--seed",
            str(args.seed)]
    if args.max_degree is not None:
        argv += ["--max-degree", str(args.max_degree)]
    done, peak, error = run_child(argv, timeout=3600)
    if done is None:
        sys.exit(f"drawing the graph failed: {error}")
    return done, peak


def extrapolate(args, names: list[str], m_target: int) -> None:
    """Time ``names`` on smaller graphs (``--scaling``) and extrapolate to ``m_target``
    edges by the power law through the two largest."""
    import math

    import numpy as np

    print(f"\nTimed out: measured on smaller graphs, CPU extrapolated to {m_target:,} edges\n")
    print("| mechanism | nodes | edges | wall s | CPU s | peak MB |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        sizes = []
        for n in sorted(args.scaling):
            graph_dir = str(Path(tmp) / f"n{n}")
            draw(args, n, graph_dir)
            m = int(np.load(Path(graph_dir) / "indices.npy", mmap_mode="r").size // 2)
            sizes.append((n, m, graph_dir))
        for name in names:
            points = []
            for n, m, graph_dir in sizes:
                r, peak, error = run_child(["--child", name, "--graph-dir", graph_dir,
                                            "--seed", str(args.seed)], timeout=args.timeout)
                if r is None:
                    print(f"| {name} | {n:,} | {m:,} | {error} | | {peak:.0f} |")
                    break
                points.append((m, r["cpu"]))
                print(f"| {name} | {n:,} | {m:,} | {r['wall']:.1f} | {r['cpu']:.1f} | "
                      f"{peak:.0f} |", flush=True)
            if len(points) >= 2:
                (m1, c1), (m2, c2) = points[-2:]
                slope = math.log(c2 / c1) / math.log(m2 / m1)
                print(f"| {name} | extrapolated | {m_target:,} | | "
                      f"~{c2 * (m_target / m2) ** slope:.0f} (CPU ~ edges^{slope:.2f}) | |")


if __name__ == "__main__":
    main()
