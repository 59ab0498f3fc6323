"""Probes behind epasto2022 Table 1's and Fig. 3a/b's notes: which reading of the paper
moves our smooth / non-smooth k-anonymity numbers on dblp and adult toward the paper's
(subcommands ``table1-dblp``, ``table1-adult``, ``fig3-nonsmooth``).

:func:`clusters` rebuilds the clustering of ``privpub.algorithms.clustering`` (distinct
rows, facility costs, Meyerson's passes over random orders, closing small facilities, the
LSH chunks and the optional split) from its own kernels, with one part swapped by a
:class:`Reading`; with the default reading it returns the shipped labels exactly (tested).
:func:`release` turns the clusters into the smooth (majority) and non-smooth (intersection)
releases. The parts a reading can swap:

- ``cost_neighbours``: the facility cost sums the distances to the ``cost_neighbours * k``
  nearest users instead of the ``k`` nearest (Appendix D: "we add a parameter beta > 1,
  set alpha = 1/beta, and define for a point the cost of the facility as [...] the
  beta k closest point[s]", beta = 2; Sec 5.3 step 2 sums over the k closest);
- ``cost_scale``: the multiplier of that sum (ours 2 alpha / (1 - alpha) = 2, Sec 5.3);
- ``tie_is_majority``: a cluster keeps an item held by exactly half of its rows;
- ``chunk_size`` / ``n_hashes``: the LSH heuristic of Appendix D (chunks of about 1e5 rows
  sorted by 8 min-hashes);
- ``split``: clusters of ``>= 2k`` rows cut into pieces of ``k..2k-1`` rows
  (Sec 5.3 step 5, the experiments' "(split)" rows);
- ``n_orders``: random orders of Meyerson's algorithm (the paper: 10).

Beside the readings of the algorithm, other constructions of the matrices
(:func:`dblp_variants`, :func:`adult_variants`): dblp's edge list read as it is stored
(each co-authorship once, as (smaller id, larger id)) or with a 1 on the diagonal; adult
with the rows that have missing values, with the test split, without education, with the
label, or with numeric attributes binned (the paper: "all categorical features"), among
them the binarisation of LIBSVM's a9a (age, fnlwgt, education-num and hours-per-week in
5 quantile bins, capital-gain and -loss zero or not, every row).

Seeds are 0 .. reps-1 (``numpy.random.default_rng(seed)``), not the runner's.
``probes/tests/test_epasto2022.py`` pins what the notes claim.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import scipy.sparse as sp

from privpub.algorithms.binary import check_binary_input, cluster_release
from privpub.algorithms.clustering import (
    _FEWEST_FIRST,
    _N_NEIGHBOURS,
    _close_small,
    _csc_points,
    _knn_sums,
    _meyerson,
    _relabel,
    distinct_rows,
    lsh_chunks,
    split_large_clusters,
)
from privpub.metrics.sets import created_fraction, jaccard, suppressed_fraction
from privpub.types import as_binary_matrix

__all__ = ["Reading", "clusters", "release", "scores", "cluster_sizes", "compare_readings",
           "dblp_variants", "adult_variants", "matrix_stats", "nonsmooth_vs_mondrian",
           "readings_for", "PAPER_TABLE1"]

#: epasto2022 Table 1 (k = 8): (Jaccard, suppressed, created) as fractions.
PAPER_TABLE1 = {
    "adult_binary": {"Non-smooth": (0.648, 0.352, 0.0), "Smooth": (0.850, 0.089, 0.072),
                     "Mondrian": (0.599, 0.401, 0.0)},
    "dblp_binary": {"Non-smooth": (0.043, 0.957, 0.0), "Smooth": (0.074, 0.925, 0.014)},
}


@dataclass(frozen=True)
class Reading:
    """One reading of epasto2022's clustering (Sec 5.3, Appendix D); the defaults are
    ours (``privpub.algorithms.clustering``)."""

    label: str = "ours"
    cost_neighbours: int = 1
    cost_scale: float = 2.0
    tie_is_majority: bool = False
    chunk_size: int | None = None
    n_hashes: int = 8
    split: bool = False
    n_orders: int = 10
    close_order: str = "fewest"


OURS = Reading()


# --------------------------------------------------------------------------- clustering
def _block(m: sp.csr_array, k: int, reading: Reading, rng) -> tuple[np.ndarray, int]:
    """Steps 0-4 on one block of rows, as ``clustering._cluster_block`` with the facility
    costs of ``reading``; returns (labels, n_clusters)."""
    points, inverse, weights = distinct_rows(m)
    indptr = points.indptr.astype(np.int64)
    indices = points.indices.astype(np.int64)
    norms = np.diff(indptr)
    n, n_cols = points.shape[0], int(points.shape[1])
    col_ptr, col_pts = _csc_points(points)
    weights = weights.astype(np.int64)
    by_norm = np.lexsort((np.arange(n), norms)).astype(np.int64)
    sums, nearest, nearest_point, neighbours = _knn_sums(
        indptr, indices, norms, weights, col_ptr, col_pts, by_norm,
        int(reading.cost_neighbours * k), _N_NEIGHBOURS)
    fcost = reading.cost_scale * sums
    best = None
    for _ in range(reading.n_orders):
        order = rng.permutation(n).astype(np.int64)
        draws = rng.random(n)
        is_open, assign, _, total = _meyerson(order, draws, indptr, indices, norms, weights,
                                              fcost, nearest, nearest_point, neighbours,
                                              col_ptr, col_pts, n_cols)
        if best is None or total < best[2]:
            best = (is_open, assign, total)
    if reading.close_order == "fewest":
        order = _FEWEST_FIRST
    else:
        order = (np.arange(n, dtype=np.int64) if reading.close_order == "index"
                 else rng.permutation(n).astype(np.int64))
    assign, _ = _close_small(best[0], best[1].copy(), indptr, indices, norms, weights,
                             neighbours, col_ptr, n_cols, int(k), order)
    return _relabel(assign[inverse])


def clusters(matrix, *, k: int, reading: Reading = OURS, rng) -> np.ndarray:
    """Cluster id of every row under ``reading``: the computation of
    :func:`privpub.algorithms.clustering.smooth_clusters` (same random streams) with the
    parts the reading names swapped."""
    m = check_binary_input(matrix)
    n = int(m.shape[0])
    if reading.chunk_size is None or reading.chunk_size >= n:
        labels, _ = _block(m, k, reading, rng)
    else:
        hash_rng, run_rng = rng.spawn(2)
        chunks = lsh_chunks(m, k=k, chunk_size=reading.chunk_size, n_hashes=reading.n_hashes,
                            rng=hash_rng)
        streams = run_rng.spawn(len(chunks))
        labels = np.empty(n, np.int64)
        offset = 0
        for rows, stream in zip(chunks, streams, strict=True):
            part, n_part = _block(m[rows], k, reading, stream)
            labels[rows] = part + offset
            offset += n_part
    if reading.split:
        labels, _ = split_large_clusters(m, labels, k, n_hashes=reading.n_hashes,
                                         rng=rng.spawn(1)[0])
    return labels


def release(matrix, labels: np.ndarray, *, rule: str, tie_is_majority: bool = False):
    """Every row released as its cluster's item set: ``"majority"`` (smooth: more than half
    of the cluster holds the item, or at least half with ``tie_is_majority``) or
    ``"intersection"`` (non-smooth: all of it)."""
    labels, n_clusters = _relabel(np.asarray(labels))
    if rule == "majority" and tie_is_majority:
        rule = "at_least_half"
    return cluster_release(check_binary_input(matrix), labels, n_clusters, rule=rule)


def scores(matrix, out) -> tuple[float, float, float]:
    """(Jaccard, suppressed, created) of a release, fractions of the original entries."""
    return (jaccard(matrix, out), suppressed_fraction(matrix, out),
            created_fraction(matrix, out))


def cluster_sizes(labels: np.ndarray, matrix=None) -> dict:
    """Number of clusters, mean cluster size, the size of the cluster of an average row,
    the largest (and its share of the rows); with ``matrix``, also ``row_distinct``: the
    number of *distinct* rows in the cluster of an average row (copies of one row cost an
    intersection nothing)."""
    labels = _relabel(np.asarray(labels))[0]
    sizes = np.bincount(labels)
    out = {"n_clusters": int(sizes.size), "mean": float(sizes.mean()),
           "row_mean": float((sizes.astype(float) ** 2).sum() / sizes.sum()),
           "largest": int(sizes.max()), "largest_share": float(sizes.max() / sizes.sum())}
    if matrix is not None:
        _, inverse, _ = distinct_rows(check_binary_input(matrix))
        pairs = np.unique(labels * (inverse.max() + 1) + inverse)
        distinct = np.bincount(pairs // (inverse.max() + 1), minlength=sizes.size)
        out["row_distinct"] = float((distinct * sizes).sum() / sizes.sum())
    return out


def compare_readings(matrix, readings, *, k: int = 8, reps: int = 1) -> list[dict]:
    """Smooth and non-smooth (Jaccard, suppressed, created), means over seeds 0..reps-1,
    and the cluster sizes of seed 0, for every reading."""
    rows = []
    for reading in readings:
        smooth, nonsmooth, sizes = [], [], None
        for seed in range(reps):
            labels = clusters(matrix, k=k, reading=reading, rng=np.random.default_rng(seed))
            smooth.append(scores(matrix, release(matrix, labels, rule="majority",
                                                 tie_is_majority=reading.tie_is_majority)))
            nonsmooth.append(scores(matrix, release(matrix, labels, rule="intersection")))
            if sizes is None:
                sizes = cluster_sizes(labels, matrix)
        rows.append({"reading": reading.label, "smooth": tuple(np.mean(smooth, axis=0)),
                     "nonsmooth": tuple(np.mean(nonsmooth, axis=0)), "sizes": sizes})
    return rows


# --------------------------------------------------------------------------- matrices
def matrix_stats(matrix) -> dict:
    """Rows, columns, entries, density, empty rows and distinct rows of a 0/1 matrix."""
    m = check_binary_input(matrix)
    n, d = m.shape
    _, _, weights = distinct_rows(m)
    return {"rows": int(n), "cols": int(d), "entries": int(m.nnz),
            "density": m.nnz / (n * d), "empty_rows": int((np.diff(m.indptr) == 0).sum()),
            "distinct_rows": int(weights.size)}


def _one_hot(columns) -> sp.csr_array:
    """Rows x one column per (attribute, observed value); a missing value (None/NaN) gives
    no 1."""
    blocks = []
    for col in columns:
        codes, uniques = pd.factorize(pd.Series(col), sort=True)
        rows = np.flatnonzero(codes >= 0)
        blocks.append(sp.csr_array((np.ones(rows.size, np.int8), (rows, codes[rows])),
                                   shape=(len(codes), len(uniques))))
    return as_binary_matrix(sp.hstack(blocks, format="csr"))


def adult_variants(names=None) -> dict:
    """Binary matrices of UCI Adult built other ways than ``adult_binary`` (every
    categorical attribute one-hot, education included, train rows without a missing
    value): the name says what changes. A ``?`` gives no 1 unless it is a value of its own.
    Columns are the values that occur (``adult_binary`` also has a column for a value that
    never occurs in its rows, which changes no number).
    """
    from privpub.data import dataset_files
    from privpub.data.tables import ADULT_CATEGORICAL, read_adult

    paths = dataset_files("adult")
    train = read_adult(paths[0])
    test = read_adult(paths[1], test=True)
    complete = train.dropna().reset_index(drop=True)
    both = pd.concat([complete, test.dropna()], ignore_index=True)
    cats = list(ADULT_CATEGORICAL)
    numeric = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
               "hours-per-week"]

    def binned(df, col, bins=10):
        values = df[col].to_numpy()
        edges = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1]))
        return np.searchsorted(edges, values, side="right")

    build = {
        "ours (train, complete rows)": lambda: _one_hot([complete[c] for c in cats]),
        "with the rows with a missing value": lambda: _one_hot([train[c] for c in cats]),
        "'?' a value of its own": lambda: _one_hot([train[c].fillna("?") for c in cats]),
        "train + test": lambda: _one_hot([both[c] for c in cats]),
        "without education": lambda: _one_hot([complete[c] for c in cats
                                               if c != "education"]),
        "with income": lambda: _one_hot([complete[c] for c in cats + ["income"]]),
        "age and hours-per-week in 4 quantile bins": lambda: _one_hot(
            [complete[c] for c in cats]
            + [binned(complete, c, 4) for c in ("age", "hours-per-week")]),
        "LIBSVM a9a-style: + 6 numeric attributes binned, all rows": lambda: _one_hot(
            [train[c] for c in cats] + [binned(train, c, 5) for c in numeric[:3]]
            + [(train[c] > 0).astype(int) for c in numeric[3:5]]
            + [binned(train, "hours-per-week", 5)]),
    }
    return {name: f() for name, f in build.items() if names is None or name in names}


def dblp_variants(names=None) -> dict:
    """com-DBLP as a binary matrix built other ways than ``dblp_binary`` (the symmetric
    co-authorship adjacency, 317,080 x 317,080): the edge list as stored (each edge once,
    row = smaller id; and transposed), and the adjacency with a 1 on the diagonal (an
    author "co-authored" with themself)."""
    from privpub.data import dataset_files, load_dataset
    from privpub.data.readers import read_edge_list

    build = {"ours (symmetric adjacency)": lambda: load_dataset("dblp_binary")}

    def as_stored():
        edges = read_edge_list(dataset_files("dblp")[0])[:, :2]
        _, inv = np.unique(edges, return_inverse=True)
        inv = inv.reshape(-1, 2)
        n = int(inv.max()) + 1
        return as_binary_matrix(sp.csr_array(
            (np.ones(len(inv), np.int8), (inv[:, 0], inv[:, 1])), shape=(n, n)))

    def with_diagonal():
        m = load_dataset("dblp_binary")
        return as_binary_matrix(m + sp.eye_array(m.shape[0], dtype=np.int8, format="csr"))

    build["edge list as stored (one direction)"] = as_stored
    build["edge list as stored, transposed"] = lambda: as_binary_matrix(as_stored().T)
    build["adjacency + diagonal"] = with_diagonal
    return {name: f() for name, f in build.items() if names is None or name in names}


# --------------------------------------------------------------------------- Fig. 3a/b
def nonsmooth_vs_mondrian(matrix, *, ks=(2, 3, 4, 5, 6, 8), reps: int = 1,
                          readings=None) -> list[dict]:
    """Per k: the Jaccard of Mondrian (the intersection of each class of its partition) and
    of non-smooth under each reading (default: ours, and our clusters cut to k..2k-1 rows),
    each with the number of distinct rows in an average row's cluster (seed 0)."""
    from privpub.baselines.mondrian_binary import mondrian_binary_partition

    m = check_binary_input(matrix)
    if readings is None:
        readings = (OURS, replace(OURS, label="split to k..2k-1", split=True))
    rows = []
    for k in ks:
        classes, _ = mondrian_binary_partition(m, k=k)
        row = {"k": k, "mondrian": (jaccard(m, release(m, classes, rule="intersection")),
                                    cluster_sizes(classes, m)["row_distinct"])}
        for reading in readings:
            js, size = [], None
            for seed in range(reps):
                labels = clusters(m, k=k, reading=reading, rng=np.random.default_rng(seed))
                js.append(jaccard(m, release(m, labels, rule="intersection")))
                if size is None:
                    size = cluster_sizes(labels, m)["row_distinct"]
            row[reading.label] = (float(np.mean(js)), size)
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- output
def readings_for(dataset: str) -> list[Reading]:
    """The readings the Table 1 probe compares, one part swapped each (the last dblp one
    combines the two that move dblp most)."""
    out = [
        OURS,
        replace(OURS, label="cost: 2k nearest (App. D, beta = 2)", cost_neighbours=2),
        replace(OURS, label="cost: k nearest x 1", cost_scale=1.0),
        replace(OURS, label="cost: k nearest x 4", cost_scale=4.0),
        replace(OURS, label="close in random order", close_order="random"),
        replace(OURS, label="close in index order", close_order="index"),
        replace(OURS, label="a tie is a majority", tie_is_majority=True),
        replace(OURS, label="1 Meyerson order", n_orders=1),
        replace(OURS, label="split to k..2k-1", split=True),
    ]
    if dataset == "dblp_binary":
        out += [replace(OURS, label="LSH chunks of 1e5, 8 hashes", chunk_size=100_000),
                replace(OURS, label="LSH chunks of 1e5 + cost 2k", chunk_size=100_000,
                        cost_neighbours=2)]
    return out


