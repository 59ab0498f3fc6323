"""Speed of Mondrian (``baselines/mondrian.py``) against a straightforward pure-Python one.

Runs strict Mondrian on UCI Adult (train split, 30,162 rows, the 14 non-class attributes as
quasi-identifiers) at k = 10 with ours and with :func:`reference_mondrian` below (recursive,
Python lists, median by ``sorted``), checks that both find the same partition, and reports
the ratio; then ours on Adult resampled (with replacement) to 1,000,000 rows. Times are the
best of ``--repeat`` runs after one warm-up (numba compilation is cached on disk and not
counted). Needs the data directory (``PRIVPUB_DATA_DIR``).

    python benchmarks/bench_mondrian.py
    python benchmarks/bench_mondrian.py --rows 1000000 --k 10 --repeat 3
    python benchmarks/bench_mondrian.py --process     # whole processes, side by side

``--process`` compares whole processes (start-up, imports, reading Adult, Mondrian): the
reference as a pure-Python script (csv module, lists) against privpub's library call in a
fresh interpreter, each timed by ``/usr/bin/time`` (wall seconds, peak resident memory),
and two floors: a process that only imports numpy and pandas (privpub's ``Table`` is a
pandas DataFrame; pandas imports pyarrow), and one that also imports numba (the kernel).
The script codes categories by their sorted strings, ours by the schema's order, so its
class count differs slightly (2,274 vs 2,269); with the same codes the partitions are equal
(the in-process comparison above checks it).

Measured (``--process --repeat 3``, 2 cores, load about 2): reference 1.58 s / 64 MiB,
privpub 1.63 s / 268 MiB; the floors 0.43 s / 110 MiB (numpy, pandas) and 0.60 s / 165 MiB
(numpy, pandas, numba). The reference's memory cannot be met while ``Table`` is a pandas
DataFrame: importing pandas alone takes more.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privpub.baselines.mondrian import _encode, mondrian, resolve_quasi_identifiers
from privpub.data import load_dataset
from privpub.types import Table


def reference_mondrian(rows: list[tuple], widths_of, k: int) -> list[list[int]]:
    """Strict Mondrian [LDR06] in plain Python: returns the classes as lists of row indices.

    ``rows[i]`` is the tuple of integer codes of row ``i``; ``widths_of(lo, hi)`` gives the
    normalised width of every dimension. Same rules as ``privpub.baselines.mondrian``: widest
    dimension first, cut next to the median (``<= v`` or ``< v``, the allowable and more
    balanced one), next dimension if neither is allowable.
    """
    d = len(rows[0])
    out = []

    def anonymize(part):
        m = len(part)
        if m >= 2 * k:
            lo = [min(rows[i][j] for i in part) for j in range(d)]
            hi = [max(rows[i][j] for i in part) for j in range(d)]
            w = widths_of(lo, hi)
            for dim in sorted(range(d), key=lambda j: -w[j]):
                if w[dim] <= 0:
                    break
                vals = sorted(rows[i][dim] for i in part)
                med = vals[m // 2]
                below = sum(1 for v in vals if v < med)
                upto = sum(1 for v in vals if v <= med)
                ok_b, ok_u = below >= k, upto <= m - k
                if ok_u and (not ok_b or 2 * upto - m <= m - 2 * below):
                    left = [i for i in part if rows[i][dim] <= med]
                    right = [i for i in part if rows[i][dim] > med]
                elif ok_b:
                    left = [i for i in part if rows[i][dim] < med]
                    right = [i for i in part if rows[i][dim] >= med]
                else:
                    continue
                anonymize(left)
                anonymize(right)
                return
        out.append(part)

    anonymize(list(range(len(rows))))
    return out


def best_of(func, repeat: int) -> tuple[float, object]:
    func()  # warm-up (numba loads its cache, pandas and numpy warm their paths)
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - t0)
    return best, result


def resample(table: Table, n: int, seed: int = 0) -> Table:
    idx = np.random.default_rng(seed).integers(0, table.n_rows, size=n)
    return Table(table.data.iloc[idx].reset_index(drop=True), table.schema)


_REFERENCE_SCRIPT = """
import csv, gzip, sys
sys.setrecursionlimit(100000)
path, k = sys.argv[1], int(sys.argv[2])
with gzip.open(path, "rt") as f:
    data = [[v.strip() for v in row] for row in csv.reader(f) if len(row) == 15]
data = [row[:14] for row in data if "?" not in row]
cols = list(zip(*data))
codes = []
for col in cols:
    try:
        values = [float(v) for v in col]
    except ValueError:
        order = {v: i for i, v in enumerate(sorted(set(col)))}
        values = [order[v] for v in col]
    codes.append(values)
