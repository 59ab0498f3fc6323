"""Speed of epasto2022's anonymisers on every matrix, and of the min-hash step.

For each dataset: smooth k-anonymity (``mechanisms/smooth_k_anonymity.py`` over
``privpub/algorithms/clustering.py``; non-smooth uses the same clustering and costs the same), the
LSH
heuristic where it applies, Mondrian (``baselines/mondrian_binary.py``) and the verifier,
with the Jaccard / suppressed / created fractions of each release. Times are wall-clock
seconds of one run after a warm-up on a toy matrix (numba's compilation is cached on disk
and not counted), with the disk cache bypassed; then one run with the facility costs cached,
as every repetition after an experiment cell's first pays. Targets: Adult < 30 s,
the 1024 x 1024 SBM < 5 s, DBLP-scale (317k rows) < 10 min with the LSH heuristic on 2
cores. Peak resident memory of the process is printed at the end (coarse: ru_maxrss).

``--memory`` checks the last target, memory linear in the number of non-zeros: smooth
k-anonymity on random row subsets of the chosen dataset (1/8, 1/4, 1/2, all rows), each in
a fresh process that loads only its subset; the peak resident memory *added by the run*
(``VmHWM`` after resetting it through ``/proc/self/clear_refs``, minus ``VmRSS`` before the
run) is printed per non-zero. Linear memory shows as a roughly constant bytes-per-entry.

``--minhash`` compares the vectorised min-hash of :func:`minhash_signatures` (one random
permutation of the columns per hash, ``np.minimum.reduceat`` over CSR rows) with
datasketch's ``MinHash`` (``num_perm`` hashes per row, one Python object per row, fed the
row's column ids as bytes) on the rows of the chosen dataset. datasketch is not a
dependency: install it (``pip install datasketch``) to include it.

    PRIVPUB_DATA_DIR=/path/to/data python benchmarks/bench_epasto2022.py
    python benchmarks/bench_epasto2022.py --datasets sbm_epasto adult_binary --k 8
    python benchmarks/bench_epasto2022.py --minhash --minhash-dataset dblp_binary
    python benchmarks/bench_epasto2022.py --memory dblp_binary
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from privpub.algorithms.clustering import minhash_signatures
from privpub.baselines.mondrian_binary import mondrian_binary
from privpub.cache import cold
from privpub.data import load_dataset
from privpub.mechanisms.smooth_k_anonymity import smooth_k_anonymity
from privpub.metrics.sets import created_fraction, jaccard, suppressed_fraction
from privpub.verify import verify_release

DATASETS = ["sbm_epasto", "adult_binary", "playstore_binary", "dblp_binary",
            "notredame_binary", "user_lists_standin"]
#: LSH runs: (chunk_size, n_jobs) per dataset (user_lists' stand-in as in the experiments)
LSH = {"dblp_binary": (100_000, 2), "notredame_binary": (100_000, 2),
       "user_lists_standin": (20_000, 2)}


def _load(name):
    kw = {"rng": np.random.default_rng(0)} if name.startswith("sbm") else {}
    return load_dataset(name, **kw)


def _scores(m, out):
    return (f"J={jaccard(m, out):.3f} S={suppressed_fraction(m, out):.3f} "
            f"C={created_fraction(m, out):.3f}")


def bench_dataset(name: str, k: int, n_orders: int) -> None:
    m = _load(name)
    print(f"{name}: {m.shape[0]} x {m.shape[1]}, {m.nnz} entries", flush=True)
    runs = [("smooth", dict(chunk_size=None, n_jobs=1))]
    if name in LSH:
        chunk, jobs = LSH[name]
        runs.append((f"smooth LSH chunk={chunk} n_jobs={jobs}",
                     dict(chunk_size=chunk, n_jobs=jobs)))
    for label, kw in runs:
        t = time.perf_counter()
        with cold():  # the whole computation: no facility costs from the disk cache
            rel = smooth_k_anonymity(m, k=k, n_orders=n_orders, rng=np.random.default_rng(1),
                                     **kw)
        sec = time.perf_counter() - t
        t = time.perf_counter()
        verify_release("smooth-k-anonymity", m, rel.value, {"k": k})
        ver = time.perf_counter() - t
        print(f"  {label:38s} {sec:8.2f} s  (verify {ver:.2f} s)  "
              f"clusters={rel.info['n_clusters']} chunks={rel.info['n_chunks']}  "
              f"{_scores(m, rel.value)}", flush=True)
    # what a repetition of an experiment cell pays: the facility costs (which depend on the
    # matrix and k only) come from the disk cache once the first repetition has stored them
    smooth_k_anonymity(m, k=k, n_orders=n_orders, rng=np.random.default_rng(1))
    t = time.perf_counter()
    smooth_k_anonymity(m, k=k, n_orders=n_orders, rng=np.random.default_rng(2))
    print(f"  {'smooth, facility costs cached':38s} {time.perf_counter() - t:8.2f} s",
          flush=True)
    t = time.perf_counter()
    rel = mondrian_binary(m, k=k, rng=np.random.default_rng(1))
    sec = time.perf_counter() - t
    print(f"  {'mondrian':38s} {sec:8.2f} s  classes={rel.info['n_clusters']}  "
          f"{_scores(m, rel.value)}", flush=True)


def bench_minhash(name: str, n_hashes: int, max_rows: int | None) -> None:
    m = _load(name)
    if max_rows:
        m = m[:max_rows]
    t = time.perf_counter()
    minhash_signatures(m, n_hashes, np.random.default_rng(0))
    ours = time.perf_counter() - t
    print(f"minhash on {name} ({m.shape[0]} rows, {m.nnz} entries, {n_hashes} hashes): "
          f"vectorised numpy {ours:.3f} s", flush=True)
    try:
        from datasketch import MinHash
    except ImportError:
        print("  datasketch not installed: pip install datasketch to compare")
        return
    t = time.perf_counter()
    for r in range(m.shape[0]):
        mh = MinHash(num_perm=n_hashes, seed=1)
        cols = m.indices[m.indptr[r] : m.indptr[r + 1]]
        if cols.size:
            mh.update_batch([int(c).to_bytes(4, "little") for c in cols])
        mh.hashvalues  # noqa: B018 (the signature)
    theirs = time.perf_counter() - t
    print(f"  datasketch MinHash (update_batch per row) {theirs:.3f} s: "
          f"{theirs / ours:.0f}x slower", flush=True)


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _memory_child(path: str, k: int, n_orders: int, queue) -> None:
    """In a fresh process: load one subset, warm up, reset the peak, run smooth (cold)."""
    import scipy.sparse as sp

    m = sp.csr_array(sp.load_npz(path))
    warm = (np.random.default_rng(0).random((40, 10)) < 0.3).astype(np.int8)
    smooth_k_anonymity(warm, k=2, rng=np.random.default_rng(0))
    try:
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    except OSError:
        queue.put(None)
        return
    base = _status_kb("VmRSS")
    t = time.perf_counter()
    with cold():
        smooth_k_anonymity(m, k=k, n_orders=n_orders, rng=np.random.default_rng(1))
    sec = time.perf_counter() - t
    queue.put((sec, (_status_kb("VmHWM") - base) * 1024))


def bench_memory(name: str, k: int, n_orders: int) -> None:
    import scipy.sparse as sp

    m = _load(name)
    n = m.shape[0]
    order = np.random.default_rng(0).permutation(n)
    print(f"memory of smooth k-anonymity (k={k}) on row subsets of {name} "
          f"({n} x {m.shape[1]}, {m.nnz} entries):", flush=True)
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        for frac in (0.125, 0.25, 0.5, 1.0):
            sub = m[np.sort(order[: max(k, round(frac * n))])]
            path = f"{tmp}/sub.npz"
            sp.save_npz(path, sp.csr_matrix(sub))
            queue = ctx.Queue()
            proc = ctx.Process(target=_memory_child, args=(path, k, n_orders, queue))
            proc.start()
            got = queue.get()
            proc.join()
            if got is None:
                print("  /proc/self/clear_refs is not writable here: cannot measure")
                return
            sec, added = got
            print(f"  {sub.shape[0]:8d} rows {sub.nnz:9d} entries  {sec:7.2f} s  "
                  f"peak added {added / 2**20:7.1f} MB = {added / max(sub.nnz, 1):6.0f} "
                  f"bytes/entry", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=DATASETS)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--n-orders", type=int, default=10)
    parser.add_argument("--minhash", action="store_true", help="only the min-hash comparison")
    parser.add_argument("--minhash-dataset", default="dblp_binary")
    parser.add_argument("--minhash-rows", type=int, default=None)
    parser.add_argument("--memory", metavar="DATASET", default=None,
                        help="only the memory-vs-entries check on row subsets of DATASET")
    args = parser.parse_args()
    if args.memory:
        bench_memory(args.memory, args.k, args.n_orders)
        return
    warm = (np.random.default_rng(0).random((40, 10)) < 0.3).astype(np.int8)
    smooth_k_anonymity(warm, k=2, rng=np.random.default_rng(0))
    mondrian_binary(warm, k=2, rng=np.random.default_rng(0))
    if args.minhash:
        bench_minhash(args.minhash_dataset, 8, args.minhash_rows)
    else:
        for name in args.datasets:
            bench_dataset(name, args.k, args.n_orders)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak:.0f} MB")


if __name__ == "__main__":
    main()