def _pct(x) -> str:
    return f"{100 * x:.1f}"


def _table1(dataset: str, variants: dict, *, k: int, reps: int, mondrian: bool) -> None:
    from privpub.baselines.mondrian_binary import mondrian_binary

    paper = PAPER_TABLE1[dataset]
    ps, pn = paper["Smooth"], paper["Non-smooth"]
    print(f"epasto2022 Table 1, {dataset}, k = {k}, seeds 0..{reps - 1}: smooth Jaccard / "
          f"suppressed / created and non-smooth Jaccard (%); paper: {_pct(ps[0])} / "
          f"{_pct(ps[1])} / {_pct(ps[2])} and {_pct(pn[0])}"
          + (f", Mondrian {_pct(paper['Mondrian'][0])}" if mondrian else "") + "\n")
    print("| matrix | rows x cols | entries | density | distinct rows |")
    print("|---|---|---|---|---|")
    stats = {name: matrix_stats(m) for name, m in variants.items()}
    for name, st in stats.items():
        print(f"| {name} | {st['rows']:,} x {st['cols']:,} | {st['entries']:,} | "
              f"{st['density']:.2g} | {st['distinct_rows']:,} |")
    print("\n| matrix | reading | smooth J / S / C | non-smooth J |"
          + (" Mondrian J |" if mondrian else "") + " clusters | row's cluster: rows / "
          "distinct rows (mean) | largest cluster (share of rows) |")
    print("|---|---|---|---|" + ("---|" if mondrian else "") + "---|---|---|")
    first = True
    for name, m in variants.items():
        readings = readings_for(dataset) if first else [OURS]
        first = False
        mon = ""
        if mondrian:
            mon = f" {_pct(jaccard(m, mondrian_binary(m, k=k, rng=None).value))} |"
        for row in compare_readings(m, readings, k=k, reps=reps):
            s, n, z = row["smooth"], row["nonsmooth"], row["sizes"]
            print(f"| {name} | {row['reading']} | {_pct(s[0])} / {_pct(s[1])} / "
                  f"{_pct(s[2])} | {_pct(n[0])} |{mon} {z['n_clusters']:,} | "
                  f"{z['row_mean']:,.0f} / {z['row_distinct']:,.0f} | {z['largest']:,} "
                  f"({z['largest_share']:.2f}) |",
                  flush=True)
            mon = " |" if mondrian else ""


