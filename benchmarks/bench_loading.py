"""Loading speed of every real graph dataset present in the data directory.

For each graph whose files are all present, times ``load_dataset(name)``:

- **cold**: the first load in this process, including the sha256 check of its files (the
  hash cache is cleared first; the operating system's page cache may still hold the files);
- **warm**: the best of ``--repeat`` further loads, with the hash already verified (what an
  experiment pays for every load after the first);

and reports nodes, edges, the stored size of the files and the throughput in MB/s
(stored MB / seconds; the files are mostly gzip, so uncompressed throughput is higher).

    python benchmarks/bench_loading.py                      # $PRIVPUB_DATA_DIR
    python benchmarks/bench_loading.py --data-dir /path/to/data --repeat 5 --lcc
"""

from __future__ import annotations

import argparse
import time

from privpub.data import dataset_names, get_dataset_spec, load_dataset, resolve_data_dir
from privpub.data.files import clear_hash_cache
from privpub.errors import DataError
from privpub.types import Kind


def bench(name: str, *, data_dir, repeat: int, lcc: bool) -> dict:
    spec = get_dataset_spec(name)
    mb = sum(f.size for f in spec.files) / 1e6
    clear_hash_cache()
    t0 = time.perf_counter()
    g = load_dataset(name, data_dir=data_dir, lcc=lcc)
    cold = time.perf_counter() - t0
    warm = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        load_dataset(name, data_dir=data_dir, lcc=lcc)
        warm = min(warm, time.perf_counter() - t0)
    return {
        "dataset": name,
        "nodes": g.n_nodes,
        "edges": g.n_edges,
        "MB": mb,
        "cold_s": cold,
        "warm_s": warm,
        "cold_MB/s": mb / cold,
        "warm_MB/s": mb / warm,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        default=None,
        help="data directory (default: $PRIVPUB_DATA_DIR, else the user cache)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="warm loads per dataset (best of)")
    parser.add_argument("--lcc", action="store_true", help="time lcc=True loads")
    parser.add_argument("datasets", nargs="*", help="graph datasets (default: all present)")
    args = parser.parse_args(argv)

    root = resolve_data_dir(args.data_dir)
    names = args.datasets or [
        n
        for n in dataset_names()
        if get_dataset_spec(n).kind == Kind.GRAPH and not get_dataset_spec(n).synthetic
        and not get_dataset_spec(n).user_file
    ]
    present = [
        n for n in names if all((root / f.path).is_file() for f in get_dataset_spec(n).files)
    ]
    missing = sorted(set(names) - set(present))
    print(f"data dir: {root}   lcc={args.lcc}   warm = best of {args.repeat}")
    header = (
        f"{'dataset':<16}{'nodes':>10}{'edges':>12}{'MB':>8}{'cold s':>9}{'warm s':>9}"
        f"{'cold MB/s':>11}{'warm MB/s':>11}"
    )
    print(header)
    print("-" * len(header))
    total = {"MB": 0.0, "cold_s": 0.0, "warm_s": 0.0}
    for name in present:
        try:
            r = bench(name, data_dir=root, repeat=args.repeat, lcc=args.lcc)
        except DataError as exc:
            print(f"{name:<16}error: {str(exc).splitlines()[0][:120]}")
            continue
        for k in total:
            total[k] += r[k]
        print(
            f"{r['dataset']:<16}{r['nodes']:>10,}{r['edges']:>12,}{r['MB']:>8.2f}"
            f"{r['cold_s']:>9.3f}{r['warm_s']:>9.3f}{r['cold_MB/s']:>11.1f}{r['warm_MB/s']:>11.1f}"
        )
    if total["cold_s"]:
        print("-" * len(header))
        print(
            f"{'total':<16}{'':>10}{'':>12}{total['MB']:>8.2f}{total['cold_s']:>9.3f}"
            f"{total['warm_s']:>9.3f}{total['MB'] / total['cold_s']:>11.1f}"
            f"{total['MB'] / total['warm_s']:>11.1f}"
        )
    if missing:
        print(f"not present (skipped): {', '.join(missing)}")


if __name__ == "__main__":
    main()
