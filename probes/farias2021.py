"""Probes behind the causes farias2021 Fig. 5's notes state: the large-budget
plateaus of ShiftedLocalPrivTopk and LocalPrivTopk.

    PRIVPUB_DATA_DIR=/path/to/data python -m privpub.probes.farias2021 [--sims 20]

For every graph (Enron, Github, DBLP) and k in {5, 10, 20}, the *noise-free* selection of
each PrivTopk variant (:func:`privpub.noise.noise_off`: the same code path with zero Gumbel
noise, i.e. the limit B -> inf) and its overlap with

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
``probes/tests/test_farias2021.py`` reruns the Enron rows that the notes quote.
"""

from __future__ import annotations

import argparse

import numpy as np

from privpub.algorithms.centrality import (
    cached_ebc,
    ebc_delta,
    ebc_ranking,
    ebc_shift_penalty,
)
from privpub.algorithms.dampening import dampen, replace_delta
from privpub.data import load_dataset
from privpub.mechanisms.priv_topk import VARIANTS, priv_topk, priv_topk_scores
from privpub.noise import noise_off

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


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m privpub.probes.farias2021",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=list(GRAPHS))
    parser.add_argument("--sims", type=int, default=20)
    parser.add_argument("--budget", type=float, default=1e4)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
