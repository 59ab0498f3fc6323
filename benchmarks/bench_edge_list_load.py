"""Loading a large SNAP-format edge list: the streamed loader against the in-memory one.

Writes a synthetic edge list (a Chung-Lu graph, by default n = 4,000,000 nodes of average
degree 17.3: about 35M edges, each written once as ``u<TAB>v`` in a random direction and
line order, under SNAP's ``#`` header) as plain text and as gzip into ``--dir`` (never the
repository), then loads each file in a fresh subprocess per loader and reports the load
time, edges per second and the subprocess's peak resident memory (``VmHWM``):

- ``stream``: :func:`privpub.data.edge_stream.graph_from_edge_file` (numba parser in
  blocks, int32 ids, counting-sort CSR), the path of every registered edge list;
- ``in_memory``: ``read_edge_list`` (one pandas ``read_csv``, int64) then
  :meth:`Graph.from_edges` (scipy COO -> CSR), the path before;
- ``parse_numba`` / ``parse_pandas``: parsing only (the blocks of pairs, no graph), the
  numba parser against ``pandas.read_csv(chunksize=...)`` with the C engine.

Each child first loads a tiny file, so numba's compilation (cached on disk) is not timed.
The two loaders' adjacencies are compared (sha256 of indptr and indices as int64).

    python benchmarks/bench_edge_list_load.py --dir /tmp/privpub-edges
    python benchmarks/bench_edge_list_load.py --dir /tmp/privpub-edges --n 400000 --only stream
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

LOADERS = ("stream", "in_memory", "parse_numba", "parse_pandas")


def write_edge_list(path: Path, *, n: int, exponent: float, average_degree: float,
                    seed: int = 0) -> int:
    """Write the SNAP-format file (plain text); returns the number of edge lines."""
    import pandas as pd

    from privpub.data import load_dataset

    g = load_dataset("chung_lu", rng=seed, n=n, exponent=exponent,
                     average_degree=average_degree)
    edges = g.edges()
    rng = np.random.default_rng(seed + 1)
    flip = rng.random(len(edges)) < 0.5
    edges[flip] = edges[flip][:, ::-1]
    edges = edges[rng.permutation(len(edges))]
    with open(path, "w") as f:
        f.write(f"# Undirected graph: Chung-Lu n={n} exponent={exponent} "
                f"average_degree={average_degree} seed={seed}\n"
                f"# Nodes: {g.n_nodes} Edges: {len(edges)}\n# FromNodeId\tToNodeId\n")
        pd.DataFrame(edges).to_csv(f, sep="\t", header=False, index=False,
                                   chunksize=1 << 21)
    return len(edges)


def _digest(graph) -> str:
    h = hashlib.sha256()
    for a in (graph.adjacency.indptr, graph.adjacency.indices):
        h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


def _peak_rss() -> int:
    """This process's peak resident memory in bytes: VmHWM (ru_maxrss survives execve, so a
    child of a large parent would report the parent's peak)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(loader: str, path: str, warm: str) -> None:
    """One measurement in this (fresh) process; prints a JSON line."""
    from privpub.data.edge_stream import graph_from_edge_file, read_edge_chunks
    from privpub.data.graphs import _load_edge_list_in_memory

    def run(p):
        if loader == "stream":
            return graph_from_edge_file(p)
        if loader == "in_memory":
            return _load_edge_list_in_memory([p])
        if loader == "parse_numba":
            return read_edge_chunks(p).n_pairs
        import pandas as pd

        from privpub.data.readers import is_gzip

        count = 0
        with pd.read_csv(p, sep=r"\s+", header=None, comment="#", dtype=np.int64,
                         engine="c", compression="gzip" if is_gzip(p) else None,
                         chunksize=1 << 22) as reader:
            for df in reader:
                count += len(df.to_numpy(dtype=np.int32))
        return count

    run(warm)
    t0 = time.perf_counter()
    out = run(path)
    seconds = time.perf_counter() - t0
    peak = _peak_rss()
    row = {"loader": loader, "file": Path(path).name, "seconds": seconds,
           "peak_rss_gib": peak / 2**30}
    if isinstance(out, int):
        row["lines"] = out
    else:
        row.update(nodes=out.n_nodes, edges=out.n_edges, digest=_digest(out))
    print(json.dumps(row))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, required=True, help="where the files are written")
    parser.add_argument("--n", type=int, default=4_000_000)
    parser.add_argument("--exponent", type=float, default=2.3)
    parser.add_argument("--average-degree", type=float, default=17.3)
    parser.add_argument("--only", nargs="*", choices=LOADERS, default=list(LOADERS))
    parser.add_argument("--files", nargs="*", choices=("plain", "gzip"),
                        default=["plain", "gzip"])
    parser.add_argument("--child", nargs=3, metavar=("LOADER", "PATH", "WARM"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return
    args.dir.mkdir(parents=True, exist_ok=True)
    stem = f"chung_lu_n{args.n}_a{args.exponent}_d{args.average_degree}"
    plain, packed = args.dir / f"{stem}.txt", args.dir / f"{stem}.txt.gz"
    if not plain.exists():
        t0 = time.perf_counter()
        lines = write_edge_list(plain, n=args.n, exponent=args.exponent,
                                average_degree=args.average_degree)
        print(f"wrote {plain} ({lines:,} edges, {plain.stat().st_size / 2**20:,.0f} MiB) "
              f"in {time.perf_counter() - t0:.0f} s", flush=True)
    if "gzip" in args.files and not packed.exists():
        with open(plain, "rb") as src, gzip.open(packed, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 24)
        print(f"wrote {packed} ({packed.stat().st_size / 2**20:,.0f} MiB)", flush=True)
    warm = args.dir / "warm.txt"
    warm.write_text("# warm-up\n0\t1\n1\t2\n")
    files = [p for p, kind in ((plain, "plain"), (packed, "gzip")) if kind in args.files]
    from privpub.data.edge_stream import estimate_load_memory

    for path in files:
        need, basis = estimate_load_memory(path)
        print(f"{path.name}: estimated peak {need / 2**30:.2f} GiB ({basis})", flush=True)
    print(f"{'loader':<12} {'file':<40} {'seconds':>8} {'Medges/s':>9} {'peak GiB':>9}  result")
    for path in files:
        for loader in args.only:
            done = subprocess.run(
                [sys.executable, __file__, "--dir", str(args.dir), "--child", loader,
                 str(path), str(warm)], capture_output=True, text=True, check=False)
            if done.returncode:
                print(f"{loader:<12} {path.name:<40} failed: {done.stderr.strip()[-300:]}")
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            lines = row.get("lines") or row["edges"]
            result = (f"n={row['nodes']:,} m={row['edges']:,} {row['digest']}"
                      if "digest" in row else f"{row['lines']:,} pairs")
            print(f"{loader:<12} {path.name:<40} {row['seconds']:8.1f} "
                  f"{lines / row['seconds'] / 1e6:9.2f} {row['peak_rss_gib']:9.2f}  {result}",
                  flush=True)


if __name__ == "__main__":
    main()
