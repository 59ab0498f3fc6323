"""Probe behind epasto2022's trade-off note: why smooth k-anonymity suppresses *more* at
small k than at k = 24 on the stochastic block model.

    python -m privpub.probes.epasto2022 tradeoff-sbm [--reps 10] [--k 2 3 4 ...]

One run (:func:`tradeoff_run`) clusters the SBM's rows exactly as
:func:`~privpub.mechanisms.smooth_k_anonymity.smooth_k_anonymity` does
(:func:`~privpub.algorithms.clustering.smooth_clusters`, same defaults, same stream) and
releases every cluster's items by the shipped rule, a *strict* majority
(:func:`~privpub.algorithms.binary.cluster_release`; a test checks the release is the
mechanism's). On the same clusters it records, one thing at a time:

- the **cluster sizes** (:func:`size_summary`): the share of rows in clusters of 2, 3, even
  size, the mean size a row sees, the share in clusters mixing row blocks;
- the **binomial prediction** (:func:`binomial_suppression`): each 1-entry of row ``r`` in
  column block ``B`` is suppressed when too few of the cluster's other rows hold it, each
  doing so independently with ``p_in`` if it lies in row block ``B`` and ``p_out``
  otherwise -- what the cluster composition alone implies, ignoring that the clustering
  chose similar rows;
- the release with a **tie counted as a majority** (:func:`release_at_least_half`, "at
  least half"; in the probe only);
- the **split** of the original entries and of the suppression between in-block and
  out-of-block entries (:func:`suppression_split`).

:func:`suppression_by_size` pools the in-block suppression of the rows of block-pure
clusters by cluster size, beside ``P(Binomial(m - 1, p_in) < floor(m / 2))``. The SBM is
generated with the experiment runner's data seed (:func:`sbm_truth`); the mechanism's
seeds are 0 .. reps-1, not the runner's, so numbers differ from the experiment's within
its spread. ``probes/tests/test_epasto2022_tradeoff.py`` reruns a small version.
Diagnostics only.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import stats

from privpub.algorithms.binary import cluster_release
from privpub.algorithms.clustering import smooth_clusters
from privpub.data import get_dataset_spec, load_dataset
from privpub.experiments.seeding import seed_sequence
from privpub.types import as_binary_matrix

__all__ = ["DATASET", "K_GRID", "sbm_truth", "sbm_parameters", "release_at_least_half",
           "suppression_split", "binomial_suppression", "size_summary",
           "suppression_by_size", "tradeoff_run", "tradeoff_table", "add_tradeoff_parser"]

DATASET = "sbm_epasto"
#: The experiment's k grid (conf/experiment/epasto2022_tradeoff.yaml).
K_GRID = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64)


def sbm_parameters(name: str = DATASET) -> dict:
    """The generator's ``block_size``, ``p_in``, ``p_out`` (and shape) of SBM ``name``."""
    return dict(get_dataset_spec(name).defaults)


def sbm_truth(name: str = DATASET, base_seed: int = 0) -> sp.csr_array:
    """SBM ``name`` generated as the experiment runner generates it (seed derived from the
    base seed and the dataset's identity), so every run sees the experiment's matrix."""
    rng = np.random.default_rng(seed_sequence(base_seed, {"dataset": name, "options": {}}))
    return as_binary_matrix(load_dataset(name, rng=rng))


def release_at_least_half(m: sp.csr_array, labels: np.ndarray) -> sp.csr_array:
    """Every row released as the items held by *at least half* of its cluster (a tie
    counted as a majority): the one swap of (c); the shipped rule keeps strict majorities."""
    return cluster_release(m, labels, int(labels.max()) + 1, rule="at_least_half")


def _in_block(m: sp.csr_array, block_size: int) -> np.ndarray:
    """Per stored entry of ``m`` (CSR order): does it lie in its row's own block?"""
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    return rows // block_size == m.indices // block_size


