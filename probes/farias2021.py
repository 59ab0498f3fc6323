"""Probes behind farias2021's notes: Fig. 5's large-budget plateaus, Fig. 6's local gain
and Table 2's PrivateSQL budget split.

    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.farias2021 [fig5-limits] [--sims 20]
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.farias2021 fig6-local-gain [--reps 10]
    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.farias2021 table2-split [--runs 10]

``fig5-limits`` (the default): for every graph (Enron, Github, DBLP) and k in {5, 10, 20},
the *noise-free* selection of each PrivTopk variant (:func:`privpub.noise.noise_off`: the
same code path with zero Gumbel noise, i.e. the limit B -> inf) and its overlap with

- the true top-k by EBC (Fig. 5's accuracy) and
- the top-k by degree,

and whether its degrees are exactly those of the degree top-k (ties in degree make the two
sets differ while their degrees agree). For LocalPrivTopk: the median degree of its
noise-free picks beside that of the true top-k, and the best and median rank of the true
top-k nodes in the dampened order (the inversion: nodes of large EBC but large local
sensitivity are dampened below small ones). One component swapped: local dampening with
Sec 4.2's delta replacement (``max_v delta(G, t, v)``,
:func:`privpub.algorithms.dampening.replace_delta`)
instead of delta^EBC. Beside these, the mean accuracy over ``--sims`` noisy runs at
B = 1e4 (the largest budget of the figure), which the noise-free limit should match.
Seeds are 0 .. sims-1 (``numpy.random.default_rng(seed)``), not the runner's.

``fig6-local-gain``: DiffPID3 with information gain, one thing swapped at a time: the class
attribute of NLTCS and ACS (ours: the last column; the authors' later code on the same files
predicts NLTCS column 13 and ACS column 10, :data:`CLASS_READINGS`), with the mean 10-fold
CV accuracy of each variant (:func:`fig6_gains`), the noise-free limit of each
(:func:`noise_free_cv`), and how much local dampening sharpens the split choice over the
exponential mechanism, per depth of the noise-free tree (:func:`sensitivity_ratios`).

``table2-split``: the PrivateSQL-style baseline with its noise scale swapped for other
budget splits and sensitivities (:data:`PSQL_SPLITS`, :func:`psql_split_accuracy`), on the
paper's 50-node samples, beside the noise scale the published accuracies would need.

``probes/tests/test_farias2021.py`` reruns the rows the notes quote.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from privpub.algorithms.centrality import (
    cached_ebc,
    ebc_delta,
    ebc_ranking,
    ebc_shift_penalty,
)
from privpub.algorithms.dampening import dampen, replace_delta
from privpub.algorithms.encoding import TableEncoder
from privpub.baselines.privatesql import path_count_view, view_sensitivity
from privpub.data import load_dataset
from privpub.mechanisms import diffpid3 as dp3
from privpub.mechanisms.priv_topk import VARIANTS, priv_topk, priv_topk_scores
from privpub.metrics.learners import accuracy_cv_learner
from privpub.noise import laplace_noise, noise_off
from privpub.types import Schema, Table

GRAPHS = ("email_enron", "musae_git", "dblp")
KS = (5, 10, 20)


def _overlap(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return len(set(a.tolist()) & set(b.tolist())) / a.size


def noise_free_topk(graph, *, k: int, variant: str) -> np.ndarray:
    """The k nodes PrivTopk picks with every noise primitive off (the B -> inf limit)."""
    with noise_off():
        out = priv_topk(graph, epsilon=1.0, k=k, variant=variant,
                        rng=np.random.default_rng(0))
    return np.asarray(out.value.items)


def replaced_local_topk(graph, *, k: int) -> np.ndarray:
    """Ablation: noise-free local dampening with delta replacement (Sec 4.2) in place of
    delta^EBC, every other component as in LocalPrivTopk."""
    ebc = cached_ebc(graph)
    _, delta_g, _ = priv_topk_scores(graph, variant="local")
    degrees = graph.degrees()
    replaced = replace_delta(lambda ts: ebc_delta(degrees, ts, global_sensitivity=delta_g),
                             graph.n_nodes, delta_g)
    scores = dampen(ebc, replaced, global_sensitivity=delta_g)
    return np.argsort(-scores, kind="stable")[:k]


def degree_unit_weight(graph) -> float:
    """Median over nodes of what one more unit of degree adds to ShiftedLocalPrivTopk's
    score (EBC - P) / Delta through the penalty alone: (P(d) - P(d + 1)) / Delta =
    1 - phi(d) / Delta, times eps / 2 in the selection's logit."""
    _, delta_g, big_d = priv_topk_scores(graph, variant="shifted")
    d = np.minimum(graph.degrees(), big_d - 1)
    pen = ebc_shift_penalty(d, big_d) - ebc_shift_penalty(d + 1, big_d)
    return float(np.median(pen / delta_g))


