"""Probes of qardaji2012's RPS: ablations that check the causes the notes of Figs 1-5 state:
causes checked, not guessed.

    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.qardaji2012 fig5 [--reps 5]
    python -m privpub.probes.qardaji2012 fig1 [--reps 20]
    python -m privpub.probes.qardaji2012 fig2c [--reps 5]
    python -m privpub.probes.qardaji2012 fig2c-mixture [--seeds 5] [--noisy --reps 5]
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.qardaji2012 fig3 [--reps 2]
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.qardaji2012 fig3-labels

Each degree-sequence probe rebuilds exactly the tree
:func:`privpub.mechanisms.rps.degree.rps_degree_sequence` builds (same calls, same random
stream: :func:`degree_rps_tree` with ``leaf="smooth"`` gives the same release for the same
seed, a test checks it) and swaps one component:

- ``leaf="true"``: the leaf counts without noise (the partition keeps its noise), so
  what remains is the error of the partition and the lower-bound summaries;
- ``leaf="removal_only"``: the paper's removal-only sensitivity reading
  (:mod:`privpub.mechanisms.rps.removal_only`; not DP);
- :func:`partition_stats`: how sharp the exponential mechanism's cuts are (largest root
  logit), how many leaves lie above the true maximum degree and what share of the nodes
  they receive, and how the smooth-sensitivity noise scale compares with the leaf counts.

Run as a module it prints the numbers the notes quote. ``fig5`` (Figs 4-5, degree
sequences; Caltech36 and Georgetown15): per Lambda and epsilon, the EMD of our RPS, of the
same trees with the *true* leaf counts (partition and lower-bound summaries only), of the
paper's removal-only reading and Hay et al.; the median ratio of the smooth-sensitivity
noise scale to the leaf count; how many leaves lie above the true maximum degree and the
share of nodes they receive; the largest root logit of the exponential mechanism. ``fig1``:
the best depth under several splits of the budget over the levels (``level_ratio``) and cut
granularities. ``fig2c``: median vs midpoint purity on our mixture and two harder ones, with
noise and noise-free. ``fig2c-mixture``: which property of the mixture flips the noise-free
order at depth 20 (one centre at a time from ours to the uneven mixture, then the public
domain alone; ``--noisy`` adds the paper-scale grid with noise). ``fig3``: how degenerate
the RPS releases of Adult are (majority-class share of the released rows) beside their CV
and train-on-release/test-on-original accuracy. ``fig3-labels``: every released row carries its
leaf's majority class (Fig. 3's notes). Seeds are 0 .. reps-1
(``numpy.random.default_rng(seed)``), not the runner's, so numbers differ from the
experiment's within its standard error. ``probes/tests/test_qardaji2012.py`` reruns the ones
on Caltech36 and Adult and a small ``fig2c-mixture``. Diagnostics only: nothing here is a mechanism.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privpub.baselines.hay_constrained import hay_degree_sequence
from privpub.data import gaussian_mixture, load_dataset
from privpub.ledger import PrivacyLedger
from privpub.mechanisms.rps.budget import PathBudget
from privpub.mechanisms.rps.degree import (
    degree_tree,
    leaf_count_summary,
    lower_bound_sequence,
    partition_calibration,
    smooth_sensitivity,
    sorted_degrees,
)
from privpub.mechanisms.rps.framework import RPSTree
from privpub.mechanisms.rps.quality import degree_quality_sensitivity
from privpub.mechanisms.rps.removal_only import RemovalOnlyLeafCount
from privpub.mechanisms.rps.table import rps_table
from privpub.metrics.distributions import emd_p2
from privpub.noise import noise_off
from privpub.types import DegreeSequence, Graph

__all__ = ["LEAVES", "DegreeRun", "degree_rps_tree", "partition_stats", "root_max_logit",
           "fig5_rows", "fig1_table", "fig2c_rows", "MIXTURE_STEPS", "mixture_table",
           "fig2c_mixture_rows", "fig2c_range_rows", "fig2c_noisy_rows", "fig3_label_rows",
           "main"]

LEAVES = ("smooth", "strict", "true", "removal_only")


class _TrueLeafCount:
    """Ablation: the exact leaf count (spends the leaf budget, draws no noise)."""

    def __call__(self, node, *, epsilon, rng, ledger):
        ledger.spend(epsilon, label="leaf count: exact (ablation, not private)")
        return float(node.rows.size)


@dataclass
class DegreeRun:
    """One probe run: the tree, the released sequence and what the probe needs."""

    tree: RPSTree
    release: DegreeSequence
    degree_bound: int
    degrees: np.ndarray
    epsilon: float
    gamma: float


def degree_rps_tree(
    graph: Graph,
    *,
    epsilon: float,
    rng: np.random.Generator,
    leaf: str = "smooth",
    depth: int = 15,
    degree_bound: str = "max_degree",
    split: float = 0.5,
    gamma: float = 4.0,
) -> DegreeRun:
    """The tree and release of :func:`~privpub.mechanisms.rps.degree.rps_degree_sequence` with the
    leaf summary ``leaf``: ``"smooth"`` (ours, ``accounting="paper"``), ``"strict"``
    (``accounting="strict"``), ``"true"`` (exact counts) or ``"removal_only"`` (the
    paper's reading). The partition is always that of ``"smooth"`` except for ``"strict"``
    (level-wide sensitivity)."""
    if leaf not in LEAVES:
        raise ValueError(f"leaf must be one of {LEAVES}, got {leaf!r}")
    degrees, lam, hist = sorted_degrees(graph, degree_bound)
    n = graph.n_nodes
    budget = PathBudget(split=split)
    accounting = "strict" if leaf == "strict" else "paper"
    sens, label = partition_calibration(accounting, lam, n)
    if leaf in ("smooth", "strict"):
        summarize = leaf_count_summary(accounting, hist=hist, degree_bound=lam, gamma=gamma,
                                       epsilon_leaf=budget.split * epsilon)
    elif leaf == "true":
        summarize = _TrueLeafCount()
    else:
        summarize = RemovalOnlyLeafCount(hist, lam, gamma)
    tree = degree_tree(degrees, lam, sensitivity=sens, label=label, summarize=summarize,
                       epsilon=epsilon, depth=depth, rng=rng, ledger=PrivacyLedger(epsilon),
                       budget=budget)
    release = DegreeSequence(lower_bound_sequence(tree, n))
    return DegreeRun(tree, release, lam, degrees, epsilon, gamma)


def root_max_logit(n_nodes: int, degree_bound: int, epsilon: float, *, depth: int = 15,
                   split: float = 0.5) -> float:
    """The largest logit ``eps_level * q / (2 Delta q)`` any cut can have at the root (Eq 4,
    ``q <= n / (4n + 2)``): with ``Lambda = n - 1`` about ``eps / 120`` (depth 15, split
    1/2), so every cut's weight is within a factor ``exp(eps / 120)`` of every other's."""
    eps_level = (1.0 - split) * epsilon / depth
    q_max = n_nodes / (4.0 * n_nodes + 2.0)
    return eps_level * q_max / (2.0 * degree_quality_sensitivity(degree_bound, n_nodes))


def partition_stats(run: DegreeRun) -> dict:
    """What the partition did and how loud the leaf noise is relative to the counts:
    ``leaves``; ``empty_leaves``; ``leaves_above_dmax`` (leaves starting above the true
    maximum degree: empty by construction) and ``share_above_dmax`` (the share of the
    ``n`` released degrees they received); ``noise_over_count``: the median over
    non-empty leaves of the smooth-sensitivity noise scale ``2 (gamma + 1) S / eps_leaf``
    divided by the leaf's true count (> 1: the noise exceeds the count)."""
    leaves = run.tree.leaves
    d_max = int(run.degrees[-1])
    lo = np.array([leaf.region.lo[0] for leaf in leaves], dtype=np.int64)
    hi = np.array([leaf.region.hi[0] for leaf in leaves], dtype=np.int64)
    counts = np.array([leaf.rows.size for leaf in leaves])
    released = np.bincount(
        np.searchsorted(lo, run.release.values, side="right") - 1, minlength=len(leaves)
    )
    above = lo > d_max
    eps_leaf = np.array([leaf.path_epsilon for leaf in leaves])  # full path budget
    spent_above = np.array([_leaf_epsilon(run, leaf) for leaf in leaves])
    hist = np.bincount(run.degrees, minlength=run.degree_bound + 1)
    beta = spent_above / (2.0 * (run.gamma + 1.0))
    s = smooth_sensitivity(hist, lo, hi, run.degree_bound, beta)
    scale = 2.0 * (run.gamma + 1.0) * s / spent_above
    nonempty = counts > 0
    return {
        "leaves": len(leaves),
        "empty_leaves": int((counts == 0).sum()),
        "leaves_above_dmax": int(above.sum()),
        "share_above_dmax": float(released[above].sum() / run.degrees.size),
        "noise_over_count": float(np.median(scale[nonempty] / counts[nonempty])),
        "path_epsilon_max": float(eps_leaf.max()),
    }


def _leaf_epsilon(run: DegreeRun, leaf) -> float:
    """The budget the leaf summary received: what its path had left."""
    spent = sum(e[1] for e in run.tree.profile_entries(leaf.profile) if "leaf" not in e[0])
    return run.epsilon - spent


# --------------------------------------------------------------------------- output
FIG5_EPSILONS = (0.1, 1, 10, 100, 1000)


def fig5_rows(graph, *, degree_bound: str, epsilons=FIG5_EPSILONS, reps: int = 5) -> list[dict]:
    """One row per epsilon: mean EMDs and partition statistics over ``reps`` seeds."""
    truth = DegreeSequence(np.sort(graph.degrees()))
    rows = []
    for eps in epsilons:
        ours, true_counts, reading, hay, stats = [], [], [], [], []
        for seed in range(reps):
            run = degree_rps_tree(graph, epsilon=eps, degree_bound=degree_bound,
                                  rng=np.random.default_rng(seed))
            ours.append(emd_p2(truth, run.release))
            stats.append(partition_stats(run))
            true_counts.append(emd_p2(truth, degree_rps_tree(
                graph, epsilon=eps, degree_bound=degree_bound, leaf="true",
                rng=np.random.default_rng(seed)).release))
            reading.append(emd_p2(truth, degree_rps_tree(
                graph, epsilon=eps, degree_bound=degree_bound, leaf="removal_only",
                rng=np.random.default_rng(seed)).release))
            hay.append(emd_p2(truth, hay_degree_sequence(
                graph, epsilon=eps, degree_bound=degree_bound,
                rng=np.random.default_rng(seed)).value))
        rows.append({
            "epsilon": eps,
            "ours": float(np.mean(ours)),
            "true_counts": float(np.mean(true_counts)),
            "reading": float(np.mean(reading)),
            "hay": float(np.mean(hay)),
            "noise_over_count": float(np.median([s["noise_over_count"] for s in stats])),
            "leaves": float(np.mean([s["leaves"] for s in stats])),
            "leaves_above_dmax": float(np.mean([s["leaves_above_dmax"] for s in stats])),
            "share_above_dmax": float(np.mean([s["share_above_dmax"] for s in stats])),
            "root_logit": root_max_logit(graph.n_nodes, int(truth.values[-1])
                                         if degree_bound == "max_degree"
                                         else graph.n_nodes - 1, eps),
        })
    return rows


def fig5(args) -> None:
    for name in args.graphs:
        graph = load_dataset(name)
        for bound in ("max_degree", "n_minus_1"):
            t0 = time.perf_counter()
            rows = fig5_rows(graph, degree_bound=bound, reps=args.reps)
            print(f"\n{name}, Lambda = {bound} ({args.reps} seeds, "
                  f"{time.perf_counter() - t0:.0f} s)")
            print("| epsilon | RPS (ours) | RPS, true leaf counts | RPS [removal-only reading] "
                  "| Hay et al. | noise scale / count | leaves above d_max | their node share "
                  "| max root logit |")
            print("|---|---|---|---|---|---|---|---|---|")
            for r in rows:
                print(f"| {r['epsilon']:g} | {r['ours']:.3g} | {r['true_counts']:.2g} | "
                      f"{r['reading']:.3g} | {r['hay']:.3g} | {r['noise_over_count']:.3g} | "
                      f"{r['leaves_above_dmax']:.0f} of {r['leaves']:.0f} | "
                      f"{r['share_above_dmax']:.0%} | {r['root_logit']:.3g} |")


def fig1_table(*, ratios=(1.0, 0.9, 0.8, 1.1), granularities=(1.0,), reps: int = 20,
               depths=(5, 10, 20, 50, 100), epsilons=(0.01, 0.05, 0.1, 0.5, 1, 2, 5),
               n: int = 10_000) -> list[dict]:
    """Mean EMD per (level_ratio, granularity, depth, epsilon) and the best depth."""
    table = load_dataset("gaussian_1d", n=n, rng=0)
    out = []
    for ratio in ratios:
        for gran in granularities:
            emd = {d: [float(np.mean([emd_p2(table, rps_table(
                table, epsilon=e, depth=d, stop_count=5, level_ratio=ratio, granularity=gran,
                rng=np.random.default_rng(s)).value) for s in range(reps)])) for e in epsilons]
                for d in depths}
            best = [min(depths, key=lambda d, i=i: emd[d][i]) for i in range(len(epsilons))]
            with noise_off():  # the same code with every noise primitive drawing zero
                free = {d: float(np.mean([emd_p2(table, rps_table(
                    table, epsilon=max(epsilons), depth=d, stop_count=5, level_ratio=ratio,
                    granularity=gran, rng=np.random.default_rng(s)).value)
                    for s in range(min(reps, 5))])) for d in depths}
            out.append({"level_ratio": ratio, "granularity": gran, "emd": emd, "best": best,
                        "epsilons": list(epsilons), "noise_free": free})
    return out


def fig1(args) -> None:
    grans = tuple(float(g) for g in args.granularity)
    for row in fig1_table(ratios=tuple(float(r) for r in args.ratios), granularities=grans,
                          reps=args.reps):
        print(f"\nlevel_ratio {row['level_ratio']:g}, granularity {row['granularity']:g} "
              f"({args.reps} seeds): EMD per epsilon {row['epsilons']}")
        for d, values in row["emd"].items():
            print(f"  depth {d:3d}: " + " ".join(f"{v:6.2f}" for v in values))
        print(f"  best depth: {row['best']}  (depth 50 best at "
              f"{sum(b == 50 for b in row['best'])} of {len(row['best'])} epsilons)")
        print("  noise-free (noise_off): " + ", ".join(
            f"depth {d}: {v:.3g}" for d, v in row["noise_free"].items()))


MIXTURES = {
    "ours (centres 20/50/80)": None,
    "uneven (30/38/100)": [[30.0] * 5, [38.0] * 5, [100.0] * 5],
    "overlapping (45/50/55)": [[45.0] * 5, [50.0] * 5, [55.0] * 5],
}


def fig2c_rows(*, reps: int = 5, epsilons=(0.1, 1, 5), depths=(10, 20), n: int = 10_000):
    rows = []
    for name, means in MIXTURES.items():
        table = gaussian_mixture(n=n, means=None if means is None else np.array(means),
                                 rng=np.random.default_rng(0))
        for depth in depths:
            row = {"mixture": name, "depth": depth, "purity": {}}
            for eps in epsilons:
                for part in ("median", "midpoint"):
                    row["purity"][(eps, part)] = float(np.mean([rps_table(
                        table, epsilon=eps, depth=depth, stop_count=5, partition=part,
                        rng=np.random.default_rng(s)).diagnostics["purity"] for s in range(reps)]))
            for part in ("median", "midpoint"):
                with noise_off():
                    row["purity"][("noise-free", part)] = float(rps_table(
                        table, epsilon=max(epsilons), depth=depth, stop_count=5,
                        partition=part, rng=np.random.default_rng(0)).diagnostics["purity"])
            rows.append(row)
    return rows


def fig2c(args) -> None:
    rows = fig2c_rows(reps=args.reps)
    keys = list(rows[0]["purity"])
    heads = sorted({k[0] for k in keys}, key=lambda e: (isinstance(e, str), e))
    print("| mixture | depth | " + " | ".join(f"ε={e} median / midpoint" if not
                                               isinstance(e, str) else f"{e} median / midpoint"
                                               for e in heads) + " |")
    print("|---|---|" + "---|" * len(heads))
    for r in rows:
        cells = [f"{r['purity'][(e, 'median')]:.3f} / {r['purity'][(e, 'midpoint')]:.3f}"
                 for e in heads]
        print(f"| {r['mixture']} | {r['depth']} | " + " | ".join(cells) + " |")
    table = gaussian_mixture(n=10_000, rng=np.random.default_rng(0))
    shown = []
    for part in ("median", "midpoint"):
        shown.append(np.mean([rps_table(table, epsilon=1.0, depth=10, stop_count=5,
                                        partition=part, attributes="random",
                                        rng=np.random.default_rng(s)).diagnostics["purity"]
                              for s in range(args.reps)]))
    print(f"\nour mixture, depth 10, epsilon 1, a random attribute per split (Sec 4.2): "
          f"median {shown[0]:.3f} / midpoint {shown[1]:.3f}")


# --------------------------------------------------------------------------- fig2c mixture
# Fig. 2(c)'s notes: which property of the mixture makes the noise-free median beat the
# midpoint at depth 20 on the uneven mixture and not on ours (subcommand fig2c-mixture).
# Our mixture and the uneven one differ only in their centres (same standard deviations,
# correlations and weights); their public domains (centres +- 5 standard deviations) follow.

#: One property at a time from ours to the uneven mixture: (centres on the diagonal, the
#: public upper bound of every attribute or None for the generator's own).
MIXTURE_STEPS = {
    "ours 20/50/80": ((20.0, 50.0, 80.0), None),
    "far centre only 20/50/100": ((20.0, 50.0, 100.0), None),
    "close pair only 30/38/80": ((30.0, 38.0, 80.0), None),
    "uneven 30/38/100": ((30.0, 38.0, 100.0), None),
    "close pair only, uneven's domain": ((30.0, 38.0, 80.0), 160.0),
    "ours, uneven's upper bound": ((20.0, 50.0, 80.0), 160.0),
}


def mixture_table(centres, *, n: int = 10_000, upper=None, rng):
    """:func:`~privpub.data.gaussian_mixture` with component ``c`` centred at ``centres[c]``
    in every coordinate (its default covariances and equal weights) and, with ``upper``,
    the public domain of every attribute widened to ``(low, upper)``: the same rows, only
    the range the midpoint halves changes."""
    import dataclasses

    from privpub.types import Schema, Table

    table = gaussian_mixture(n=n, means=np.outer(centres, np.ones(5)), rng=rng)  # 5-D
    if upper is None:
        return table
    attrs = []
    for a in table.schema.attributes:
        if a.kind == "numeric":
            if upper < a.domain[1]:
                raise ValueError(f"upper {upper} would clip {a.name} (domain {a.domain})")
            a = dataclasses.replace(a, domain=(a.domain[0], float(upper)))
        attrs.append(a)
    return Table(table.data, Schema(tuple(attrs), table.schema.class_attribute))


def _noise_free(table, depth: int, partition: str, stop_count: int = 5) -> dict:
    """Noise-free purity of one tree and, read from its leaves, the share of rows in leaves
    that still hold more than ``stop_count`` rows (the exact stop would have split them:
    the depth stopped them, or a region narrower than one cut) and those rows' purity."""
    labels = table.data[table.schema.class_attribute].cat.codes.to_numpy()
    with noise_off(), recording_leaves() as leaves:
        out = rps_table(table, epsilon=5.0, depth=depth, stop_count=stop_count,
                        partition=partition, rng=np.random.default_rng(0))
    capped = [rows for rows, _ in leaves if rows.size > stop_count]
    n_capped = sum(rows.size for rows in capped)
    majority = sum(int(np.bincount(labels[rows]).max()) for rows in capped)
    return {"purity": float(out.diagnostics["purity"]),
            "capped_share": n_capped / table.n_rows,
            "capped_purity": majority / n_capped if n_capped else float("nan")}


def fig2c_mixture_rows(steps=None, *, seeds=range(5), depths=(10, 20), n: int = 10_000):
    """Noise-free median and midpoint purity (means over the data seeds ``seeds``; with noise
    off a tree is a function of its data) for each mixture of ``steps`` (default
    :data:`MIXTURE_STEPS`), per depth: ``median``, ``midpoint``, ``diff`` (median minus
    midpoint), ``median_wins`` (seeds where the median is higher), ``upper`` (the public
    upper bound), ``cell`` (the width of the midpoint's cells after ``depth / 5`` halvings
    of each of the 5 attributes) and the midpoint's ``capped_share`` / ``capped_purity``."""
    steps = MIXTURE_STEPS if steps is None else steps
    rows = []
    for name, (centres, upper) in steps.items():
        tables = [mixture_table(centres, n=n, upper=upper, rng=np.random.default_rng(s))
                  for s in seeds]
        lo, hi = tables[0].schema["x0"].domain
        for depth in depths:
            med = [_noise_free(t, depth, "median") for t in tables]
            mid = [_noise_free(t, depth, "midpoint") for t in tables]
            a = np.array([m["purity"] for m in med])
            b = np.array([m["purity"] for m in mid])
            rows.append({
                "mixture": name, "depth": depth, "lower": lo, "upper": hi,
                "cell": (hi - lo) / 2 ** (depth // 5),
                "median": float(a.mean()), "midpoint": float(b.mean()),
                "diff": float((a - b).mean()), "median_wins": int((a > b).sum()),
                "seeds": len(tables),
                "capped_share": float(np.mean([m["capped_share"] for m in mid])),
                "capped_purity": float(np.mean([m["capped_purity"] for m in mid])),
            })
    return rows


def fig2c_range_rows(centres=(30.0, 38.0, 80.0), uppers=(140, 150, 160, 170, 180), *,
                     seeds=range(5), depth: int = 20, n: int = 10_000):
    """The midpoint's noise-free purity at ``depth`` as the public upper bound (what a far
    component stretches) grows, the rows fixed; the median's does not depend on it."""
    tables = [mixture_table(centres, n=n, rng=np.random.default_rng(s)) for s in seeds]
    median = float(np.mean([_noise_free(t, depth, "median")["purity"] for t in tables]))
    out = []
    for upper in uppers:
        mid = [_noise_free(mixture_table(centres, n=n, upper=upper,
                                         rng=np.random.default_rng(s)), depth, "midpoint")
               for s in seeds]
        out.append({"upper": float(upper), "median": median,
                    "midpoint": float(np.mean([m["purity"] for m in mid]))})
    return out


FIG2_EPSILONS = (0.01, 0.05, 0.1, 0.5, 1, 2, 5)


def fig2c_noisy_rows(names=("ours 20/50/80", "close pair only 30/38/80", "uneven 30/38/100",
                            "close pair only, uneven's domain"), *, epsilons=FIG2_EPSILONS,
                     depths=(10, 20), reps: int = 5, n: int = 10_000):
    """Median and midpoint purity with noise (means over seeds ``0 .. reps-1``; the data
    drawn with seed 0) at the experiment's paper scale, for the mixtures ``names``."""
    rows = []
    for name in names:
        centres, upper = MIXTURE_STEPS[name]
        table = mixture_table(centres, n=n, upper=upper, rng=np.random.default_rng(0))
        for depth in depths:
            purity = {(eps, part): float(np.mean([rps_table(
                table, epsilon=eps, depth=depth, stop_count=5, partition=part,
                rng=np.random.default_rng(s)).diagnostics["purity"] for s in range(reps)]))
                for eps in epsilons for part in ("median", "midpoint")}
            rows.append({"mixture": name, "depth": depth, "purity": purity})
    return rows


def fig2c_mixture(args) -> None:
    seeds = range(args.seeds)
    print(f"Noise-free, stop count 5, n = {args.n}, data seeds 0-{args.seeds - 1} (means); "
          "midpoint cells after depth/5 halvings per attribute")
    print("| mixture | domain | depth | median | midpoint | median - midpoint | median higher "
          "| midpoint cell | midpoint: rows in leaves the depth stopped (purity) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in fig2c_mixture_rows(seeds=seeds, n=args.n):
        print(f"| {r['mixture']} | [{r['lower']:g}, {r['upper']:g}] | {r['depth']} | "
              f"{r['median']:.4f} | {r['midpoint']:.4f} | {r['diff']:+.4f} | "
              f"{r['median_wins']} of {r['seeds']} | {r['cell']:.1f} | "
              f"{r['capped_share']:.0%} ({r['capped_purity']:.3f}) |")
    rows = fig2c_range_rows(seeds=seeds, n=args.n)
    print(f"\nclose pair 30/38/80, depth 20, noise-free: the public upper bound alone "
          f"(median {rows[0]['median']:.4f} whatever the bound)")
    print("| upper bound | midpoint | median - midpoint |")
    print("|---|---|---|")
    for r in rows:
        print(f"| {r['upper']:g} | {r['midpoint']:.4f} | {r['median'] - r['midpoint']:+.4f} |")
    if args.noisy:
        print(f"\nWith noise ({args.reps} seeds, data seed 0): median / midpoint per epsilon")
        print("| mixture | depth | " + " | ".join(f"ε={e:g}" for e in FIG2_EPSILONS) + " |")
        print("|---|---|" + "---|" * len(FIG2_EPSILONS))
        for r in fig2c_noisy_rows(reps=args.reps, n=args.n):
            cells = [f"{r['purity'][(e, 'median')]:.3f} / {r['purity'][(e, 'midpoint')]:.3f}"
                     for e in FIG2_EPSILONS]
            print(f"| {r['mixture']} | {r['depth']} | " + " | ".join(cells) + " |")


def fig3(args) -> None:
    from privpub.metrics.classification import accuracy_cv_nb, accuracy_transfer_nb

    adult = load_dataset("adult", attributes="qardaji2012")
    cls = adult.schema.class_attribute
    print("| RPS | epsilon | leaves | rows released | majority-class share of the release "
          "| NB, 5-fold CV on the release | NB, trained on release, tested on Adult |")
    print("|---|---|---|---|---|---|---|")
    for label, params in (("noisy count 5", {"stop_count": 5}), ("depth 50", {"stop_count": 0})):
        for eps in args.epsilons:
            leaves, rows, share, cv, transfer = [], [], [], [], []
            for seed in range(args.reps):
                out = rps_table(adult, epsilon=eps, depth=50, attributes="random",
                                quality="class", rng=np.random.default_rng(seed), **params)
                labels = out.value.data[cls]
                leaves.append(out.info["leaves"])
                rows.append(out.info["rows"])
                share.append(float(labels.value_counts(normalize=True).iloc[0])
                             if len(labels) else float("nan"))
                cv.append(accuracy_cv_nb(adult, out.value))
                transfer.append(accuracy_transfer_nb(adult, out.value))
            print(f"| {label} | {eps:g} | {np.mean(leaves):.0f} | {np.mean(rows):.0f} | "
                  f"{np.mean(share):.3f} | {np.mean(cv):.3f} | {np.mean(transfer):.3f} |")

# --------------------------------------------------------------------------- fig3 labels
# Fig. 3's notes: "every released row carries its leaf's majority class" (subcommand
# fig3-labels); probes/tests/test_qardaji2012.py reruns seed 0.

@contextlib.contextmanager
def recording_leaves():
    """Within the block, :func:`privpub.mechanisms.rps.table.rps_table` records every leaf it
    summarises as ``(original row indices, (count, class))`` in the yielded list (the leaf
    summary itself is unchanged)."""
    import privpub.mechanisms.rps.table as rt

    base = rt.TableLeafSummary
    leaves: list = []

    class Recording(base):
        def __call__(self, node, **kwargs):
            out = super().__call__(node, **kwargs)
            leaves.append((np.asarray(node.rows), out))
            return out

    rt.TableLeafSummary = Recording
    try:
        yield leaves
    finally:
        rt.TableLeafSummary = base


def relabel_by_leaf_majority(table, leaves):
    """``table`` with each row's class replaced by the class its leaf releases."""
    from privpub.types import Table

    cls = table.schema.class_attribute
    domain = np.empty(len(table.schema[cls].domain), dtype=object)
    domain[:] = list(table.schema[cls].domain)
    codes = np.full(table.n_rows, -1, dtype=np.int64)
    for rows, (_, klass) in leaves:
        codes[rows] = klass
    if (codes < 0).any():
        raise RuntimeError("some rows are in no recorded leaf")
    frame = table.data.copy()
    col = frame[cls]
    values = domain[codes]
    frame[cls] = (pd.Categorical(values, dtype=col.dtype)
                  if isinstance(col.dtype, pd.CategoricalDtype) else values)
    return Table(frame, table.schema)


def fig3_label_rows(table, *, seeds=(0,), epsilon: float = 5.0, stop_count=5) -> list[dict]:
    """Noise-free "RPS (noisy count 5)" (the runner's twin at the grid's largest epsilon):
    NB accuracy (5-fold CV; and trained on it, tested on ``table``) of the original table,
    of the release, and of the *original rows* with each class replaced by its leaf's
    majority class (one component swapped: the labels), and the share of original rows
    whose class is already their leaf's majority (``purity``)."""
    from privpub.metrics.classification import accuracy_cv_nb, accuracy_transfer_nb

    cls = table.schema.class_attribute
    out = []
    for seed in seeds:
        with noise_off(), recording_leaves() as leaves:
            rel = rps_table(table, epsilon=epsilon, depth=50, stop_count=stop_count,
                            attributes="random", quality="class",
                            rng=np.random.default_rng(seed))
        relabelled = relabel_by_leaf_majority(table, leaves)
        agree = float(np.mean(relabelled.data[cls].astype(str).to_numpy()
                              == table.data[cls].astype(str).to_numpy()))
        out.append({
            "seed": seed,
            "leaves": rel.info["leaves"],
            "purity": rel.diagnostics["purity"],
            "agree": agree,
            "cv_original": accuracy_cv_nb(table, table, rng=np.random.default_rng(seed)),
            "cv_release": accuracy_cv_nb(table, rel.value, rng=np.random.default_rng(seed)),
            "cv_relabelled": accuracy_cv_nb(table, relabelled,
                                            rng=np.random.default_rng(seed)),
            "transfer_release": accuracy_transfer_nb(table, rel.value,
                                                     rng=np.random.default_rng(seed)),
            "transfer_relabelled": accuracy_transfer_nb(table, relabelled,
                                                        rng=np.random.default_rng(seed)),
        })
    return out


def fig3_labels_main(seeds=(0, 1, 2)) -> None:
    adult = load_dataset("adult", attributes="qardaji2012")
    print("Noise-free RPS (noisy count 5), epsilon = 5, Adult; NB accuracy")
    print("| seed | leaves | rows whose class is their leaf's majority | CV: original | "
          "CV: release | CV: original rows, leaf-majority class | trained on release / on "
          "relabelled rows, tested on Adult |")
    print("|---|---|---|---|---|---|---|")
    for r in fig3_label_rows(adult, seeds=seeds):
        print(f"| {r['seed']} | {r['leaves']} | {r['agree']:.3f} | {r['cv_original']:.3f} | "
              f"{r['cv_release']:.3f} | {r['cv_relabelled']:.3f} | "
              f"{r['transfer_release']:.3f} / {r['transfer_relabelled']:.3f} |")


def _positive(text: str) -> int:
    """argparse type: an integer >= 1 (otherwise a one-line usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m privpub.probes.qardaji2012",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="probe", required=True)
    p = sub.add_parser("fig5")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--graphs", nargs="+", default=["caltech36", "georgetown15"])
    p = sub.add_parser("fig1")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--ratios", nargs="+", default=["1", "0.9", "0.8", "1.1"])
    p.add_argument("--granularity", nargs="+", default=["1"])
    p = sub.add_parser("fig2c")
    p.add_argument("--reps", type=int, default=5)
    p = sub.add_parser("fig2c-mixture")
    p.add_argument("--seeds", type=_positive, default=5, help="data seeds (noise-free tables)")
    p.add_argument("--n", type=_positive, default=10_000)
    p.add_argument("--noisy", action="store_true",
                   help="also the paper-scale grid with noise (epsilon 0.01-5, depths 10, 20)")
    p.add_argument("--reps", type=_positive, default=5, help="noise seeds with --noisy")
    p = sub.add_parser("fig3")
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.01, 0.1, 1])
    sub.add_parser("fig3-labels")
    args = parser.parse_args()
    if args.probe == "fig3-labels":
        fig3_labels_main()
        return
    {"fig5": fig5, "fig1": fig1, "fig2c": fig2c, "fig2c-mixture": fig2c_mixture,
     "fig3": fig3}[args.probe](args)


if __name__ == "__main__":
    main()