spans = [max(c) - min(c) or 1 for c in codes]
rows = list(zip(*codes))
widths = lambda lo, hi: [(b - a) / s for a, b, s in zip(lo, hi, spans)]  # noqa: E731
classes = reference_mondrian(rows, widths, k)
print(len(rows), len(classes))
"""

_OURS_SCRIPT = """
import sys
import numpy as np
from privpub.baselines.mondrian import mondrian
from privpub.data import load_dataset
release = mondrian(load_dataset("adult"), k=int(sys.argv[1]), rng=np.random.default_rng(0))
print(release.info["classes"])
"""


def _timed(command: list[str], cwd) -> tuple[float, float, str]:
    """(wall seconds, peak resident MiB, stdout) of a whole process."""
    import subprocess

    proc = subprocess.run(["/usr/bin/time", "-f", "%e %M", *command], capture_output=True,
                          text=True, cwd=cwd, check=True)
    wall, kib = proc.stderr.strip().splitlines()[-1].split()
    return float(wall), int(kib) / 1024, proc.stdout.strip()


def process_comparison(k: int, repeat: int) -> None:
    """Both as whole processes (best of ``repeat``), printed side by side."""
    import sys
    from pathlib import Path

    from privpub.data import dataset_files

    here = Path(__file__).resolve().parent
    adult = next(p for p in dataset_files("adult") if p.name.startswith("adult.data"))
    import inspect

    reference = inspect.getsource(reference_mondrian) + _REFERENCE_SCRIPT  # standalone
    runs = {
        "reference (pure Python script)": [sys.executable, "-c", reference, str(adult), str(k)],
        "privpub (library call, fresh process)": [sys.executable, "-c", _OURS_SCRIPT, str(k)],
        # the floors under ours: privpub's Table is a pandas DataFrame (pandas imports
        # pyarrow), and the kernel is compiled with numba
        "floor: import numpy, pandas": [sys.executable, "-c", "import numpy, pandas"],
        "floor: import numpy, pandas, numba": [sys.executable, "-c",
                                               "import numpy, pandas, numba"],
    }
    print(f"strict Mondrian, k = {k}, UCI Adult, whole process, best of {repeat}")
    print(f"{'process':<40} {'seconds':>8} {'peak MiB':>9}  output")
    for name, command in runs.items():
        best = min((_timed(command, here) for _ in range(repeat)), key=lambda r: r[0])
        print(f"{name:<40} {best[0]:>8.2f} {best[1]:>9.0f}  {best[2]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--process", action="store_true", help="whole processes, side by side")
    args = parser.parse_args()
    if args.process:
        process_comparison(args.k, args.repeat)
        return

    adult = load_dataset("adult")
    qis = _encode(adult, resolve_quasi_identifiers(adult.schema))
    rows = list(zip(*(q.codes.tolist() for q in qis), strict=True))

    def widths_of(lo, hi):
        return [
            float(q.width(np.array([a]), np.array([b]))[0])
            for q, a, b in zip(qis, lo, hi, strict=True)
        ]

    rng = np.random.default_rng(0)
    t_ours, release = best_of(lambda: mondrian(adult, k=args.k, rng=rng), args.repeat)
    t_ref, classes = best_of(lambda: reference_mondrian(rows, widths_of, args.k), args.repeat)
    # same partition: every reference class is exactly one set of equal released QI tuples
    qi_names = [q.name for q in qis]
    groups = release.value.data.groupby(qi_names, observed=True, sort=False).ngroup().to_numpy()
    same = len(classes) == release.info["classes"] and all(
        np.unique(groups[c]).size == 1 for c in classes
    )

    table = [
        ("Adult (30,162 rows), reference pure Python", adult.n_rows, t_ref, len(classes)),
        ("Adult (30,162 rows), ours", adult.n_rows, t_ours, release.info["classes"]),
    ]
    big = resample(adult, args.rows)
    t_big, rel_big = best_of(lambda: mondrian(big, k=args.k, rng=rng), max(1, args.repeat // 2))
    table.append(
        (f"Adult resampled to {args.rows:,} rows, ours", args.rows, t_big, rel_big.info["classes"])
    )
    t_rel, rel_relaxed = best_of(lambda: mondrian(big, k=args.k, mode="relaxed", rng=rng), 1)
    table.append(
        (
            f"Adult resampled to {args.rows:,} rows, ours (relaxed)",
            args.rows,
            t_rel,
            rel_relaxed.info["classes"],
        )
    )

    print(f"strict Mondrian, k = {args.k}, 14 quasi-identifiers, best of {args.repeat}")
    print(f"{'run':<52} {'rows':>10} {'seconds':>9} {'classes':>8}")
    for name, n, t, c in table:
        print(f"{name:<52} {n:>10,} {t:>9.3f} {c:>8,}")
    print(f"speed-up on Adult: {t_ref / t_ours:.1f}x; same partition as the reference: {same}")


if __name__ == "__main__":
    main()