def fig5_limits(graph, *, ks=KS, sims: int = 0, budget: float = 1e4) -> list[dict]:
    """One row per k (see the module docstring)."""
    degrees = graph.degrees()
    ranking = np.asarray(ebc_ranking(graph).items)
    local_scores, _, _ = priv_topk_scores(graph, variant="local")
    dampened_rank = np.empty(graph.n_nodes, dtype=np.int64)
    dampened_rank[np.argsort(-local_scores, kind="stable")] = np.arange(1, graph.n_nodes + 1)
    rows = []
    for k in ks:
        true = ranking[:k]
        by_degree = np.argsort(-degrees, kind="stable")[:k]
        row = {"k": k, "ebc_vs_degree": _overlap(true, by_degree)}
        for variant in VARIANTS:
            picks = noise_free_topk(graph, k=k, variant=variant)
            row[variant] = {
                "ebc": _overlap(picks, true),
                "degree": _overlap(picks, by_degree),
                "degrees_of_degree_topk": sorted(degrees[picks].tolist())
                == sorted(degrees[by_degree].tolist()),
                "median_degree": float(np.median(degrees[picks])),
            }
            if sims:
                row[variant]["noisy"] = float(np.mean([_overlap(priv_topk(
                    graph, epsilon=budget, k=k, variant=variant,
                    rng=np.random.default_rng(s)).value.items, true) for s in range(sims)]))
        row["true_median_degree"] = float(np.median(degrees[true]))
        row["true_dampened_rank"] = (int(dampened_rank[true].min()),
                                     float(np.median(dampened_rank[true])))
        row["replaced"] = _overlap(replaced_local_topk(graph, k=k), true)
        rows.append(row)
    return rows


# ------------------------------------------------------------------------ Fig. 6
#: The class attribute of each table: ours (the last column, PrivBayes' layout) and the one
#: the authors' later code predicts on the very same files (NLTCS column 13, ACS column 10).
CLASS_READINGS = {"nltcs": ("15", "13"), "acs": ("22", "10")}
FIG6_EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 2.0)
DIFFPID3_VARIANTS = ("global", "local", "shifted")


def fig6_table(spec: str) -> Table:
    """``"table:class"`` (e.g. ``"acs:10"``) as a Table; ``adult`` is Fig. 6's (split='all',
    its 12 attributes; its class is income)."""
    name, _, cls = spec.partition(":")
    if name == "adult":
        return load_dataset("adult", split="all", attributes="farias2021")
    return with_class(load_dataset(name), cls)


def with_class(table: Table, class_attribute: str) -> Table:
    """``table`` with another of its attributes as the class."""
    if class_attribute not in table.schema.names:
        raise ValueError(f"no attribute {class_attribute!r} in the table")
    return Table(table.data, Schema(table.schema.attributes, class_attribute=class_attribute))


def cv_accuracy(table: Table, *, epsilon: float, depth: int, variant: str, reps: int,
                criterion: str = "ig", n_bins: int = 5) -> float:
    """Mean of ``reps`` 10-fold CV accuracies of DiffPID3 (seeds 0 .. reps-1 for the tree,
    1000 + r for the folds), as Fig. 6's runs."""
    accs = []
    for r in range(reps):
        tree = dp3.diffpid3(table, epsilon=epsilon, depth=depth, criterion=criterion,
                            variant=variant, n_bins=n_bins, rng=np.random.default_rng(r))
        accs.append(accuracy_cv_learner(table, tree, rng=np.random.default_rng(1000 + r)))
    return float(np.mean(accs))


def noise_free_cv(table: Table, *, depth: int, variant: str, criterion: str = "ig",
                  n_bins: int = 5) -> float:
    """10-fold CV accuracy of DiffPID3's noise-free limit (every noise primitive off: the
    split choice is the argmax of the utility, the dampened utility or the shifted score)."""
    with noise_off():
        return cv_accuracy(table, epsilon=1.0, depth=depth, variant=variant, reps=1,
                           criterion=criterion, n_bins=n_bins)


def fig6_gains(table: Table, *, depths=(2, 5), epsilons=FIG6_EPSILONS, reps: int = 10,
               n_bins: int = 5) -> list[dict]:
    """One row per (depth, epsilon): the mean CV accuracy of every variant with IG."""
    return [{"depth": d, "epsilon": e,
             **{v: cv_accuracy(table, epsilon=e, depth=d, variant=v, reps=reps, n_bins=n_bins)
                for v in DIFFPID3_VARIANTS}}
            for d in depths for e in epsilons]