def _keys(m: sp.csr_array) -> np.ndarray:
    """``row * n_cols + column`` of every stored entry, in CSR order."""
    rows = np.repeat(np.arange(m.shape[0], dtype=np.int64), np.diff(m.indptr))
    return rows * m.shape[1] + m.indices


def _kept(t: sp.csr_array, released) -> np.ndarray:
    """Per stored entry of ``t`` (CSR order): is it in ``released`` too?"""
    return np.isin(_keys(t), _keys(as_binary_matrix(released)))


def suppression_split(truth: sp.csr_array, released, block_size: int) -> dict:
    """``suppressed`` (the metric: ``|T \\ R| / |T|``), ``out_share`` (the share of the
    original entries outside their row's block), and the suppressed share of the in-block
    and of the out-of-block entries (``supp_in``, ``supp_out``), so that
    ``suppressed = (1 - out_share) supp_in + out_share supp_out``."""
    t = as_binary_matrix(truth)
    kept = _kept(t, released)
    inside = _in_block(t, block_size)
    lost = ~kept
    return {"suppressed": float(lost.mean()), "out_share": float(np.mean(~inside)),
            "supp_in": float(lost[inside].mean()), "supp_out": float(lost[~inside].mean())}


@cache
def _pmf_sum(n_p: int, p: float, n_q: int, q: float) -> np.ndarray:
    """pmf of ``Binomial(n_p, p) + Binomial(n_q, q)`` on ``0 .. n_p + n_q``."""
    return np.convolve(stats.binom.pmf(np.arange(n_p + 1), n_p, p),
                       stats.binom.pmf(np.arange(n_q + 1), n_q, q))


def _p_lost(size: int, same: int, p: float, q: float, ties_kept: bool) -> float:
    """P(an entry is suppressed) when ``same`` of the holder's ``size - 1`` cluster mates
    hold it with probability ``p`` and the others with ``q``: the holder plus ``X`` mates
    fall short of a strict majority, ``2 (1 + X) <= size`` (with ties kept: ``<``)."""
    pmf = _pmf_sum(same, p, size - 1 - same, q)
    x = np.arange(pmf.size)
    short = 2 * (1 + x) < size if ties_kept else 2 * (1 + x) <= size
    return float(pmf[short].sum())