def _print_fig3(args) -> None:
    from privpub.data import load_dataset

    for name in args.datasets:
        m = load_dataset(name)
        rows = nonsmooth_vs_mondrian(m, ks=args.ks, reps=args.reps)
        labels = [lab for lab in rows[0] if lab not in ("k", "mondrian")]
        print(f"\n{name}: Jaccard of Mondrian and of non-smooth (intersection of each "
              f"cluster), seeds 0..{args.reps - 1}; in brackets the number of distinct "
              "rows in an average row's cluster\n")
        print("| k | Mondrian | " + " | ".join(f"non-smooth, {lab}" for lab in labels)
              + " |")
        print("|---|---|" + "---|" * len(labels))
        for r in rows:
            mon = r["mondrian"]
            print(f"| {r['k']} | {mon[0]:.3f} ({mon[1]:.1f}) | " + " | ".join(
                f"{r[lab][0]:.3f} ({r[lab][1]:.1f})" for lab in labels) + " |",
                flush=True)


def _check(args) -> str | None:
    ks = getattr(args, "ks", None) or [args.k]
    if args.reps < 1 or any(k < 2 for k in ks):
        return "--reps must be >= 1 and every k >= 2"
    return None


def add_table1_parsers(sub) -> None:
    """Register ``table1-dblp``, ``table1-adult`` and ``fig3-nonsmooth`` on an argparse
    subparsers object."""
    p = sub.add_parser("table1-dblp", help="readings and matrices behind dblp's Table 1 row")
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--k", type=int, default=8)
    p.set_defaults(run=lambda a: _table1("dblp_binary", dblp_variants(), k=a.k, reps=a.reps,
                                         mondrian=False), check=_check)
    p = sub.add_parser("table1-adult", help="readings and matrices behind adult's row")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--k", type=int, default=8)
    p.set_defaults(run=lambda a: _table1("adult_binary", adult_variants(), k=a.k,
                                         reps=a.reps, mondrian=True), check=_check)
    p = sub.add_parser("fig3-nonsmooth", help="non-smooth vs Mondrian at k <= 8")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--datasets", nargs="+", default=["adult_binary", "playstore_binary"])
    p.add_argument("--ks", nargs="+", type=int, default=[2, 3, 4, 5, 6, 8])
    p.set_defaults(run=_print_fig3, check=_check)