def _dampened_ig(counts: np.ndarray, bound: float) -> tuple[float, float, float]:
    """(IG, its dampened value, LS^IG at distance 0) of one contingency table, by the
    shipped kernels (:mod:`privpub.mechanisms.diffpid3`)."""
    u = dp3.information_gain(counts)
    tj = counts.sum(axis=1)
    a = np.repeat(tj, counts.shape[1]).astype(np.int64)
    b = counts.ravel().astype(np.int64)
    d = dp3._dampened_scores(np.array([u]), False, a, b, np.array([0]), np.array([a.size]),
                             np.zeros(1), bound)[0]
    ls0 = float(dp3.ig_element_sensitivity(counts, [0])[0])
    return u, float(d), ls0


def sensitivity_ratios(table: Table, *, depth: int, n_bins: int = 5) -> dict[int, dict]:
    """Per depth of the noise-free ID3 tree (information gain, argmax splits): the median
    over its internal nodes of

    - ``global / local``: Delta IG over LS^IG(T, 0, A) of the best attribute, and
    - ``sharpening``: how many times larger local dampening's log-odds between the two best
      attributes are than the exponential mechanism's, ``(D(u1) - D(u2)) / ((u1 - u2) /
      Delta IG)`` (both mechanisms draw with probability proportional to ``exp(eps s / 2)``,
      ``s = D(u)`` or ``u / Delta IG``);

    and ``nodes``, the number of internal nodes at that depth.
    """
    enc = TableEncoder.from_schema(table.schema, n_bins)
    x, y = enc.encode(table)
    n_classes, sizes = len(enc.classes), enc.sizes
    bound = dp3.ig_global_sensitivity(len(y))
    per_depth: dict[int, list] = {}

    def walk(rows, attrs, level):
        if level == depth or not attrs or rows.size == 0:
            return
        scored = []
        for a in attrs:
            counts = np.zeros((sizes[a], n_classes), dtype=np.int64)
            np.add.at(counts, (x[rows, a], y[rows]), 1)
            scored.append((*_dampened_ig(counts, bound), a))
        scored.sort(key=lambda r: -r[0])
        (u1, d1, ls1, best), (u2, d2, _, _) = scored[0], scored[1] if len(scored) > 1 \
            else scored[0]
        sharp = (d1 - d2) / ((u1 - u2) / bound) if u1 > u2 else float("nan")
        per_depth.setdefault(level, []).append((bound / ls1 if ls1 > 0 else np.inf, sharp))
        rest = [a for a in attrs if a != best]
        for v in range(sizes[best]):
            walk(rows[x[rows, best] == v], rest, level + 1)

    walk(np.arange(len(y)), list(range(len(sizes))), 0)
    return {lvl: {"global / local": float(np.median([r[0] for r in rows])),
                  "sharpening": float(np.nanmedian([r[1] for r in rows])),
                  "nodes": len(rows)}
            for lvl, rows in sorted(per_depth.items())}


# ------------------------------------------------------------------------ Table 2
#: Budget splits and sensitivities for the PrivateSQL-style views, as the Laplace scale of
#: every count ``Q(u, v, c)`` given the budget ``B``, the node count ``n``, the maximum
#: degree ``D`` and the view sensitivity ``S(D)`` (:func:`view_sensitivity`); with the
#: neighbour relation under which the release is B-DP (None: it is not).
PSQL_SPLITS = {
    "B / n per view (ours)": (lambda b, n, d, s: n * s / b, "edge"),
    "B / (D + 1) per view": (lambda b, n, d, s: (d + 1) * s / b, "edge"),
    "B / n, sensitivity 1448 (paper's, D = 10)": (lambda b, n, d, s: n * 1448.0 / b,
                                                  "edge if S(D) <= 1448, i.e. D <= 32"),
    "whole B on every view ((D + 1) B-DP)": (lambda b, n, d, s: s / b, None),
    "B / n, sensitivity 1 per count": (lambda b, n, d, s: n / b, None),
    "whole B per view, sensitivity 1": (lambda b, n, d, s: 1.0 / b, None),
}
TABLE2_SAMPLES = ("email_enron_bfs", "dblp_bfs", "musae_git_bfs")