def binomial_suppression(truth: sp.csr_array, labels: np.ndarray, *, block_size: int,
                         p_in: float, p_out: float, ties_kept: bool = False) -> dict:
    """The suppression the cluster composition predicts, as :func:`suppression_split`'s
    ``suppressed``, ``supp_in``, ``supp_out``: each 1-entry of row ``r`` in column block
    ``B`` is lost with :func:`_p_lost`, where the cluster mates in row block ``B`` hold it
    with ``p_in`` and the others with ``p_out`` (independently; the clustering's choice of
    similar rows is ignored)."""
    t = as_binary_matrix(truth)
    n, n_cols = t.shape
    row_block = np.arange(n) // block_size
    n_blocks = max(int(row_block.max()), (n_cols - 1) // block_size) + 1
    col_ind = sp.csr_array((np.ones(n_cols), (np.arange(n_cols), np.arange(n_cols)
                                                // block_size)), shape=(n_cols, n_blocks))
    ones = (t.astype(np.float64) @ col_ind).toarray()  # row x column block: 1-entries
    sizes = np.bincount(labels)
    comp = np.zeros((sizes.size, n_blocks), np.int64)  # cluster x row block: rows
    np.add.at(comp, (labels, row_block), 1)
    lost = np.zeros(2)  # in-block, out-of-block
    total = np.zeros(2)
    for r in range(n):
        c = labels[r]
        for b in np.flatnonzero(ones[r]):
            own = b == row_block[r]
            same = comp[c, b] - own  # mates in row block b
            w = ones[r, b]
            lost[0 if own else 1] += w * _p_lost(int(sizes[c]), int(same), p_in, p_out,
                                                  ties_kept)
            total[0 if own else 1] += w
    return {"suppressed": float(lost.sum() / total.sum()),
            "supp_in": float(lost[0] / total[0]), "supp_out": float(lost[1] / max(total[1], 1))}


def size_summary(labels: np.ndarray, block_size: int) -> dict:
    """The clusters seen from the rows: ``n_clusters``, ``mean_size`` (the mean size of a
    row's cluster), ``min_size``, ``max_size``, the share of rows in clusters of 2, of 3,
    of even size, and in clusters mixing row blocks (``mixed``)."""
    sizes = np.bincount(labels)
    per_row = sizes[labels]
    row_block = np.arange(labels.size) // block_size
    blocks = np.array([np.unique(row_block[labels == c]).size for c in range(sizes.size)])
    return {"n_clusters": int(sizes.size), "mean_size": float(per_row.mean()),
            "min_size": int(sizes.min()), "max_size": int(sizes.max()),
            "rows_size2": float(np.mean(per_row == 2)), "rows_size3": float(np.mean(per_row == 3)),
            "rows_even": float(np.mean(per_row % 2 == 0)),
            "mixed": float(np.mean(blocks[labels] > 1))}


def suppression_by_size(truth: sp.csr_array, labels: np.ndarray, released,
                        block_size: int) -> pd.DataFrame:
    """Per cluster size of the block-pure clusters (all rows in one row block): their
    rows' in-block 1-entries (``entries``) and how many were suppressed (``lost``)."""
    t = as_binary_matrix(truth)
    kept = _kept(t, released)
    rows = np.repeat(np.arange(t.shape[0]), np.diff(t.indptr))
    inside = _in_block(t, block_size)
    row_block = np.arange(labels.size) // block_size
    sizes = np.bincount(labels)
    pure = np.array([np.unique(row_block[labels == c]).size == 1 for c in range(sizes.size)])
    use = inside & pure[labels[rows]]
    frame = pd.DataFrame({"size": sizes[labels[rows[use]]], "lost": ~kept[use]})
    return frame.groupby("size")["lost"].agg(entries="size", lost="sum").reset_index()


def tradeoff_run(truth: sp.csr_array, *, k: int, seed: int, block_size: int, p_in: float,
                 p_out: float, by_size: bool = False):
    """One clustering of ``truth`` at ``k`` (the mechanism's, stream ``default_rng(seed)``)
    and, on it: :func:`size_summary`, the measured :func:`suppression_split` of the shipped
    release (``suppressed`` ...) and of :func:`release_at_least_half` (``half_*``), the
    :func:`binomial_suppression` of both rules (``pred_*``, ``pred_half``) and ``created``
    (the shipped release's ``|R \\ T| / |T|``). With ``by_size`` also returns
    :func:`suppression_by_size` of the shipped release."""
    clustering = smooth_clusters(truth, k=k, rng=np.random.default_rng(seed))
    labels = clustering.labels
    strict = cluster_release(truth, labels, clustering.n_clusters, rule="majority")
    half = release_at_least_half(truth, labels)
    row = {"k": k, "seed": seed, **size_summary(labels, block_size),
           **suppression_split(truth, strict, block_size),
           "created": float((as_binary_matrix(strict) - truth.multiply(strict)).sum()
                            / truth.nnz)}
    row.update({f"half_{key}": v for key, v in suppression_split(truth, half, block_size).items()
                if key != "out_share"})
    pred = binomial_suppression(truth, labels, block_size=block_size, p_in=p_in, p_out=p_out)
    row.update({f"pred_{key}": v for key, v in pred.items()})
    row["pred_half"] = binomial_suppression(truth, labels, block_size=block_size, p_in=p_in,
                                            p_out=p_out, ties_kept=True)["suppressed"]
    if by_size:
        return row, suppression_by_size(truth, labels, strict, block_size)
    return row


def tradeoff_table(truth: sp.csr_array, *, ks=K_GRID, reps: int = 10, block_size: int,
                   p_in: float, p_out: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`tradeoff_run` for seeds ``0 .. reps - 1`` at every ``k``: the per-k means
    (``suppressed_sd``: the spread over runs) and the pooled :func:`suppression_by_size`
    over every run and k, with its binomial ``P(Binomial(m - 1, p_in) < floor(m / 2))``
    (``pred``) and measured rate (``rate``)."""
    runs, pooled = [], []
    for k in ks:
        for seed in range(reps):
            row, sizes = tradeoff_run(truth, k=k, seed=seed, block_size=block_size,
                                      p_in=p_in, p_out=p_out, by_size=True)
            runs.append(row)
            pooled.append(sizes)
    runs = pd.DataFrame(runs)
    grouped = runs.groupby("k", sort=True)
    table = grouped.mean(numeric_only=True).drop(columns="seed")
    table["suppressed_sd"] = grouped["suppressed"].std().fillna(0.0)
    by_size = pd.concat(pooled).groupby("size")[["entries", "lost"]].sum().reset_index()
    by_size["rate"] = by_size["lost"] / by_size["entries"]
    by_size["pred"] = [_p_lost(int(m), int(m) - 1, p_in, p_out, False) for m in by_size["size"]]
    return table.reset_index(), by_size


def _print_tradeoff(args) -> None:
    params = sbm_parameters(args.dataset)
    b, p, q = params["block_size"], params["p_in"], params["p_out"]
    truth = sbm_truth(args.dataset)
    print(f"{args.dataset}: {truth.shape[0]} x {truth.shape[1]}, blocks of {b}, p_in {p}, "
          f"p_out {q}; {truth.nnz:,} ones (the runner's data seed)")
    table, by_size = tradeoff_table(truth, ks=args.k, reps=args.reps, block_size=b,
                                    p_in=p, p_out=q)
    print(f"smooth k-anonymity's clustering, {args.reps} runs per k (seeds 0..{args.reps - 1});"
          " strict = the shipped release (a tie is not a majority), half = a tie kept;"
          " in / out = entries inside / outside their row's block\n")
    print("| k | clusters | mean size (rows' view) | rows in size 2 / 3 / even | rows in mixed "
          "clusters | suppressed, strict (sd) | binomial prediction | in-block supp. "
          "(pred.) | out-of-block supp. (pred.) | out-of-block share | suppressed, half "
          "(pred.) | half: in / out | created, strict |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in table.itertuples():
        print(f"| {r.k} | {r.n_clusters:.1f} | {r.mean_size:.1f} | {r.rows_size2:.3f} / "
              f"{r.rows_size3:.3f} / {r.rows_even:.3f} | {r.mixed:.3f} | {r.suppressed:.3f} "
              f"({r.suppressed_sd:.3f}) | {r.pred_suppressed:.3f} | {r.supp_in:.3f} "
              f"({r.pred_supp_in:.3f}) | {r.supp_out:.3f} ({r.pred_supp_out:.3f}) | "
              f"{r.out_share:.3f} | {r.half_suppressed:.3f} ({r.pred_half:.3f}) | "
              f"{r.half_supp_in:.3f} / {r.half_supp_out:.3f} | {r.created:.3f} |")
    print("\nblock-pure clusters, pooled over every k and run: in-block suppression by "
          "cluster size m against P(Binomial(m - 1, p_in) < floor(m / 2))")
    print("| m | in-block entries | suppressed (measured) | binomial |")
    print("|---|---|---|---|")
    for r in by_size.itertuples():
        print(f"| {r.size} | {r.entries:,} | {r.rate:.3f} | {r.pred:.3f} |")


def add_tradeoff_parser(sub) -> None:
    """Register the ``tradeoff-sbm`` subcommand on an argparse subparsers object."""
    p = sub.add_parser("tradeoff-sbm",
                       help="why smooth suppresses more at small k on the SBM")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--k", nargs="+", type=int, default=list(K_GRID))
    p.add_argument("--dataset", default=DATASET, choices=("sbm_epasto", "sbm_small"))
    p.set_defaults(check=_check, run=_print_tradeoff)


def _check(args) -> str | None:
    if args.reps < 1 or any(k < 2 for k in args.k):
        return "--reps must be >= 1 and every --k >= 2"
    return None