def psql_views(graph) -> tuple[np.ndarray, np.ndarray]:
    """Every node's view ``Q(., ., c)`` over the pairs ``u < v`` (rows: ``c``) and the mask
    of the pairs that do not contain ``c``, as :func:`privatesql_topk` builds them."""
    adj = graph.adjacency.toarray().astype(np.int64)
    n = adj.shape[0]
    iu = np.triu_indices(n, k=1)
    views = np.stack([path_count_view(adj, c)[iu] for c in range(n)])
    masks = np.stack([(iu[0] != c) & (iu[1] != c) for c in range(n)])
    return views, masks


def psql_topk(views, masks, *, scale: float, k: int, rng) -> np.ndarray:
    """:func:`privatesql_topk`'s release with Laplace noise of ``scale`` on every count
    (same draws, in the same order, as the shipped baseline when ``scale = n S(D) / B``)."""
    n = views.shape[0]
    ebc = np.zeros(n)
    for c in range(n):
        noisy = views[c] + laplace_noise(sensitivity=scale, epsilon=1.0, rng=rng,
                                         size=views[c].shape)
        est = np.rint(np.clip(noisy[masks[c]], 0, None))
        ebc[c] = float(np.sum(1.0 / est[est >= 1]))
    return np.lexsort((rng.random(n), -ebc))[:k]


def psql_split_accuracy(graphs, *, scale_of, budget: float, ks=(1, 2, 3), runs: int = 10
                        ) -> float:
    """Mean top-k accuracy over the graphs, k and ``runs`` runs (seeds ``[run, k]``) of the
    PrivateSQL-style release whose count noise has scale ``scale_of(B, n, D, S(D))``, or
    a float scale."""
    accs = []
    for g in graphs:
        views, masks = psql_views(g)
        truth = np.asarray(ebc_ranking(g).items)
        d = int(g.degrees().max())
        scale = scale_of if isinstance(scale_of, float) else \
            scale_of(budget, g.n_nodes, d, view_sensitivity(d))
        for k in ks:
            for r in range(runs):
                picks = psql_topk(views, masks, scale=scale, k=k,
                                  rng=np.random.default_rng([r, k]))
                accs.append(_overlap(picks, truth[:k]))
    return float(np.mean(accs))


# ------------------------------------------------------------------------ commands
def fig5_main(args) -> None:
    print("Noise-free limit (noise_off) of each PrivTopk variant: overlap with the true top-k "
          "by EBC / with the top-k by degree")
    print(f"(and, with noise, the mean accuracy at B = {args.budget:g} over {args.sims} "
          "simulations)\n")
    print("| graph | k | EBC top-k ∩ degree top-k | Global | Shifted: EBC / degree "
          "(degrees = degree top-k's?) | Shifted at B, noisy | Local: EBC / degree | "
          "Local at B, noisy | Local picks' median degree (true top-k's) | true top-k's "
          "best / median rank by dampened score | Local with delta replacement |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    weights = {}
    for name in args.graphs:
        graph = load_dataset(name)
        for r in fig5_limits(graph, sims=args.sims, budget=args.budget):
            g, s, lo = r["global"], r["shifted"], r["local"]
            print(f"| {name} | {r['k']} | {r['ebc_vs_degree']:.2f} | {g['ebc']:.2f} | "
                  f"{s['ebc']:.2f} / {s['degree']:.2f} "
                  f"({'yes' if s['degrees_of_degree_topk'] else 'no'}) | "
                  f"{s.get('noisy', float('nan')):.2f} | {lo['ebc']:.2f} / {lo['degree']:.2f} | "
                  f"{lo.get('noisy', float('nan')):.2f} | {lo['median_degree']:.0f} "
                  f"({r['true_median_degree']:.0f}) | {r['true_dampened_rank'][0]} / "
                  f"{r['true_dampened_rank'][1]:.0f} of {graph.n_nodes:,} | "
                  f"{r['replaced']:.2f} |")
        weights[name] = degree_unit_weight(graph)
    print("\nShiftedLocalPrivTopk: what one more unit of degree adds to the score through the "
          "penalty, (P(d) - P(d + 1)) / Delta, median over nodes (times eps / 2 in the logit): "
          + ", ".join(f"{n} {w:.4f}" for n, w in weights.items()))



def fig6_main(args) -> None:
    print("DiffPID3 with IG, mean 10-fold CV accuracy over "
          f"{args.reps} runs: Global / Local / Shifted, Local - Global, Shifted - Global\n")
    for spec in args.tables:
        table = fig6_table(spec)
        cls = table.schema.class_attribute
        major = table.data[cls].value_counts(normalize=True).max()
        print(f"## {spec.partition(':')[0]}, class = column {cls} (majority {major:.3f}), "
              f"{args.n_bins} bins for numeric attributes\n")
        print("| depth | eps | Global | Local | Shifted | Local - Global | Shifted - Global |")
        print("|---|---|---|---|---|---|---|")
        for r in fig6_gains(table, depths=args.depths, epsilons=args.epsilons, reps=args.reps,
                            n_bins=args.n_bins):
            g, lo, sh = r["global"], r["local"], r["shifted"]
            print(f"| {r['depth']} | {r['epsilon']:g} | {g:.3f} | {lo:.3f} | {sh:.3f} | "
                  f"{lo - g:+.3f} | {sh - g:+.3f} |", flush=True)
        print("\nNoise-free limit (noise_off), CV accuracy: " + "; ".join(
            f"depth {d}: " + " / ".join(
                f"{noise_free_cv(table, depth=d, variant=v, n_bins=args.n_bins):.3f}"
                for v in DIFFPID3_VARIANTS) for d in args.depths))
        ratios = sensitivity_ratios(table, depth=max(args.depths), n_bins=args.n_bins)
        print("Noise-free ID3 tree, per depth (median over its nodes): Delta IG / LS^IG(T, 0) "
              "of the best attribute; log-odds sharpening of local dampening over the "
              "exponential mechanism between the two best: " + "; ".join(
                  f"depth {lvl} ({v['nodes']} nodes): {v['global / local']:.1f}, "
                  f"{v['sharpening']:.1f}" for lvl, v in ratios.items()) + "\n", flush=True)


def table2_main(args) -> None:
    print(f"PrivateSQL-style top-k, mean accuracy over 10 samples, k in {{1, 2, 3}} and "
          f"{args.runs} runs, by budget split (Laplace scale per count)\n")
    graphs = {name: [load_dataset(name, sample=s) for s in range(10)] for name in args.graphs}
    for name, gs in graphs.items():
        ds = [int(g.degrees().max()) for g in gs]
        print(f"{name}: maximum degrees of the samples {ds}")
    print("\n| split | DP under | B | " + " | ".join(args.graphs) + " |")
    print("|---|---|---|" + "---|" * len(args.graphs))
    for label, (scale_of, relation) in PSQL_SPLITS.items():
        for b in args.budgets:
            accs = [psql_split_accuracy(gs, scale_of=scale_of, budget=b, runs=args.runs)
                    for gs in graphs.values()]
            print(f"| {label} | {relation or 'not DP'} | {b:g} | "
                  + " | ".join(f"{a:.3f}" for a in accs) + " |", flush=True)
    print("\nAccuracy against a fixed Laplace scale per count (whatever the split):\n")
    print("| scale | " + " | ".join(args.graphs) + " |")
    print("|---|" + "---|" * len(args.graphs))
    for scale in args.scales:
        accs = [psql_split_accuracy(gs, scale_of=float(scale), budget=1.0, runs=args.runs)
                for gs in graphs.values()]
        print(f"| {scale:g} | " + " | ".join(f"{a:.3f}" for a in accs) + " |", flush=True)


COMMANDS = ("fig5-limits", "fig6-local-gain", "table2-split")


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS + ("-h", "--help"):
        argv = ["fig5-limits", *argv]  # the default, as before the subcommands
    parser = argparse.ArgumentParser(prog="python -m privpub.probes.farias2021",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="probe", required=True)
    p = sub.add_parser("fig5-limits")
    p.add_argument("--graphs", nargs="+", default=list(GRAPHS))
    p.add_argument("--sims", type=int, default=20)
    p.add_argument("--budget", type=float, default=1e4)
    p = sub.add_parser("fig6-local-gain")
    p.add_argument("--tables", nargs="+",
                   default=[f"{t}:{c}" for t, cs in CLASS_READINGS.items() for c in cs],
                   help="table:class_column pairs, or adult (Fig. 6's Adult)")
    p.add_argument("--n-bins", type=int, default=5,
                   help="equal-width bins for numeric attributes (Adult)")
    p.add_argument("--depths", nargs="+", type=int, default=[2, 5])
    p.add_argument("--epsilons", nargs="+", type=float, default=list(FIG6_EPSILONS))
    p.add_argument("--reps", type=int, default=10)
    p = sub.add_parser("table2-split")
    p.add_argument("--graphs", nargs="+", default=list(TABLE2_SAMPLES))
    p.add_argument("--budgets", nargs="+", type=float, default=[5.0, 10.0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--scales", nargs="+", type=float, default=[0.1, 0.3, 1.0, 3.0, 10.0])
    args = parser.parse_args(argv)
    {"fig5-limits": fig5_main, "fig6-local-gain": fig6_main,
     "table2-split": table2_main}[args.probe](args)


if __name__ == "__main__":
    main()
